"""Which unit of a vector pipe pair a µop takes: dealt in turn at dispatch, not chosen at issue.

Zen 4 deals the vector µops of a block out in program order, one after the other, whatever pipes
they go to (docs/ports-findings.md, "The scheduling simulation"): a µop held to a pair of pipes (FP23)
takes the pipe of its turn, and two steps that become ready together and were dealt one pipe
wait for each other, the older first.  ``addss xmm1, xmm2; ucomiss xmm1, xmm2`` runs 4 cycles an
iteration for its 3-cycle chain, and 3 again with one more vector µop anywhere in the block.

Read from the model and the instructions' operand shapes, never from a list of forms:

* **the vector pipe resources** are those of several units that some register-only vector form
  (an XMM, YMM, ZMM or mask operand, no memory one) holds whole and no register-only form
  without a vector operand does; of them, the **pairs** (two units) are dealt;
* **an instruction is dealt** one µop where its form uses half a unit or more of a vector pipe
  resource of the most units (a compute µop: Zen 4's four FP pipes), and one more where it
  reads a vector register and writes a general register, the flags or memory (a transfer or a
  store's data, published on FP45 on Zen 4: ``ucomiss`` is dealt two, its compare first); a
  form the model does not know computes where it writes a vector register from registers.  A
  zero idiom counts as its form does; an eliminated move and a plain load are dealt none;
* **a form that holds a pair longer than one µop** (more than one unit-cycle and not one:
  ``cvtsi2ss xmm1, rbx``, 1.08 cycles of FP23 a copy alone) still has its compute µop dealt the
  pipe of its turn; the simulation keeps the rest of its usage fluid;
* **a form the sequencer issues** (held.py: slower alone than every resource it uses by a whole
  cycle) advances the turn as another form would, but its step takes no pipe by it: its µops come
  from a sequence, not from the block's turns, so it does not wait behind an older consumer of its
  last step dealt that pipe (Zen 4, `cyclebench asm --cpu 1`, cycles an iteration, the model's
  figure by its turn in brackets: ``mpsadbw xmm1, [m], 2; ucomiss xmm1, xmm2`` 5.22 [6.00], with
  one, two more ``mulss`` on other registers 5.25 [5.00], 5.31 [6.00], ``addss xmm3, xmm1`` for the
  compare 5.34 [5.00], with one ``mulss`` 5.45 [6.00]: its 5-cycle chain at any parity; while
  ``addss xmm1, xmm2; ucomiss xmm1, xmm2`` twice reads 8.00, with ``mulss`` 6.86 and with an
  ``mpsadbw xmm4, [m], 2`` on no chain 6.96: its µops count in the turn).

Whether the core deals is measured, not looked up: :func:`probe` times two chain steps that
become ready in one cycle on one pipe pair (``addss xmm1, xmm2; addss xmm3, xmm1``) alone and with
one more vector µop on neither chain (``mulss xmm5, xmm6``).  A core that picks the free pipe runs
both at the chain's pace; one that deals in turn runs the second a cycle later (Zen 4: 3.00 and
4.00 cycles an iteration).  ``cyclebench ports`` keeps the result as a results-file record (type
``dealing``); a file without it, or a core that did not deal, keeps the simulation's unit with the
fewest waiting.
"""
from __future__ import annotations

import re
from typing import NamedTuple

import iced_x86

from .infer import MEMORY
from .model import USED, Model

RECORD = "dealing"
CHAIN = ["addss xmm1, xmm2", "addss xmm3, xmm1"]   # two steps ready in one cycle, one pipe pair
OTHER = ["mulss xmm5, xmm6"]                        # one vector µop more, on neither chain
LATE = 0.5          # cycles: a dealt core runs the second step a whole cycle later (Zen 4: 1.00)
VECTOR = re.compile(r"\b(XMM|YMM|ZMM|K)\b")
_R = iced_x86.OpAccess
READS = (_R.READ, _R.READ_WRITE, _R.COND_READ, _R.READ_COND_WRITE)
WRITES = (_R.WRITE, _R.READ_WRITE, _R.COND_WRITE, _R.READ_COND_WRITE)


class Plan(NamedTuple):
    """What :func:`plan` gives the simulation, per instruction where a list."""
    dealt: list[int]              # the vector µops it is dealt, its compute µop first
    pairs: set[str]               # the pair resources whose unit a dealt µop's turn decides
    longer: list[set[str]]        # the pairs its form holds more than one unit-cycle
    sequenced: tuple[bool, ...] = ()   # its form is issued by the sequencer: its step takes no pipe by turn


def deals(alone: float, beside: float) -> bool:
    """Whether the probe's two readings (cycles an iteration) show dealing in turn."""
    return beside - alone >= LATE


def probe(session) -> dict:
    """The probe measured on this CPU (``session``: an instructions.session.Session), as the record
    {"type": "dealing", "deals", "times"}."""
    alone = session.measure(CHAIN, []).value
    beside = session.measure(CHAIN + OTHER, []).value
    return {"type": RECORD, "deals": deals(alone, beside),
            "times": {"chain": round(alone, 3), "chain and one more": round(beside, 3)}}


def stored(path) -> tuple[bool, str]:
    """(whether the results file's core deals in turn, where that came from)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return False, "not measured: the model file has no dealing probe"
    t = r.get("times") or {}
    return bool(r.get("deals")), (f"measured by cyclebench ports: two chain steps {t.get('chain')} cycles, "
                                  f"with one more vector µop {t.get('chain and one more')}")


def vector_form(form: str) -> bool:
    """Whether a form's name gives it a vector or mask register operand."""
    return bool(VECTOR.search(form[form.find("("):] if "(" in form else ""))


def _vec(reg) -> bool:
    X = iced_x86.RegisterExt
    return X.is_xmm(reg) or X.is_ymm(reg) or X.is_zmm(reg)


def pipes(model: Model, discrete: dict[str, int], whole) -> set[str]:
    """The vector pipe resources (see the module docstring); ``whole(r, u)``: whether a usage
    ``u`` of ``r`` holds one unit (simulate.Units.whole)."""
    out = set()
    for r, k in discrete.items():
        holders = [f for f, use in model.usage.items() if use.get(r, 0.0) >= USED and whole(r, use[r])]
        alone = [f for f in holders if not MEMORY.search(f)]
        if k >= 2 and any(map(vector_form, alone)) and all(map(vector_form, alone)):
            out.add(r)
    return out


def _transfers(info) -> bool:
    """Reads a vector register and writes a general register, the flags or memory."""
    used = info.used_registers()
    reads = any(_vec(u.register) and u.access in READS for u in used)
    writes = any(iced_x86.RegisterExt.is_gpr(u.register) and u.access in WRITES for u in used) or \
        any(m.access in WRITES for m in info.used_memory())
    return reads and writes


def _computes(info) -> bool:
    """Writes a vector register and reads some register that is not an address's."""
    addr = {r for m in info.used_memory() for r in (m.base, m.index)}
    used = info.used_registers()
    return any(_vec(u.register) and u.access in WRITES for u in used) and \
        any(u.register not in addr and u.access in READS for u in used)


def plan(instructions: list[iced_x86.Instruction], forms: list[str], model: Model,
         discrete: dict[str, int], whole, sequenced=frozenset()) -> Plan:
    """The µops each instruction is dealt, the pairs dealt, the pairs a form holds longer (its
    compute µop dealt all the same) and which are of a ``sequenced`` form (the names held.holds
    gives), or no pairs where the model has none."""
    vec = pipes(model, discrete, whole)
    pairs = {r for r in vec if discrete[r] == 2}
    if not pairs:
        return Plan([0] * len(forms), set(), [set() for _ in forms])
    counts = uops(instructions, forms, model, discrete, vec)
    use = [model.usage.get(f, {}) for f in forms]
    return Plan(counts, pairs, [{r for r in pairs if n and u.get(r, 0.0) * discrete[r] > 1 and not whole(r, u[r])}
                                for n, u in zip(counts, use)], tuple(f in sequenced for f in forms))


def uops(instructions: list[iced_x86.Instruction], forms: list[str], model: Model,
         discrete: dict[str, int], vec: set[str]) -> list[int]:
    """Per instruction, the vector µops it is dealt (see the module docstring; ``vec``: the vector
    pipe resources, :func:`pipes`)."""
    widest = {r for r in vec if discrete[r] == max(discrete[v] for v in vec)} if vec else set()
    factory = iced_x86.InstructionInfoFactory()
    counts = []
    for ins, f in zip(instructions, forms):
        info = factory.info(ins)
        flags = bool(ins.rflags_modified) and any(_vec(u.register) and u.access in READS
                                                  for u in info.used_registers())
        computes = any(model.usage[f].get(r, 0.0) * discrete[r] >= 0.5 for r in widest) \
            if f in model.usage else _computes(info)
        counts.append(int(computes) + int(_transfers(info) or flags))
    return counts
