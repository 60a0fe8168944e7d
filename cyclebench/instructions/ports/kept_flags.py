"""The flags the ISA leaves undefined that a form passes on from the writer before it: measured.

Where the ISA says an instruction leaves a flag undefined (``imul``: SF, ZF, AF and PF; a shift
by more than one: OF) the core still gives the flag a value: one computed from the result, a
constant, or the flag as the last writer before left it.  Only the last makes a reader of the
flag wait for that earlier writer, not for the form, and which a core does is published nowhere.
Zen 4 (``cyclebench asm --cpu 1``, cycles an iteration):

| block | ``setz cl`` | ``sets cl`` | ``setp cl`` | ``setc cl`` |
| --- | ---: | ---: | ---: | ---: |
| ``test rcx, rcx; imul rbx, rdx; set.. cl; mov ebx, 5`` | 2.00 | 2.00 | 2.00 | 1.00 |
| ``imul rbx, rcx; set.. cl; mov ebx, 5`` | 1.00 | 1.00 | - | 4.00 |

The ZF, SF and PF a reader sees after ``imul`` are the ``test``'s, and wait for nothing of the
multiply; its CF is its own, three cycles after its input.  ``test rcx, rcx; shl rbx, 3; seto
cl; mov ebx, 5`` reads 1.00: the shift writes OF.

:func:`probe` reads, for each form of the model that leaves undefined a flag a condition tests
(OF, SF, ZF, CF, PF; none tests AF), reads no flags and writes no memory, the block ``cmp P, Q;
<form>; set<flag> P8`` (P and Q general registers the form does not name, each register the form
reads and writes set afresh before, ``mov r32, 1``, so that its own chain hides nothing), beside
the same block setting from a flag the form defines.  Where the form passes the flag on, the
loop runs through the compare and the set, two cycles; where it writes the flag, the set waits
for the form, whose inputs are on no loop, and the loop is the set's own merge into P, one
cycle, as with the defined flag.  A flag read at least :data:`SLOWER` of a cycle slower than the
defined one is passed on.  ``cyclebench ports`` keeps the record (type ``kept_flags``); the
dataflow (dataflow.py) takes such a form as no writer of that flag, for the chain bound and the
simulation.  A file without the record takes every flag a form modifies as written by it, as
the ISA's own list of flags does.
"""
from __future__ import annotations

import iced_x86

from ...errors import CycleBenchError

RECORD = "kept_flags"
PER_FORM = True       # run.record gives the probe the file's forms
SLOWER = 0.5          # cycles a flag passed on reads slower than one the form writes (two cycles against one)
CONDITION = {"OF": "o", "SF": "s", "ZF": "z", "CF": "c", "PF": "p"}     # the flags a condition tests
_BITS = {n: getattr(iced_x86.RflagsBits, n) for n in CONDITION}


def names(bits: int) -> list[str]:
    """The tested flags among iced's RflagsBits ``bits``, in :data:`CONDITION`'s order."""
    return [n for n, b in _BITS.items() if bits & b]


def bits(flags) -> int:
    """iced's RflagsBits of flag names."""
    out = 0
    for n in flags:
        out |= _BITS[n]
    return out


def blocks(form) -> dict[str, tuple[list[str], list]]:
    """Flag -> (code, init) of the probe's blocks for ``form``: one for each tested flag it leaves
    undefined and one for the first it defines; {} where the form is not one the probe reads
    (module docstring)."""
    from ..instantiate import instantiate, sized_alias
    from ..operands import NEVER_PICK, POOLS, full_register, register_name
    from ..session import form_init
    try:
        inst = instantiate(form)
    except ValueError:
        return {}
    ins = iced_x86.Decoder(64, inst.encoding).decode()
    undefined, defined = names(ins.rflags_undefined), names(ins.rflags_modified & ~ins.rflags_undefined)
    info = iced_x86.InstructionInfoFactory().info(ins)
    if (not undefined or not defined or inst.loop_init or inst.reset or inst.via_bytes or ins.rflags_read
            or any(m.access != iced_x86.OpAccess.READ for m in info.used_memory())):
        return {}
    R, X = iced_x86.OpAccess, iced_x86.RegisterExt
    used = info.used_registers()
    read = {full_register(u.register) for u in used if u.access in (R.READ, R.READ_WRITE, R.COND_READ, R.READ_COND_WRITE)}
    written = {full_register(u.register) for u in used if u.access in (R.WRITE, R.READ_WRITE, R.COND_WRITE, R.READ_COND_WRITE)}
    fresh = sorted(read & written)        # a 32-bit write reads EBX and writes RBX: one register
    free = [r for r in POOLS["GPR64"] if r not in NEVER_PICK and r not in {full_register(u.register) for u in used}]
    if not all(X.is_gpr(r) for r in fresh) or len(free) < 2:
        return {}
    p, q = free[:2]
    head = [f"mov {register_name(sized_alias(r, 'GPR32'))}, 1" for r in fresh] + \
        [f"cmp {register_name(p)}, {register_name(q)}", inst.text]
    low = register_name(sized_alias(p, "GPR8"))
    return {f: (head + [f"set{CONDITION[f]} {low}"], form_init(form, inst)) for f in undefined + defined[:1]}


def probe(session, forms: list[str]) -> dict:
    """{"type": "kept_flags", "kept": {form: [flags it passes on]}, "times": {"FORM FLAG": cycles}}
    for the forms among ``forms`` that leave a tested flag undefined (module docstring)."""
    from ..catalogue import Catalogue
    cat = Catalogue.load()
    kept: dict[str, list[str]] = {}
    times: dict[str, float] = {}
    for name in forms:
        form = cat.get(name)
        probe_blocks = blocks(form) if form is not None else {}
        if not probe_blocks:
            continue
        try:
            # the faster of two readings: a burst of other work on the host only slows a block
            read = {f: min(session.measure(code, init).value for _ in range(2))
                    for f, (code, init) in probe_blocks.items()}
        except CycleBenchError:
            continue
        times.update({f"{name} {f}": round(t, 3) for f, t in read.items()})
        *undefined, defined = read            # the defined flag's block is the last
        passed = [f for f in undefined if read[f] >= read[defined] + SLOWER]
        if passed:
            kept[name] = passed
    return {"type": RECORD, "kept": kept, "times": times}


def stored(path) -> tuple[dict[str, int], str]:
    """(form -> iced RflagsBits of the flags it passes on, where that came from) of a results file."""
    from .run import stored_record
    r = stored_record(path, RECORD)
    if r is None:
        return {}, "not measured: the model file has no probe of the flags the ISA leaves undefined"
    kept = {f: bits(flags) for f, flags in (r.get("kept") or {}).items()}
    said = "; ".join(f"{f} {' '.join(flags)}" for f, flags in sorted((r.get("kept") or {}).items()))
    return kept, f"measured by cyclebench ports: {len(r.get('times') or {})} readings; " + (
        f"passed on from the writer before: {said}" if said else "every form writes the flags it leaves undefined")
