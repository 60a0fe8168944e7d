"""Throughput copies of gathers and scatters: where their mask set-ups go, and the copies without.

A gather or scatter clears its mask, so each copy's text sets it first (vsib.setup).  Where the
set-up runs changes the rate by more than the set-up's own cost: on Zen 4, four ``vgatherqpd ymm``
copies read 5.00 cycles a copy with a ``vpcmpeqd`` before each, 5.00 with an unrelated ``vpor``
there instead, 4.25 with the four set-ups ahead of the four copies, 4.29 with seven (seven zeroed
masks: 4.32, as full ones), and 4.00 with no set-up at all (then only the first copy moves any
lane).  :func:`setups_ahead` measures the copies with every set-up ahead of them all (throughput.py
keeps the faster layout); :func:`mask_unset` measures them with none, as uops.info's copies run,
shown beside the figure and never reported as it.
"""
from __future__ import annotations

from ..errors import CycleBenchError
from .copies import written_registers
from .forms import Form
from .instantiate import Instance, register_id
from .operands import full_register
from .session import Measured, Session


def ahead_count(form: Form, instances: list[Instance]) -> int:
    """How many of ``instances`` (each text its mask set-up lines, then the instruction) can run
    with every set-up moved ahead of all the copies: the longest prefix in which no copy writes or
    sets a register that a later copy's set-up sets (the AVX-512 forms' copies all set k1: 1; the
    AVX2 forms' masks rotate apart until the pool wraps: 7 of 15 ``vgatherqpd ymm`` copies)."""
    taken: set[int] = set()
    for k, inst in enumerate(instances):
        sets = {full_register(register_id(line.split(None, 1)[1].split(",")[0]))
                for line in inst.text.splitlines()[:-1]}
        if not sets or sets & taken:
            return k
        taken |= sets | written_registers(form, inst)
    return len(instances)


def setups_ahead(session: Session, form: Form, instances: list[Instance], pre: list[str], init: list[str],
                 pattern: int) -> tuple[Measured | None, int]:
    """(measurement, copies) of the first :func:`ahead_count` copies with all their set-ups first,
    then the copies (each after ``pre``, its dependency breakers); (None, k) when fewer than two
    copies allow it or the run fails."""
    k = ahead_count(form, instances)
    if k < 2:
        return None, k
    kept = instances[:k]
    code = [s for inst in kept for s in inst.text.splitlines()[:-1]] + \
           [line for inst in kept for line in pre + [inst.text.splitlines()[-1]]]
    try:
        return session.measure(code, init, per=k, pattern=pattern), k
    except CycleBenchError:
        return None, k


def mask_unset(session: Session, instances: list[Instance], pre: list[str], init: list[str], pattern: int) -> dict:
    """The copies without their mask set-up, as uops.info's copies run: the form clears its mask
    as the lanes complete and nothing sets it again, so after the first copy each one loads or
    stores no lane (Zen 4: ``vpgatherdd xmm`` 5.00 cycles a copy with the mask set to all ones
    before each, 5.00 with it zeroed before each, 4.00 with no set-up, uops.info's 4.00)."""
    code = [line for inst in instances for line in pre + [inst.text.splitlines()[-1]]]
    out = {"value": None, "code": "\n".join(code), "stable": None, "error": None}
    try:
        m = session.measure(code, init, per=len(instances), pattern=pattern)
    except CycleBenchError as e:
        out["error"] = e.cause
        return out
    out.update(value=m.value, stable=m.stable, uncertainty=m.uncertainty)
    return out
