"""uops.info's own throughput experiment for a form, run here, so that ``inst --why`` can tell a
published throughput that its method reproduces on this core from one it does not reach.

uops.info (nanoBench ``tools/cpuBench/cpuBench.py``, ``getThroughputAndUops`` and
``getIndependentInstructions``) measures throughput as follows:

* **copies**: up to 16 (``maxTPRep``), none reading a register an earlier copy wrote, each memory
  operand at its own address, the widest memory operand's width after the previous copy's
  (``offset += maxMemWidth``);
* **counts**: 1, 4, 8 and all the copies (``ic``);
* **layouts** of each count: unrolled ``round(500 / ic + 49, -2)`` times without a loop
  (``TP_unrolled``, the measured figure of its table), and in a loop, ``max(1, round(10 / ic))``
  times unrolled with 1000 iterations and ten times that with 100 (``TP_loop``);
* each figure is the least over its configurations (``minTP``).

Each configuration runs here in its own runner process (:func:`configs` lists them), on
cyclebench's copies (copies.py: written registers rotate through the pool, which for the eight MMX
registers gives 16 copies where uops.info's rule stops at 4) with every memory operand apart as
uops.info's, and cyclebench's operand values; forms whose copies stay linked (flags, implicit
registers, x87) are left out, since uops.info breaks those with instructions of its own.

Zen 4 (KVM guest, TSC-calibrated, one run each): ``VPEXPANDQ (XMM, M128)`` (published 0.67 / 0.98)
reads 0.67 to 2.00 cycles a copy over the 12 configurations, 5 of them 0.97 to 1.00, and keeps
0.67, as cyclebench; ``VCVTTPD2DQ (XMM, K, M256)`` (0.67 / 0.90) 0.67 to 3.00, 4 of them 0.84 to
0.96, keeps 0.67: the same copies run at the port figure or a third to a half slower from layout to
layout and process to process (throughput.py), and uops.info's table keeps a run that read the
slower rate in every configuration.  ``PUNPCKHBW (MM, MM)`` (0.33 / 0.43) keeps 0.43, as
published, where cyclebench's copies read 0.38.  ``VPEXPANDQ_Z (XMM, K, M128)`` (0.67 / 0.37) and
``VCVTPD2DQ (XMM, M256)`` (0.67 / 0.40) keep 0.67 and read nothing below it.
"""
from __future__ import annotations

from ..errors import CycleBenchError
from .comparing import TP_TOL, agrees
from .copies import independent_copies
from .forms import Form
from .instantiate import verified
from .session import Session, form_init, value_pattern

MAX_COPIES = 16                 # maxTPRep


def layouts(ic: int) -> list[tuple[str, int, int]]:
    """(name, unroll, loop) of uops.info's three layouts for ``ic`` copies (loop 0: none)."""
    small = max(1, int(round(10.0 / ic)))
    return [("unrolled", int(round(500 / ic + 49, -2)), 0), ("loop", small, 1000), ("loop", small * 10, 100)]


def configs(n: int) -> list[tuple[int, str, int, int]]:
    """(copies, layout, unroll, loop) for ``n`` independent copies, in uops.info's order."""
    return [(ic, *lay) for ic in sorted({1, min(4, n), min(8, n), n}) for lay in layouts(ic)]


def runnable(form: Form) -> bool:
    """Copies that nothing but registers and addresses would link (uops.info adds its own
    breakers for the rest, which this experiment does not reproduce)."""
    return not independent_copies(form, 2).carried


def measure(session: Session, form: Form) -> dict | None:
    """{"configs": [{copies, layout, unroll, loop, value, stable}], "unrolled", "loop"} (the least
    of each layout, as uops.info keeps them), or None where the form's copies stay linked or
    cannot be built."""
    try:
        if not runnable(form):
            return None
        cps = independent_copies(form, MAX_COPIES, loads_apart=True)
        verified(cps.instances)
    except (CycleBenchError, ValueError, KeyError):
        return None
    insts = cps.instances
    init = form_init(form, insts[0]) + [s for s in cps.init if s not in insts[0].init]
    out = []
    for ic, layout, unroll, loop in configs(len(insts)):
        other = Session(session.measure_fn, **dict(session.kwargs, unroll=unroll, loop=loop))
        other.avx512 = session.avx512
        try:
            m = other.measure([i.text for i in insts[:ic]], init, per=ic, pattern=value_pattern(form))
        except CycleBenchError:
            continue
        session.count += 1
        out.append({"copies": ic, "layout": layout, "unroll": unroll, "loop": loop,
                    "value": m.value, "stable": m.stable})
    if not out:
        return None
    least = {k: min((c["value"] for c in out if c["layout"] == k), default=None) for k in ("unrolled", "loop")}
    return {"configs": out, **least}


REPRODUCED = "uops.info's throughput experiment"
SOME_CONFIGS = "uops.info's throughput experiment reads the published figure in some configurations"
SPANS = "uops.info's throughput experiment spans the published figure"


def variant(result: dict | None, their: float, their_bound: bool) -> list[dict]:
    """The experiment as inst --why variants: its unrolled least (uops.info's kept figure) and its
    loop least, each reproducing the published figure or not."""
    if not result:
        return []
    span = readings(result)
    out = []
    for k in ("unrolled", "loop"):
        if result.get(k) is not None:
            out.append({"variant": f"{REPRODUCED}: the least {k} configuration ({span})", "value": result[k],
                        "published_method": True, "reproduces": agrees(result[k], their, their_bound, TP_TOL)})
    return out


def readings(result: dict) -> str:
    """Its configurations' readings in short: how many, their range."""
    vals = [c["value"] for c in result["configs"]]
    return f"{len(vals)} configurations, {min(vals):.2f} to {max(vals):.2f} cycles a copy"


def cause(result: dict | None, ours: float | None, their: float | None, their_bound: bool) -> str | None:
    """What the experiment says of a throughput mismatch, or None where it did not run: its kept
    figure reproduces the published one; or it keeps ours and the published figure is among its
    configurations' readings (a slower rate of the same copies, which uops.info's run read in every
    configuration); or its configurations of several copies read both below and above it; or
    none reaches it."""
    if not result or their is None:
        return None
    kept = result.get("unrolled") if result.get("unrolled") is not None else result.get("loop")
    span = readings(result)
    if agrees(kept, their, their_bound, TP_TOL):
        return f"reproduced by an inst --why variant: {REPRODUCED} ({span}) keeps {kept:.2f}, as published"
    near = sorted((c for c in result["configs"] if c["copies"] > 1 and agrees(c["value"], their, their_bound, TP_TOL)),
                  key=lambda c: abs(c["value"] - their))
    if near and ours is not None and agrees(kept, ours, False, TP_TOL):
        c = near[0]
        return (f"{SOME_CONFIGS}: its {span} keep {kept:.2f} here, as ours; {len(near)} of them read the "
                f"published {their:g} ({c['copies']} copies, {c['layout']}, unroll {c['unroll']}: {c['value']:.2f}): "
                "the copies' rate changes with the layout and the process, and the published least is a run "
                "that read every configuration at the slower rate")
    many = [c["value"] for c in result["configs"] if c["copies"] > 1]
    if many and min(many) < their < max(many):
        return (f"{SPANS}: its configurations of 4 to {max(c['copies'] for c in result['configs'])} copies read "
                f"{min(many):.2f} to {max(many):.2f} cycles a copy here and it keeps {kept:.2f}; the published "
                f"{their:g} lies between: the copies' rate changes with the layout and the process")
    return f"{REPRODUCED} ({span}) keeps {kept:.2f}; none of its configurations reads the published {their:g}"
