"""The upper vector state: what it does to legacy-SSE instructions that write an XMM register, and
the probe that measures it on the CPU at hand.

A legacy-SSE (non-VEX) write of XMM0-XMM15 keeps bits 128 and up of its full register, where a
VEX or EVEX write zeroes them.  Once a wider write has made those bits dirty, the core must keep
them, and two costs follow.  Measured with ``cyclebench asm`` on Zen 4 (cycles per copy; the
init dirties the state once, outside the timed code):

* **the kept part is an input** (the dependency-chain bound, predict.py): after a write of a YMM
  or ZMM register 0-15, 4 independent ``cvtdq2ps xmmN, xmm9`` run 3.0 (clean 2.0: their latency
  3 per register), 2 ``sqrtps xmmN, xmm9`` 14.0 (clean 10.0; ``sqrtps xmm1, xmm1`` 15.0): a
  computing form reads its destination's old value as a source; a load (``movaps xmm1, [m]``)
  only merges it in 1 cycle.  A write of ``ymm19``/``zmm19`` or ``xmm16`` dirties nothing (4.0,
  as clean), nor does a YMM or ZMM write followed by ``vzeroupper`` or ``vzeroall``.
* **the write takes its pipes twice** (the resource bound, :func:`weights`, :func:`loads`) once a ZMM
  register 0-15 is dirty, not a YMM one: 8 ``cvtdq2ps xmmN, xmm9`` 4.0 -> 8.0 (after a YMM write
  4.0), 8 ``addps xmmN, xmm9`` 4.0 -> 8.0, 4 ``sqrtss xmmN, xmm9`` 20 -> 40, while a ``divss
  xmm1, xmm2`` chain stays 11.0 and VEX forms stay as they were (8 ``vpxor`` 2.0 -> 2.0).  Scalar
  loads pay less (4 ``movss xmmN, [m]`` 2.0 -> 2.92) and are not charged.  The second pass does
  not load again: 4 ``xorps xmmN, [m128]`` with 4 ``vxorps xmmN, xmm2, [m128]`` run 4.00 cycles
  dirty as clean (8 loads, two a cycle; loading twice would take 6), and ``mulss xmm1, [m32];
  vpmulld zmm1, ...; cvtsi2sd xmm1, [m64]`` runs 2.00 cycles with 2 ``vmovsd`` loads more, 3.00
  with 4 (once: 2.00 and 3.00; twice: 3.00 and 4.00).  The load path (vector_loads.path) is
  charged once (``once``), and so is the front end: the pass takes no slot of its own (12
  instructions, one or two of them legacy writes beside a ZMM write, run 2.00-2.02 cycles dirty
  as clean).

Other cores need not behave so: the resource factor is what :func:`probe` measures here (the
ratio of the 8 ``cvtdq2ps`` with and without a ZMM write), never a vendor's constant.
``cyclebench ports`` measures it once and keeps it in its results file (a record of type
``upper``, :func:`record`), where ``cyclebench predict`` reads it (:func:`stored`); the predictor
charges nothing without it.
"""
from __future__ import annotations

import iced_x86

from .model import FRONT_END

PROBE = [f"cvtdq2ps xmm{n}, xmm9" for n in (1, 2, 3, 4, 5, 6, 7, 8)]
DIRTY_ZMM = ["vpxord zmm9, zmm9, zmm10"]
_X = iced_x86.RegisterExt


def _low_vector(reg: int, kind) -> bool:
    """A register of the given kind (``_X.is_zmm``) numbered 0-15: only those dirty the state."""
    return kind(reg) and _X.number(reg) < 16


def _names(ins: iced_x86.Instruction, kind) -> bool:
    return any(ins.op_kind(i) == iced_x86.OpKind.REGISTER and _low_vector(ins.op_register(i), kind)
               for i in range(ins.op_count))


def clears(ins: iced_x86.Instruction) -> bool:
    """``vzeroupper``/``vzeroall``: the upper state is clean after it."""
    return ins.code in (iced_x86.Code.VEX_VZEROUPPER, iced_x86.Code.VEX_VZEROALL)


def dirty(instructions: list[iced_x86.Instruction], wide: bool = False) -> list[bool]:
    """Per instruction, in the steady state (the block run again and again): whether the upper
    state is dirty when it runs, from a YMM or ZMM register 0-15 the block names (``wide``: a ZMM
    one only), until a ``vzeroupper``/``vzeroall``.  A named register counts as written: the
    harness, like the code around a real block, gives it its value at its width."""
    kind = _X.is_zmm if wide else (lambda r: _X.is_ymm(r) or _X.is_zmm(r))
    state, out = False, []
    for ins in instructions + instructions:       # the second pass sees the state the loop leaves
        if clears(ins):
            state = False
        elif _names(ins, kind):
            state = True
        out.append(state)
    return out[len(instructions):]


WRITES = (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.READ_WRITE, iced_x86.OpAccess.COND_WRITE,
          iced_x86.OpAccess.READ_COND_WRITE)       # iced's accesses that write (the ports modules' one list)
_INFO = iced_x86.InstructionInfoFactory()


def legacy_xmm_write(ins: iced_x86.Instruction) -> bool:
    """A legacy-SSE instruction that writes an XMM register, named or implicit (``pcmpistrm``
    writes XMM0; ``comiss`` only the flags; mixes.legacy_sse reads the same of a form)."""
    return ins.encoding == iced_x86.EncodingKind.LEGACY and any(
        _X.is_xmm(u.register) and u.access in WRITES for u in _INFO.info(ins).used_registers())


def computes(ins: iced_x86.Instruction) -> bool:
    """Whether an instruction computes from registers: reads one for its data, its destination
    included (``divss xmm1, [m]``), so that it is no plain load (``movss xmm1, [m]``)."""
    info = _INFO.info(ins)
    addr = {r for m in info.used_memory() for r in (m.base, m.index)}
    return any(u.access in (iced_x86.OpAccess.READ, iced_x86.OpAccess.READ_WRITE, iced_x86.OpAccess.COND_READ,
                            iced_x86.OpAccess.READ_COND_WRITE) and u.register not in addr
               for u in info.used_registers())


def exposed(instructions: list[iced_x86.Instruction]) -> list[bool]:
    """Per instruction: a legacy-SSE XMM write that computes from registers while a ZMM register
    dirties the state, the instructions a factor charges."""
    state = dirty(instructions, wide=True)
    return [s and legacy_xmm_write(ins) and computes(ins) for ins, s in zip(instructions, state)]


def weights(instructions: list[iced_x86.Instruction], factor: float | None) -> list[float]:
    """How many times each instruction takes its form's resources: ``factor`` (:func:`probe`) for
    the :func:`exposed` ones, 1 for the rest and for everything without a factor."""
    if not factor or factor == 1.0:
        return [1.0] * len(instructions)
    return [factor if e else 1.0 for e in exposed(instructions)]


BINDING = 0.9           # a usage within this share of the form's time alone is a pipe that bounds it


def instance(model, form: str, weight: float = 1.0, once=frozenset(), pipes=None) -> dict[str, float]:
    """One instance's usage of the model's resources (model.Model.loads: its form's time alone as
    ``"FORM alone"``, its front-end share), taken ``weight`` times (:func:`weights`) on the form's
    own pipes only: the resources that bound the form alone (a usage within :data:`BINDING` of
    its time alone) and its floor; its front-end share once.  The write passes its pipe again, as a
    pumped wide µop does; the smaller usages the inference spreads a form over are not doubled
    (Zen 4: a random block of ``subss``, ``movsd`` and a ZMM ``vpternlogd`` read 1.50 cycles,
    doubling every usage said 1.77, the pipes only 1.57).  ``pipes`` (vector pipe resource ->
    units, predict.py): where the form binds some of them, the pass is taken again on those of
    fewest units only, its own pipe, not the wider groups that hold it too nor a one-unit
    transfer (Zen 4, a dirty ZMM state: ``addpd xmm1, xmm2`` beside ``vpxord zmm1`` 1.00 cycles,
    two ``addpd`` 2.00, its pair twice; doubling its four-pipe group too said 1.46 and 2.43).
    The pass is one µop's: on such a pipe it takes at most one unit-cycle more (``1 / units``
    cycles), and the floor rises in step.  A form the inference holds on its pipe longer than one
    µop would, for a part of it that is no pipe, passes that part once (Zen 4, ``cyclebench asm``:
    8 ``cvtdq2ps xmmN, xmm9``, one FP23 µop each, 4.00 -> 8.00 cycles dirty; 8 ``cvtsi2ss xmmN,
    rbx``, one FP23 µop and a transfer, 1.08 cycles of the FP23 pair each in the model, 12.20 ->
    15.63, half a cycle more each, not 1.08; ``movsd [m], xmm1; vpmulld zmm1; lea; cvtsi2ss xmm1,
    rbx`` 1.64, doubling said 2.15).  ``once``: resources the extra pass does not take again (the
    load path: a load-op form loads once), nor its floor where only they reach it."""
    use = model.usage[form]
    own = {r: u for r, u in use.items() if r != FRONT_END}
    bound = model.alone.get(form) or max(own.values(), default=0.0)    # its time alone, or its top usage
    top = {r for r, u in own.items() if u >= BINDING * bound and r not in once}
    if pipes and weight != 1.0 and top & pipes.keys():      # its own pipe: the fewest units
        fewest = min(pipes[r] for r in top & pipes.keys())
        top = {r for r in top & pipes.keys() if pipes[r] == fewest}
    # the share of a full second pass each resource takes: all of it but on a pipe held longer
    # than one unit-cycle (module docstring)
    share = {r: min(1.0, 1.0 / (pipes[r] * own[r])) if pipes and r in pipes and own[r] > 0 else 1.0 for r in top}
    out = {r: u * (1.0 + (weight - 1.0) * share[r]) if r in top else u for r, u in own.items()}
    if form in model.alone:
        # the floor is taken again only where a pipe reaches it: a form slower alone than any of
        # its pipes (a sequence the model names no resource for) passes them again with room
        # left under its floor (Zen 4: mpsadbw xmm, [m], i8 3.00 cycles alone, pipes 2.00, and
        # 3.00 beside a dirty ZMM register)
        piped = any(u >= BINDING * bound for r, u in own.items() if r not in once)
        again = max(share.values(), default=1.0) if piped else 0.0
        out[f"{form} alone"] = model.alone[form] * (1.0 + (weight - 1.0) * again)
    if model.width:             # the merge's pass takes no slot of its own (module docstring)
        out[FRONT_END] = use.get(FRONT_END, 1 / model.width)
    return out


def loads(model, counts: dict[str, int], weighted: dict[str, float], once=frozenset(), pipes=None) -> dict[str, float]:
    """The model's resource loads of a block (model.Model.loads of ``counts``), each form's
    instances taken as :func:`instance` charges them (``weighted``: counts weighted; ``pipes``
    as :func:`instance` takes them)."""
    out = {r: 0.0 for r in model.loads({})}
    for f, n in counts.items():
        for r, u in instance(model, f, weighted.get(f, n) / n, once, pipes).items():
            out[r] = out.get(r, 0.0) + n * u
    return out


RECORD = "upper"        # the results-file record of cyclebench ports that holds the probe's figure


def probe(session) -> dict:
    """The resource factor measured on this CPU: independent legacy-SSE writes after a ZMM write
    over the same with a clean state (``session``: an instructions.session.Session), as the
    results-file record {"type": "upper", "factor", "clean", "dirty"}; factor None, with the
    reason, where the CPU has no AVX-512."""
    if not session.avx512:
        return {"type": RECORD, "factor": None, "why": "no AVX-512 on this CPU"}
    clean = session.measure(PROBE, []).value
    dirty = session.measure(PROBE, DIRTY_ZMM).value
    return {"type": RECORD, "factor": round(dirty / clean, 3), "clean": round(clean, 3), "dirty": round(dirty, 3)}


def stored(path) -> tuple[float | None, str]:
    """(factor, where it came from) of a ``cyclebench ports`` results file: the probe's figure,
    or None where it holds none (a file from before the probe, or a CPU without AVX-512)."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return None, "not measured: the model file has no upper-state probe"
    if r.get("factor") is None:
        return None, r.get("why") or "no factor"
    return float(r["factor"]), (f"measured by cyclebench ports: {r['dirty']:.2f} / {r['clean']:.2f} cycles"
                                if "clean" in r else "measured by cyclebench ports")
