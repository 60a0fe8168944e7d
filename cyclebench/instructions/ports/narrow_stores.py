"""Stores narrower than 32 bits that come back to a line a few stores later: measured, a floor.

Some cores make a byte or word store wait when a store shortly before it wrote its cache line,
but not the store right before it, nor one far enough back.  A Zen 3 guest, ``cyclebench asm
--cpu 0``, one store to each line an iteration, lines 64 bytes apart (cycles an iteration):

| stores an iteration | lines | cycles |
| --- | ---: | ---: |
| two 32-bit | 2 | 2.00 |
| a byte and a word, one line | 1 | 1.00 |
| a byte and a word, a byte and a byte, a byte and a dword | 2 | 5.00 |
| bytes | 3 | 6.14 |
| bytes | 4 | 7.01 |
| bytes | 5 | 5.00 |

Each line's store comes back 2, 3 or 4 stores later and the iteration takes three cycles more
than its stores; five stores apart, none waits.  A Zen 1 core (docs/ports.md, "Measured on a Zen
1 core") waits for 2 and 3 stores apart, not 4.  :func:`probe` times k byte stores and k dword
stores to k lines for k from 2 to :data:`MOST`: the window is the largest k up to which every
byte loop runs more than :data:`WAIT` cycles above its dword twin, and the wait the median of
those differences (a record of type ``narrow_stores``).  The predictor then takes a block in
which a store narrower than 32 bits comes back to a line within the window (but not right after
a store to it, the loop wrapping round) at least its stores' time on distinct lines and the wait
(:class:`NarrowStores`, one of its bounds).  A file without the record, or a core with no window,
charges nothing.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

import iced_x86

from .bound import Bound
from .store_grain import LINE, store_sequence

RECORD = "narrow_stores"
MOST = 6                 # lines the probe tries at most
WAIT = 0.5               # cycles a byte loop is above its dword twin where its stores wait


def blocks(k: int) -> dict[str, list[str]]:
    """The probe's two loops for ``k`` lines: k byte stores and k dword stores, one to each line."""
    offsets = [0x200 + LINE * i for i in range(k)]
    return {f"byte {k}": [f"mov byte ptr [r14+{o:#x}], bl" for o in offsets],
            f"dword {k}": [f"mov dword ptr [r14+{o:#x}], ebx" for o in offsets]}


def window(times: dict[str, float]) -> tuple[int | None, float | None, float | None]:
    """(window, wait, cycles a store on distinct lines) from the probe's times (keyed as
    :func:`blocks`), or Nones where a byte loop of two lines does not wait."""
    k, waits = 1, []
    while f"byte {k + 1}" in times and times[f"byte {k + 1}"] - times[f"dword {k + 1}"] > WAIT:
        k += 1
        waits.append(times[f"byte {k}"] - times[f"dword {k}"])
    if not waits:
        return None, None, None
    per = statistics.median(times[f"dword {j}"] / j for j in range(2, MOST + 1) if f"dword {j}" in times)
    return k, round(statistics.median(waits), 3), round(per, 3)


def probe(session) -> dict:
    """{"type": "narrow_stores", "window", "wait", "per", "times"} measured on this CPU."""
    from .mixes import best_of_two
    times = {}
    for k in range(2, MOST + 1):
        for name, code in blocks(k).items():
            times[name] = round(best_of_two(session, code, [], 1).value, 3)
    w, wait, per = window(times)
    return {"type": RECORD, "window": w, "wait": wait, "per": per, "times": times}


def narrow(m) -> bool:
    """A memory write of fewer than 4 bytes."""
    return 0 < iced_x86.MemorySizeInfo(m.memory_size).size < 4


def waits(instructions, placed: bool, span: int) -> tuple[bool, int]:
    """(whether a narrow store comes back to its line 2 to ``span`` stores after the last store to
    it, the loop wrapping round; the stores an iteration)."""
    seq = [(m, line) for _, m, line in store_sequence(instructions, LINE, placed)]
    n = len(seq)
    for p, (m, line) in enumerate(seq):
        if not narrow(m):
            continue
        back = next((d for d in range(1, n + 1) if seq[(p - d) % n][1] == line), None)
        if back is not None and 2 <= back <= span:
            return True, n
    return False, n


@dataclass
class NarrowStores(Bound):
    """A store under 32 bits back to a line it wrote a few stores before waits (narrow_stores.py)."""
    span: int
    wait: float
    per: float
    placed: bool = False          # lines from where the start state puts the stores (store_load.py's record)

    def describe(self) -> str:
        return (f"a store under 32 bits back to its line 2 to {self.span} stores later: the stores' "
                f"{self.per:.2f} cycles each and {self.wait:.2f} cycles an iteration")

    def floor_of(self, instructions, counts: dict[str, int]) -> tuple[float, str | None]:
        hit, n = waits(instructions, self.placed, self.span)
        return (n * self.per + self.wait, "a narrow store back to its line (narrow_stores.py)") if hit else (0.0, None)


def stored(path, placed: bool = False) -> tuple[NarrowStores | None, str]:
    """(the floor of a results file's narrow_stores record, where it came from)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no probe of narrow stores"
    if not r.get("window"):
        return None, "measured by cyclebench ports: narrow stores on two lines wait no longer than dword ones"
    b = NarrowStores(int(r["window"]), float(r["wait"]), float(r["per"]), placed)
    return b, "measured by cyclebench ports: " + b.describe()
