"""A compare to the flags right after a flag writer: the loop's order, measured.

shared.py charges a compare of vector registers to the flags (``ucomiss``: shared.integer_side
"flags") a cycle of the four ALUs beside forms that write flags, by counts.  On Zen 4 the order
matters too: the compare costs more where the last ALU instruction before it in the loop (the
loop wrapping round) writes the flags, and less where an ALU instruction that writes no flags
comes between.  ``cyclebench asm --cpu 1``, cycles an iteration, ``C`` ``ucomiss xmm1, xmm2``,
``T`` ``test rbx, rcx``, ``L`` ``lea r9, [rcx+0x1]``:

| block | cycles | block | cycles |
| --- | ---: | --- | ---: |
| C T | 1.33 | C T L | 1.18 |
| C L T | 1.61 | C T L L, C L T L | 1.35, 1.34 |
| C L L T | 1.49 | C T T L | 1.34 |
| C T T | 1.62 | C T ``mov r8, 5`` / ``not`` / ``movzx`` / ``seta`` / ``cmova`` | 1.17-1.21 |
| C T ``shl r8, 2`` / ``cmp qword ptr [m], 0`` | 1.61, 1.62 | C T ``nop`` / ``mov r8, r9`` / a load / ``imul r8, r9, 5`` | 1.33-1.41 |

A flag writer exposes the compare (:func:`exposed`) where it is an ALU form of registers that
writes ZF and runs as many a cycle as the ALUs (``test``, ``and``, ``add``, ``popcnt``); an ALU
form of registers that writes a general register and no flags shields it (``lea``, ``mov r,
imm``, ``movzx``, ``not``, ``seta``, ``cmova``); any other instruction is passed over: memory
forms (``C cmp qword ptr [m], 0`` 1.00), slower ALU forms (``C shl r8, 2`` 1.00), eliminated
moves, vector forms.  A zero idiom (``xor r8d, r8d`` 1.12 either order), a writer of CF only
(``bt r8, 3``, ``clc``: 1.09-1.17) and a writer fused with the branch after it (``test rbx, rcx;
jz``: 1.13) do not expose it.  ``vptest`` (flags from vector registers too) exposed the same
way: ``vptest; lea; test`` 1.62, ``vptest; test; lea`` 1.17.

An exposing writer on a loop-carried chain loses time on the chain itself: ``C A`` (``A`` ``and
rbx, rcx``, or ``add``, ``sub``, ``xor``, ``neg``, ``inc``, ``or bx, cx``: a chain of 1 cycle)
1.55, ``C A A`` 2.29, ``C A A A`` 3.56, four ``A`` 4.33 (an odd chain loses the one-step
figure, an even one about half of it: ``lea rbx, [rbx+1]`` steps before ``A``, 2.29 for two
steps, 3.51 for three), ``C L L A`` 1.64; shielded, none (``C A L`` 1.17, ``C A`` and ``lea rbx,
[rbx+1]`` 2.00).  Where the chain also reads the compare's flags it runs after the compare and
loses nothing (``C seta bl; A`` and ``C cmovb rbx, rcx; A`` 2.01-2.02, as without the compare).
A transfer to a general register (``T``: ``movd eax, xmm1``, ``cvttsd2si eax, [m]``) costs a
chain through a writer of a general register the same way, in any order: ``T A`` 1.60-1.65, ``T
A L`` 1.58, ``T L A`` 1.50, ``T A A`` 2.33, ``T A A A`` 3.32-3.50; beside ``test``, which writes none, 1.09.

:func:`probe` measures C T, C T L and C L T; where C L T runs over C T L by more than
:data:`OVER` the core has the cost, and ``cyclebench ports`` keeps C T, the time of a compare
and its writer in a loop of their own, as a results-file record (type ``flag_order``), with C A
and T A over A alone (``late``, ``gpr_late``), C A A and T A A over A A (``late_even``,
``gpr_late_even``).  :class:`FlagOrder` is then the block's floor:
each exposed compare that time; and (:meth:`FlagOrder.delayed`) each exposing writer ``late``
cycles later, and for each transfer to a general register the last fast writer of one on a chain
before it ``gpr_late`` later, where the chain does not read the transfer's result; on a chain of
two steps the ``_even`` figures (:meth:`FlagOrder.lost`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import iced_x86

from .bound import Bound
from .dataflow import loops, producers, zero_idiom
from .repair import TOLERANCE

RECORD = "flag_order"
# the figures the probe writes: a record from before one of them was added is probed again (run.record)
FIELDS = ("pair", "late", "gpr_late", "late_even", "gpr_late_even")
LABEL = "compares after a flag writer (flag_order.py)"
COMPARE, WRITER, OTHER = "ucomiss xmm1, xmm2", "test rbx, rcx", "lea r9, [rcx+0x1]"
CHAINED = "and rbx, rcx"     # a flag writer on a chain of its own: it reads the register it writes
MOVED = "movd eax, xmm1"     # a transfer to a general register
OVER = 0.10           # C L T over C T L by this share: the order costs
SHORT = 2             # steps of one cycle: mixes with longer chains read no loss (docs/ports-findings.md)
_ZF = iced_x86.RflagsBits.ZF
_MEMORY = {v for k, v in iced_x86.OpKind.__dict__.items() if k.startswith("MEMORY")}


def exposes(times: dict[str, float]) -> bool:
    """Whether the probe's times say a flag writer right before the compare costs it more."""
    return times["exposed"] > times["shielded"] * (1 + OVER)


def probe(session) -> dict:
    """The probe on this CPU (``session``: an instructions.session.Session): the record {"type":
    "flag_order", :data:`FIELDS`, "times"}; each figure None where it costs nothing."""
    times = {"pair": session.measure([COMPARE, WRITER], []).value,
             "shielded": session.measure([COMPARE, WRITER, OTHER], []).value,
             "exposed": session.measure([COMPARE, OTHER, WRITER], []).value,
             "chain": session.measure([CHAINED], []).value,
             "chained": session.measure([COMPARE, CHAINED], []).value,
             "moved": session.measure([MOVED, CHAINED], []).value,
             "chain2": session.measure([CHAINED, CHAINED], []).value,
             "chained2": session.measure([COMPARE, CHAINED, CHAINED], []).value,
             "moved2": session.measure([MOVED, CHAINED, CHAINED], []).value}
    return {"type": RECORD, "pair": round(times["pair"], 3) if exposes(times) else None,
            "late": late(times), "gpr_late": late(times, "moved"),
            "late_even": late(times, "chained2"), "gpr_late_even": late(times, "moved2"),
            "times": {k: round(v, 3) for k, v in times.items()}}


def late(times: dict[str, float], key: str = "chained") -> float | None:
    """Cycles the probe's chained writer loses to the compare it exposes (C A over A alone), where
    the order costs and the loss is over :data:`OVER` of the chain; else None.  ``key`` "moved":
    to a transfer to a general register beside it (any order)."""
    if key not in times or (key.startswith("chained") and not exposes(times)):
        return None
    chain = times["chain2" if key.endswith("2") else "chain"]
    d = times[key] - chain
    return round(d, 3) if d > OVER * times["chain"] else None


def stored(path_) -> tuple[float | None, dict[str, float], str]:
    """(the time of a compare and its flag writer alone where the order costs, or None; the
    cycles a chained writer loses, by what the transfer beside it writes: "flags" (an exposing
    writer), "gpr" (any order), each where the probe found it (a record from before that part of
    the probe has none); where those came from)."""
    from .run import stored_record
    r = stored_record(path_, RECORD)
    if r is None:
        return None, {}, "not measured: the model file has no flag-order probe"
    t = r.get("times") or {}
    chained = f", C A {t['chained']}, T A {t.get('moved')} (A alone {t['chain']})" if "chained" in t else ""
    lates = {k: r[f] for k, f in (("flags", "late"), ("gpr", "gpr_late")) if r.get(f)}
    lates.update({f"{k} even": r[f] or 0.0 for k, f in (("flags", "late_even"), ("gpr", "gpr_late_even"))
                  if f in r and k in lates})      # measured: 0.0 where the even chain lost nothing
    return r.get("pair"), lates, (f"measured by cyclebench ports: C T {t.get('pair')}, C T L "
                                  f"{t.get('shielded')}, C L T {t.get('exposed')}{chained} cycles")


def _registers_only(ins: iced_x86.Instruction) -> bool:
    """No memory accessed (a LEA's address is arithmetic on registers)."""
    return ins.mnemonic == iced_x86.Mnemonic.LEA or not any(
        ins.op_kind(i) in _MEMORY for i in range(ins.op_count))


def _gpr_written(ins: iced_x86.Instruction) -> bool:
    return (ins.op_count > 0 and ins.op_kind(0) == iced_x86.OpKind.REGISTER
            and iced_x86.RegisterExt.is_gpr(ins.op0_register))


def kinds(instructions, forms, compares: set[str], fast: set[str]) -> list[str]:
    """Per instruction: "C" a compare to the flags (a form of ``compares``), "W" a flag writer
    that exposes one (a form of ``fast``, the forms as fast as the ALUs), "N" an ALU form that
    shields one, "" any other (module docstring)."""
    out = []
    for i, (ins, f) in enumerate(zip(instructions, forms)):
        nxt = instructions[(i + 1) % len(instructions)]
        fused = nxt.flow_control == iced_x86.FlowControl.CONDITIONAL_BRANCH and i + 1 < len(instructions)
        if f in compares:
            out.append("C")
        elif not _registers_only(ins) or zero_idiom(ins) or fused:
            out.append("")
        elif (ins.rflags_modified & ~ins.rflags_undefined) & _ZF:
            out.append("W" if f in fast else "")
        elif not ins.rflags_modified and _gpr_written(ins) and not (
                ins.mnemonic == iced_x86.Mnemonic.MOV and ins.op_kind(1) == iced_x86.OpKind.REGISTER):
            out.append("N")               # a register move is eliminated: no ALU between
        else:
            out.append("")
    return out


def exposers(seq: list[str]) -> list[tuple[int, int]]:
    """(compare, writer) for each compare (``kinds``) whose last ALU instruction before it, the
    loop wrapping round, is an exposing flag writer: their places in the block."""
    out = []
    for i, k in enumerate(seq):
        if k != "C":
            continue
        for d in range(1, len(seq)):
            j = (i - d) % len(seq)
            if seq[j] in ("C", "N"):
                break
            if seq[j] == "W":
                out.append((i, j))
                break
    return out


def chained_writer(instructions, forms, fast: set[str], t: int, chains) -> int | None:
    """The last instruction before ``t`` (the loop wrapping round) that is a form of ``fast`` on a
    loop-carried chain (``chains``: dataflow.loops) writing a general register from registers
    (an eliminated move or a zero idiom is none), or None."""
    n = len(instructions)
    for d in range(1, n):
        j = (t - d) % n
        ins = instructions[j]
        if (forms[j] in fast and chains[j] and _registers_only(ins) and _gpr_written(ins)
                and not zero_idiom(ins) and ins.mnemonic != iced_x86.Mnemonic.MOV):
            return j
    return None


def exposed(seq: list[str]) -> int:
    """The compares (``kinds``) that a flag writer exposes."""
    return len(exposers(seq))


def _cycles(latency) -> float:
    """A latency's cycles (dataflow.chain_bound's value or the first of its tuple)."""
    return latency[0] if isinstance(latency, tuple) else latency


def later(latency, cycles: float):
    """A latency (as dataflow.chain_bound takes it) ``cycles`` longer from every input."""
    if not isinstance(latency, tuple):
        return latency + cycles
    by = {k: v + cycles for k, v in latency[2].items()} if len(latency) > 2 else None
    return (latency[0] + cycles, latency[1] + cycles, *((by,) if by is not None else ()), *latency[3:])


@dataclass
class FlagOrder(Bound):
    """The floor of :mod:`flag_order` (a ``floors`` entry of predict(): :meth:`floor_of`):
    ``pair`` cycles for each exposed compare; ``compares``: the model's forms that move a vector
    compare to the flags; ``fast``: its forms that run as many a cycle as the ALUs alone."""
    pair: float | None
    late: dict[str, float]
    model: object
    catalogue: object
    compares: set[str] = field(default_factory=set)
    fast: set[str] = field(default_factory=set)
    moves: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, pair: float | None, model, catalogue, sides: dict, held: dict[str, str], units,
              late: dict[str, float] | None = None) -> "FlagOrder | None":
        """The floor where the probe found the cost (``pair``) or a chained writer's loss
        (``late``, :func:`stored`) and the model holds a compare to the flags whole on a resource
        (shared.SharedFloors.whole_group, ``held``) of ``units`` units."""
        compares = {f for f, s in sides.items() if s == frozenset({"flags"})}
        alu = {r for f, r in held.items() if f in compares}
        if not (pair or late) or len(alu) != 1:
            return None
        k = units(model, next(iter(alu)))
        fast = {f for f, t in model.alone.items() if t and t <= (1 + TOLERANCE) / k}
        moves = {f for f, s in sides.items() if s == frozenset({"gpr"})}
        return cls(pair, dict(late or {}), model, catalogue, compares, fast, moves)

    def describe(self) -> str:
        lates = "; ".join(f"a chained writer beside a transfer to the {k} {v:.2f} cycles later"
                          + (f" ({self.late[k + ' even']:.2f} on an even chain)" if k + " even" in self.late else "")
                          for k, v in self.late.items() if not k.endswith(" even"))
        return "; ".join(filter(None, [f"each compare to the flags right after a flag writer takes at least "
                                       f"{self.pair:.2f} cycles" if self.pair else "", lates]))

    def floor_of(self, instructions, counts=None) -> tuple[float, str]:
        """(cycles, label) for a block: :attr:`pair` for each exposed compare."""
        if not self.pair or not instructions or not any(f in self.compares for f in (counts or {})):
            return 0.0, ""
        from .predict import form_of
        forms = [form_of(ins, self.catalogue, self.model) for ins in instructions]
        n = exposed(kinds(instructions, forms, self.compares, self.fast))
        return n * self.pair, LABEL

    def delayed(self, instructions, forms, latency: list) -> list:
        """``latency`` (per instruction) with a chained writer later for each
        transfer beside it: for a compare, the writer that exposes it; for a transfer to a general
        register, the last fast writer of one on a chain before it.  The chain loses
        :meth:`lost` an iteration where it is one-cycle steps of registers and does not read the
        transfer's result (it then runs after the transfer, never beside it)."""
        flags, gpr = self.late.get("flags"), self.late.get("gpr")
        pairs = exposers(kinds(instructions, forms, self.compares, self.fast)) if flags else []
        moved = [t for t, f in enumerate(forms) if f in self.moves] if gpr else []
        if not pairs and not moved:
            return latency
        out, chains, before = list(latency), loops(instructions), producers(instructions)
        writers = [(c, j, "flags") for c, j in pairs]
        writers += [(t, j, "gpr") for t in moved
                    if (j := chained_writer(instructions, forms, self.fast, t, chains)) is not None]
        for t, j, side in writers:
            loop = chains[j]
            cycles = self.lost(side, len(loop))
            if (cycles and not any(t in before[k] for k in loop)
                    and all(_registers_only(instructions[k]) and _cycles(latency[k]) <= 1 + TOLERANCE for k in loop)):
                out[j] = later(out[j], cycles)
        return out

    def lost(self, side: str, steps: int) -> float:
        """The cycles an iteration a chain of ``steps`` one-cycle steps loses to a transfer beside
        it (``side``: "flags", "gpr"), up to :data:`SHORT` steps: the probe's one-step figure on an
        odd chain, its two-step figure on an even one (a record without it: the one-step figure)."""
        even = self.late.get(f"{side} even")
        if not steps or steps > SHORT:
            return 0.0
        return self.late[side] if even is None or steps % 2 else even
