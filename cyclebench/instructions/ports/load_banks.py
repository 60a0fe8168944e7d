"""Loads of one 8-byte bank of the L1 data cache: how many a cycle, measured, and the block's floor.

On an Emerald Rapids core (Raptor Cove, family 6 model 207) three load ports take three loads a
cycle only where no 8-byte bank (address bits 3-5) is read by more than two of them; the line
does not matter.  ``cyclebench asm --cpu 0``, six loads an iteration from ``r14`` (64-byte
aligned), each reading stable (docs/ports-findings.md, "Loads of one bank, two a cycle"):

| loads | offsets | cycles | most loads of one bank a cycle |
| --- | --- | ---: | ---: |
| ``mov r64`` | all ``0x40`` | 3.02 | 3 |
| ``mov r64`` | ``0x40, 0x48, ..., 0x68`` | 2.01 | 1 |
| ``mov r64`` | ``0x40, 0x80, ..., 0x180`` (six lines) | 3.02 | 3 |
| ``mov r64`` | ``0x40, 0x80, 0xc0`` twice | 3.02 | 3 |
| ``mov r64`` | ``0x40, 0x60, 0xa0`` twice (banks 0, 4, 4) | 2.00 | 2 |
| ``vmovups ymm`` | all ``0x40`` | 3.02 | 3 |
| ``vmovups ymm`` | ``0x40, 0x60`` alternating (banks 0-3, 4-7) | 2.00 | 2 |
| ``vmovups ymm`` | ``0x40, 0x60, 0x80`` twice | 2.00 | 2 |
| ``vmovups ymm`` | ``0x40, 0x148`` alternating (banks 0-3, 1-4) | 3.02 | 3 |
| ``vmovups xmm`` | ``0x40, 0x48, 0x50`` twice (banks 0-1, 1-2, 2-3) | 2.00 | 2 |
| ``vmovups zmm`` | four at ``0x40``; four lines | 2.00; 2.00 | |

So each bank serves two loads a cycle, and a load holds every bank its bytes span: the block's
loads of the most used bank, halved, are a floor (``vmovups zmm`` reads all eight banks, two a
cycle, as its two ports do).  :func:`probe` times six 8-byte loads on one address, on six banks
of one line and on six lines of one bank; where one address is slower than six banks, the loads
a cycle one bank serves are six over its time, and the six lines say whether the bank or the
address is what they share.  ``cyclebench ports`` keeps that as a results-file record (type
``load_banks``), and :class:`BankFloor` is the predictor's bound: a block's reads by bank (by
where ``cyclebench block``'s start state puts them, with the store-to-load probe's record, else
by address expression and displacement, each expression on its own), the busiest bank's loads
over the loads it serves.  ``cyclebench ports`` itself spreads a form's loads over the banks
(mixes._banked), so its readings time the load ports.  A core whose six loads on one address
run as fast as on six banks gets no floor, nor does a file without the record.
"""
from __future__ import annotations

from dataclasses import dataclass

import iced_x86

from ..copies import BANK, LINE
from .bound import Bound
from .store_grain import store_sequence

RECORD = "load_banks"
LABEL = "loads of one 8-byte bank (load_banks.py)"
LOADS = 6                     # loads in each of the probe's blocks
READS = (iced_x86.OpAccess.READ, iced_x86.OpAccess.COND_READ, iced_x86.OpAccess.READ_WRITE,
         iced_x86.OpAccess.READ_COND_WRITE)


def blocks() -> dict[str, list[str]]:
    """The probe's blocks: six 8-byte loads on one address, on six banks of a line, on six lines
    of one bank (offsets from r14, 64-byte aligned)."""
    def six(offsets):
        return [f"mov r{8 + k}, qword ptr [r14+{o:#x}]" for k, o in enumerate(offsets)]
    return {"one address": six([0x40] * LOADS), "banks": six([0x40 + BANK * k for k in range(LOADS)]),
            "lines": six([0x40 + LINE * k for k in range(LOADS)])}


def served(times: dict[str, float]) -> tuple[int | None, str | None]:
    """(loads a cycle one bank serves, "bank" or "address": what the loads share) from the probe's
    times; (None, None) where six loads on one address are within a quarter of a cycle and a
    tenth of six banks' time (no limit of their own)."""
    one, apart = times["one address"], times["banks"]
    if one - apart < max(0.25, 0.1 * apart):
        return None, None
    per = max(1, round(LOADS / one))
    return per, ("bank" if times["lines"] > (one + apart) / 2 else "address")


def probe(session) -> dict:
    """{"type": "load_banks", "per", "by", "times"} measured on this CPU (``session``: an
    instructions.session.Session), each block the faster of two runs (mixes.best_of_two)."""
    from .mixes import best_of_two
    times = {k: round(best_of_two(session, code, [], 1).value, 3) for k, code in blocks().items()}
    per, by = served(times)
    return {"type": RECORD, "per": per, "by": by, "times": times}


def busiest(instructions, placed: bool, by: str = "bank") -> int:
    """The most reads of one bank in an iteration (``by`` "address": of one address): a read holds
    each 8-byte bank its bytes span.  Banks are told apart by where the start state puts the reads
    (``placed``; memory.steady_state, page offset) or else by displacement within each address
    expression (segment, base, index, scale), whose registers' values are not known."""
    counts: dict[tuple, int] = {}
    for _, m, where in store_sequence(instructions, 1, placed, of=READS):
        group, offset = where[:-1], where[-1]
        size = iced_x86.MemorySizeExt.size(m.memory_size) or 1
        if by == "address":
            keys = [(group, offset)]
        else:
            first, last = (offset % LINE) // BANK, (offset % LINE + min(size, LINE) - 1) // BANK
            keys = [(group, b % (LINE // BANK)) for b in range(first, last + 1)]
        for k in keys:
            counts[k] = counts.get(k, 0) + 1
    return max(counts.values(), default=0)


@dataclass
class BankFloor(Bound):
    """The reads of the block's busiest 8-byte bank, so many a cycle (load_banks.py)."""
    per: int
    by: str = "bank"
    placed: bool = False          # banks from where the start state puts the reads (store_load.py's record)

    def describe(self) -> str:
        return f"{self.per} loads a cycle of one {'8-byte bank' if self.by == 'bank' else 'address'}"

    def floor_of(self, instructions, counts: dict[str, int]) -> tuple[float, str | None]:
        n = busiest(instructions, self.placed, self.by)
        return (n / self.per, LABEL) if n else (0.0, None)


def stored(path, placed: bool = False) -> tuple[BankFloor | None, str]:
    """(the floor of a results file's load_banks record, where it came from)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no probe of loads of one bank"
    t = r.get("times") or {}
    if not r.get("per"):
        return None, (f"measured by cyclebench ports: six loads on one address {t.get('one address')} cycles, "
                      f"on six banks {t.get('banks')}: no limit of their own")
    b = BankFloor(int(r["per"]), r.get("by") or "bank", placed)
    return b, (f"measured by cyclebench ports: six loads on one address {t.get('one address')} cycles, on six "
               f"banks {t.get('banks')}, on six lines of one bank {t.get('lines')}: " + b.describe())
