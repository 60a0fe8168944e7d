"""Whether the legacy-SSE-beside-ZMM cost takes the vector pipes, measured.

upper_loop.py charges each legacy-SSE XMM write under a ZMM-dirty state and each ZMM write a
fixed cost, as a floor of their own.  On Zen 4 that cost is work on the vector pipes that every
other vector instruction of the block queues for too: ``cyclebench asm --cpu 1``, cycles an
iteration, 4 ``movaps xmmN, xmm2`` beside 1 ``vpxord zmm9, zmm2, zmm10`` and n independent VEX
``vpxor xmm, xmm2, xmm3`` (n ``vpxor`` alone: n / 4 cycles):

| n | 0 | 2 | 4 | 8 |
| --- | ---: | ---: | ---: | ---: |
| ``vpxor xmm`` | 2.65 | 3.03 | 3.50 | 4.50 |
| ``vpxor ymm`` | 2.67 | 3.03 | 3.50 | 4.50 |
| ``vmulps xmm`` | 2.67 | 3.14 | 3.50 | 4.50 |
| ``add r64, rcx`` | 2.63 | 2.65 | 2.66 | 2.38 |
| ``vmovss xmm, [m32]`` (each its own address) | 2.67 | 2.62 | 2.65 | 4.02 (the load path: 8 loads) |

Each VEX instruction adds its own share of the four vector pipes (a quarter cycle), integer work
and vector loads add nothing: the merges and the ZMM writes are vector-pipe work, not a resource
apart.  :func:`probe` times the 4 VEX writes alone, the upper_loop probe's first block (4 legacy
writes beside 1 ZMM write) and the two together; where the VEX writes add at least :data:`SHARE`
of their time alone to the block, they share the pipes (Zen 4: 1.00 alone, 2.65 -> 3.50), and
``cyclebench ports`` keeps that as a record of type ``upper_pool``.  upper_loop.LoopFloor then
adds the block's other vector instructions at their usage of the pipes that bound the probe's
ZMM form (:meth:`~upper_loop.LoopFloor.beside`).  A core where the merges take a resource of
their own (the VEX writes hidden under the floor) or a file without the record adds nothing.
"""
from __future__ import annotations

from .upper_loop import LEGACY, WIDE

RECORD = "upper_pool"
VEX = [f"vpxor xmm{n}, xmm2, xmm10" for n in (3, 4, 14, 15)]     # independent VEX writes: no merge
SHARE = 0.5             # the VEX writes add at least this share of their time alone: one pool of pipes


def shares(times: dict[str, float]) -> bool:
    """Whether the probe's times (keyed as :func:`probe` keeps them) say the VEX writes queue with
    the legacy and ZMM writes: they add at least :data:`SHARE` of their time alone."""
    return times["both"] - times["legacy and wide"] >= SHARE * times["vex"]


def probe(session) -> dict:
    """The probe on this CPU (``session``: an instructions.session.Session): the record {"type":
    "upper_pool", "shared", "times"}; shared None, with the reason, where the CPU has no AVX-512."""
    if not session.avx512:
        return {"type": RECORD, "shared": None, "why": "no AVX-512 on this CPU"}
    times = {"vex": session.measure(VEX, []).value,
             "legacy and wide": session.measure(LEGACY + WIDE[:1], []).value,
             "both": session.measure(LEGACY + WIDE[:1] + VEX, []).value}
    return {"type": RECORD, "shared": shares(times), "times": {k: round(v, 3) for k, v in times.items()}}


def stored(path) -> tuple[bool, str]:
    """(the legacy-beside-ZMM cost takes the vector pipes, where that came from)."""
    from .run import stored_figure
    shared, t = stored_figure(path, RECORD, "shared",
                              "not measured: the model file has no probe of the vector pipes beside the merges")
    if shared is None:
        return False, t
    return bool(shared), (f"measured by cyclebench ports: 4 VEX writes {t.get('vex')} cycles, 4 legacy "
                          f"beside 1 ZMM write {t.get('legacy and wide')}, all {t.get('both')}")
