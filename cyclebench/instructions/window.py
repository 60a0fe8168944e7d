"""Whether a form's throughput copies are held back by how many can be in flight, not by ports.

Some figures sit off the port grid however the copies are counted, placed or re-run (Zen 4 here:
``vpcmpd k, xmm, [m]`` and every other form that writes a mask register from memory read 0.55 to
0.63 cycles a copy, changing over minutes, where the register forms and the same loads into vector
registers read 0.50, as uops.info publishes for all of them).  The probe puts N copies behind a
block that holds retirement back: ``BLOCK`` dependent ``imul`` (3 cycles each on every x86 core
of the last decade), N chosen so that the copies' own figure needs at most ``FILL`` of the
block.  If the copies only needed the ports, the group would take as long as the block; if it
takes longer, fewer than N of them fit in flight behind the block, and their rate is set by that
capacity and by how long each stays in flight (measured: 64 ``vpcmpd k, xmm1, [m]`` behind 16
``imul`` 71 cycles, 64 ``vpcmpd k, xmm1, xmm2`` 63, which still run 0.50 a copy: a copy from
memory stays in flight a load's latency longer; 64 ``vpcmpeqd xmm, xmm1, [m]`` 48).  The block
alone is measured too. The same copies do reach 0.50 now and then: ``vptestmq k, ymm1, [m]`` read
0.50 in 5 of about 80 runner processes (0.58 or 0.61 in the others, whatever the copy count, the
loop and unroll, the load addresses, the operand values or the code's alignment). uops.info's own
copies of ``kmovw k, [m16]`` (seven, k1-k7, two bytes apart, unrolled or in its two loops) read as
ours, 0.58. A process keeps its rate through 400 repetitions; rates change between processes in
steps (39 processes of those copies: 0.50 twice, 0.55 9 times, 0.58 28 times; ``vptestmw k, ymm1,
[m]`` 0.50 to 0.67) and runs of processes one after the other often keep one step for seconds, with
or without address-space randomisation; the load latency does not move with them (``kmovq k1, [rax];
kmovq rax, k1`` 13 cycles and ``mov rax, [rax]`` 4 in every step), nor does busy or idle code on the
other vCPU. The steps are the mask registers free for renaming (``bench/mask_rename.py``, one
process): the knee of register-only mask writes behind the block moves with the rate (53 free: 0.50
a copy; 44: 0.55; 41: 0.58, about 24 cycles in flight per copy each time) while the knees of GPR
loads and vector registers stay put; the count changes within a process too (after the CPU idled
0.3 s the copies start at 0.50 and step to 0.55 within 1-4 ms), whatever the load addresses, the
code's placement, the mask values or an XSAVE/XRSTOR round trip. A state of the core or its host
that the copies cannot choose: the fastest of several processes is kept (throughput.py) and the
probe's reading, with the processes', is given as the cause. It runs for a figure still off the port grid after the other processes (throughput.py), and
for the forms :func:`suspect` names, on the full count's copies where a fewer count is kept.
Copies found limited are counted too (:func:`fits`): the most behind the block that take no longer
than it alone, and so how long each stays in flight at the copies' rate (41 ``kmovw k, [m16]`` at
0.55 a copy: about 23 cycles). That count, not the loads or ports, sets the rate: mixed 3:1 with
loads into vector registers the mask copies read 0.50, and each load's address 12 cycles later
slows them by 0.2 a copy while the same loads into vector registers lose 0.06
(bench/mask_memory_copies.py).  A mask register zeroed by its zero idiom holds no rename register,
so the copies are also measured writing one mask register with the others zeroed (one_mask.py):
47-49 of those fit, and they read 0.50.
"""
from __future__ import annotations

from ..errors import CycleBenchError
from . import connectors as C
from .comparing import TP_TOL, process_readings
from .copies import independent_copies, until_repeat
from .instantiate import verified
from .session import THROUGHPUT_COPIES, Session, form_init, used_gprs

BLOCK = 16              # dependent imul: about 48 cycles that hold retirement back
FILL = 0.9              # the copies' own figure needs at most this share of the block
MAX_COPIES = 64
MIN_COPIES = 8
KNEE_TOL = 0.03         # over the block by 3% (1.4 of its 48 cycles): about two copies past the most that fit


def suspect(form) -> bool:
    """A form whose copies are probed even on the port grid: it writes a mask register from a
    memory operand, the kind the probe found limited in flight on Zen 4 (0.58 = 7/12 a copy
    is on the grid)."""
    mem = form.memory_operand
    return (mem is not None and mem.read and
            any(op.kind == "reg" and op.cls == "K" and op.write and not op.is_mask for op in form.operands))


def probe(session: Session, copies: list[str], init: list[str], figure: float, pattern: int) -> dict:
    """{"block", "copies", "cycles", "block_cycles", "limited"}: ``copies`` (the independent copies'
    lines, repeated as needed) behind the imul block, against the block alone."""
    out = {"block": None, "copies": None, "cycles": None, "block_cycles": None, "limited": None, "fits": None,
           "error": None}
    try:
        r = C.scratch_gpr(used_gprs(*copies, *init))
    except C.NoConnector as e:
        out["error"] = str(e)
        return out
    block = [f"imul {r}, {r}"] * BLOCK
    out["block"] = f"imul {r}, {r} x{BLOCK}"
    try:
        alone = session.measure(block, init, pattern=pattern)
        n = min(MAX_COPIES, int(FILL * alone.value / figure)) if figure > 0 else 0
        if n < MIN_COPIES:
            out["error"] = f"the block ({alone.value:.1f} cycles) holds fewer than {MIN_COPIES} copies"
            return out
        group = session.measure(block + [copies[i % len(copies)] for i in range(n)], init, pattern=pattern)
    except CycleBenchError as e:
        out["error"] = e.cause
        return out
    out.update(copies=n, cycles=group.value, block_cycles=alone.value,
               limited=bool(alone.stable and group.stable and group.value > alone.value * (1 + TP_TOL)))
    if out["limited"]:
        try:
            out["fits"] = fits(session, block, copies, init, alone.value, n, pattern)
        except CycleBenchError:
            pass
    return out


def fits(session: Session, block: list[str], copies: list[str], init: list[str], alone: float, over: int,
         pattern: int) -> int | None:
    """The most copies behind ``block`` that take no longer than it alone (within KNEE_TOL): how many
    fit in flight at once, found by halving between MIN_COPIES and ``over`` (a count known to take
    longer); None if MIN_COPIES take longer already or a reading is unstable."""
    def fit(k: int) -> bool | None:
        g = session.measure(block + [copies[i % len(copies)] for i in range(k)], init, pattern=pattern)
        return g.value <= alone * (1 + KNEE_TOL) if g.stable else None

    lo, hi = MIN_COPIES, over
    if not fit(lo):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok = fit(mid)
        if ok is None:
            return None
        lo, hi = (mid, hi) if ok else (lo, mid)
    return lo


def uops_info_copies(session: Session, form, avoid: tuple[str, ...], pattern: int) -> dict:
    """{"copies", "value", "code", "error"}: uops.info's own copies of the form (cpuBench.py): k0
    never written, each copy's memory operand one operand width past the last one's, as many
    copies as registers before one repeats (seven ``kmovw k, [m16]``), ``avoid`` kept out too.
    Run for copies the probe finds limited, to tell the method from the machine."""
    out = {"copies": None, "value": None, "code": None, "error": None}
    try:
        cps = independent_copies(form, THROUGHPUT_COPIES, avoid=("k0",) + tuple(avoid), loads_apart=True)
        kept = cps.instances[:until_repeat(form, cps.instances)]
        verified(kept)
        code = [i.text for i in kept]
        init = form_init(form, kept[0]) + [s for s in cps.init if s not in kept[0].init]
        out.update(copies=len(kept), code="\n".join(code))
        out["value"] = session.measure(code, init, per=len(kept), pattern=pattern).value
    except (CycleBenchError, ValueError, KeyError, IndexError) as e:
        out["error"] = getattr(e, "cause", None) or str(e)
    return out


def cause(tp: dict) -> str | None:
    """The cause text for a throughput figure the probe found window-limited, else None."""
    w = tp.get("window") or {}
    if not w.get("limited"):
        return None
    text = (f"limited in flight here: {w['copies']} copies behind a {w['block_cycles']:.0f}-cycle block that holds "
            f"retirement back take {w['cycles']:.1f} cycles where their own figure needs "
            f"{w['copies'] * tp['value']:.1f}: fewer than {w['copies']} fit in flight at once, so the copies' rate is set "
            "by that capacity and by how long each stays in flight, not by the ports")
    if w.get("fits"):
        text += (f"; about {w['fits']} fit (the most behind the block that take no longer than it alone), so "
                 f"at {tp['value']:.2f} a copy each stays in flight about {w['fits'] * tp['value']:.0f} cycles "
                 "from rename to retire")
    if w.get("writes_mask"):
        text += ("; each copy holds a mask register from rename until it retires, and how many mask registers "
                 "the core has free for renaming changes between and within runs with a state of the core the "
                 "copies cannot set (bench/mask_rename.py counts them beside the copies' rate; "
                 "bench/mask_memory_copies.py shows the rate follows how long a copy's load holds it in flight and "
                 "what share of the copies write a mask, not the mask registers named, the loads or the ports)")
    one = tp.get("one_mask") or {}
    if one.get("value") is not None and not one.get("kept"):
        text += (f"; all writing {one['register']}, with the mask registers they do not name zeroed (kxorw), "
                 f"they read {one['value']:.2f}")
    theirs = w.get("uops_info") or {}
    if theirs.get("value") is not None:
        text += (f"; uops.info's own copies ({theirs['copies']}, k0 unused, each load one operand width further on) "
                 f"read {theirs['value']:.2f} here")
    runs, varies = process_readings(tp)
    if varies:
        text += (f"; {len(runs)} runner processes read {min(runs):.2f} to {max(runs):.2f} a copy (the rate steps from "
                 "process to process with a state the copies cannot choose; the fastest is reported)")
    elif len(runs) > 1:
        lo, hi = f"{min(runs):.2f}", f"{max(runs):.2f}"
        text += f"; {len(runs)} runner processes all read {lo if lo == hi else lo + ' to ' + hi} a copy"
    return text
