"""A load-op form on a one-unit pipe beside plain GPR loads: a shared load floor, measured.

The model charges a load-op multiply (``imul r64, [m64], imm``) 0.64 of the load probe's
resource, about two plain loads' share, fitted beside ``cmp [m], r32``: what it meets there is
the compare's ALU part, not its load.  ``cyclebench asm --cpu 1`` on Zen 4 (cycles an iteration,
k plain loads ``mov r64, [m]`` each from its own line and bank):

| beside k plain loads, k = | 1 | 2 | 3 | 4 | 5 | 6 |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
| nothing (the loads alone) | 0.33 | 0.67 | 1.00 | 1.33 | 1.67 | 2.02 |
| ``imul r8, [m], 3`` (``crc32 r8, [m]`` after ``xor r8d, r8d`` alike) | 1.00 | 1.50 | 2.00 | 2.25 | 2.50 | 2.75 |
| ``imul r8, rbx, 3`` | 1.00 | 1.00 | 1.00 | 1.50 | 1.75 | 2.00 |

Beside two and three load-op ALU forms (``add r, [m]``, ``cmp [m], rbx``) the multiply reads
1.00 as they do alone; ``popcnt`` and ``lzcnt`` with a memory source (ALU forms on any pipe) read
as one more plain load.  So up to three plain loads the multiply's load and theirs go two a
cycle, not three: :func:`probe` times the load-op multiply alone, two plain loads alone and the
three together, and ``cyclebench ports`` keeps the pipes that says (here 2) as a record of type
``mul_loads``.  With it the predictor (:class:`LoadFloor`) takes the block's plain GPR loads and
its one-pipe load-op forms (a GPR written from memory, the form's time alone a whole cycle) over
those pipes as a floor (at most two plain loads with each, as the probe had them), and charges a one-pipe load-op form no more of the load resources than a
plain load takes (:func:`capped`): its excess was the probe's ALU crowding.  All plain loads counted,
the floor would be over beyond three (2.50 for 2.25 at four, and a BHive block with eight plain
loads 4.50 for 3.47).  A file without the record changes nothing.

Of the vector-load path (vector_loads.py) the multiply takes 1.00 on Zen 4, two plain vector
loads' share, fitted beside ``xorps xmm, [m128]`` (with two of them 2.00 cycles, read 2.00); beside
``movsd xmm, [m64]`` and a ``mov r64, imm64`` it reads 1.00 where that share says 1.50.  :func:`capped` holds
it to one plain vector load's share: its one load is one load there too.  The pair floors
(repair.py) keep the mixes the share was read in.  On the random mixes of 56 seeds (Zen 4,
replayed) that moves 14 blocks across 10%, 10 of them in (docs/ports-findings.md).

The multiply's pipe is one of the four ALUs, and the ALU forms' crowding usages of it stand for
the two meeting once the ALUs are full (crowding.py).  The model also gave the load-op multiply
half the ALUs' resource, read beside four and eight ``sub`` where they were full: that crowding
counted again, from the other side.  Measured (``cyclebench asm --cpu 1``, Zen 4): ``imul r11,
[m], imm`` beside one, two or three ``test`` (or ``mov r, imm``) 1.00, beside four 1.50 (1.62),
as ``imul r11, rbx, imm``; beside ``add r11, [m]; test r13, r13`` 1.00 where the half said 1.12.
So :func:`capped` charges a one-pipe load-op form, of its pipe's group (crowding.group, the
resource the pipe's crowding forms hold whole), only what the pipe's register probe takes.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from . import crowding, vector_loads
from .bound import Bound
from .model import FRONT_END, USED
from ..operands import VECTOR_CLASSES as VECTOR

RECORD = "mul_loads"
LABEL = "a one-pipe load-op form beside plain loads (mul_loads.py)"
MUL = "imul r8, qword ptr [r14+0x40], 0x3"                    # the probe's load-op multiply
LOADS = ["mov rcx, qword ptr [r14+0x88]", "mov rdx, qword ptr [r14+0xd0]"]   # lines and banks apart
WHOLE = 0.9                 # a form alone at least this many cycles has one unit for its operation


def _gpr_load(form) -> bool:
    """The form reads an integer value from memory (no vector-sized operand, no store)."""
    mem = form.memory_operand
    return (mem is not None and mem.kind == "mem" and mem.read and not mem.write
            and (mem.slot is None or mem.slot.cls not in VECTOR))


def plain(form) -> bool:
    """Only loads a GPR: one written GPR besides the memory operand, nothing else read."""
    o = [op for op in form.operands if op.kind != "mem"]
    return (_gpr_load(form) and len(o) == 1 and o[0].kind == "reg" and o[0].cls.startswith("GPR")
            and o[0].write and not o[0].read and not form.implicit)


def one_pipe(form, alone: float) -> bool:
    """A load-op form writing a GPR whose time alone (``alone``) is a whole cycle: one unit does
    its operation (a multiply, a CRC), where load-op ALU forms go three or four a cycle."""
    return (_gpr_load(form) and not plain(form) and alone >= WHOLE
            and any(op.kind == "reg" and op.cls.startswith("GPR") and op.write for op in form.operands))


def kinds(model, catalogue) -> tuple[set[str], set[str]]:
    """(the model's plain GPR loads, its one-pipe load-op forms), by name."""
    p, m = set(), set()
    for name in model.usage:
        form = catalogue.by_name.get(name)
        if form is not None and plain(form):
            p.add(name)
        elif form is not None and one_pipe(form, model.alone.get(name, 0.0)):
            m.add(name)
    return p, m


def load_resources(model, plains) -> set[str]:
    """The resources every one of the plain GPR loads ``plains`` uses (at least :data:`USED`
    each, the front end apart): the load resources; empty without plain loads."""
    return set.intersection(*({r for r, u in model.usage[f].items() if u >= USED and r != FRONT_END}
                              for f in plains)) if plains else set()


def capped(model, catalogue):
    """The model with each one-pipe load-op form charged, of each resource every plain GPR load
    takes (at least :data:`USED` each, the front end apart: the load resources), no more than the
    most a plain load takes of it, of the vector-load path (vector_loads.path) no more than a plain
    vector load takes, and of the group its own pipe belongs to (crowding.group) no more than its
    pipe's register probe takes; unchanged where it holds no plain load."""
    plains, ones = kinds(model, catalogue)
    common = load_resources(model, plains)
    if not common or not ones:
        return model
    top = {r: max(model.usage[f][r] for f in plains) for r in common}
    path, shares, _ = vector_loads.path(model, catalogue)
    if shares:              # its one load is one load there too (module docstring)
        vector = max(u for _, u in shares)
        top.update({r: min(top.get(r, vector), vector) for r in path})
    usage = dict(model.usage)
    for f in ones:
        cap = dict(top)
        for pipe, g in _groups(model, f, common):
            cap[g] = model.usage.get(model.probes[pipe], {}).get(g, 0.0)
        usage[f] = {r: min(u, cap[r]) if r in cap else u for r, u in usage[f].items()}
    return replace(model, usage=usage)


def _groups(model, form: str, loads):
    """(pipe, its group) for each one-unit resource the form holds whole that a register probe
    measures: a load-op form's share of that group, read where the group was full, was the
    group's crowding of the pipe, counted twice."""
    for r, u in model.usage[form].items():
        probe = model.probes.get(r)
        if (r != FRONT_END and probe and probe != form and crowding.units(model, r) == 1
                and crowding.whole(model, form, r) and (g := crowding.group(model, r, loads)) is not None):
            yield r, g


@dataclass(frozen=True)
class LoadFloor(Bound):
    """The block's one-pipe load-op forms and, with each, as many plain GPR loads as the probe held
    beside it (:data:`LOADS`), ``pipes`` a cycle: beyond that the loads spread further (the grid)."""
    pipes: int
    plains: frozenset
    ones: frozenset

    def describe(self) -> str:
        return (f"each of {len(self.ones)} one-pipe load-op forms with up to {len(LOADS)} of {len(self.plains)} plain "
                f"GPR loads beside it on {self.pipes} load pipes")

    def floor(self, counts: dict[str, int]) -> tuple[float, str]:
        p = sum(n for f, n in counts.items() if f in self.plains)
        m = sum(n for f, n in counts.items() if f in self.ones)
        return ((min(p, len(LOADS) * m) + m) / self.pipes if p and m else 0.0), LABEL


def pipes(times: dict[str, float]) -> int | None:
    """The pipes the probe's times say the multiply's load and two plain loads share, or None
    where the three together are no slower than the slower part (they do not meet)."""
    both = times["mul and loads"]
    if both <= max(times["mul"], times["loads"]) + 0.25:
        return None
    return max(1, round((1 + len(LOADS)) / both))


def probe(session) -> dict:
    """The probe on this CPU (``session``: an instructions.session.Session): the record {"type":
    "mul_loads", "pipes", "times"}; pipes None where the multiply and the loads do not meet."""
    times = {"mul": session.measure([MUL], []).value, "loads": session.measure(LOADS, []).value,
             "mul and loads": session.measure([MUL] + LOADS, []).value}
    return {"type": RECORD, "pipes": pipes(times), "times": {k: round(v, 3) for k, v in times.items()}}


def stored(path_) -> tuple[int | None, str]:
    """(the pipes a results file's probe found, where that came from)."""
    from .run import stored_record
    r = stored_record(path_, RECORD)
    if r is None:
        return None, "not measured: the model file has no probe of a load-op multiply beside plain loads"
    if r.get("pipes") is None:
        return None, "the load-op multiply and plain loads do not meet"
    t = r.get("times") or {}
    return int(r["pipes"]), (f"measured by cyclebench ports: the load-op multiply {t.get('mul')} cycles, two plain "
                             f"loads {t.get('loads')}, the three {t.get('mul and loads')}")
