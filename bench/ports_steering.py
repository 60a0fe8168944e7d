"""Benchmark (not a test; measures nothing): how the scheduling simulation steers an instance to a
unit, tried against the grids docs/ports-findings.md printed and the saved random mixes.

    python3 bench/ports_steering.py --model M.jsonl --latencies L.jsonl [--replay FILE ...]
        [--policy P ...] [--rows] [--processes N]

simulate.py gives an instance that holds one unit-cycle of a resource of units the unit with the
fewest instances waiting as it enters (``least``).  The other policies here:

* ``turn``: each such instance the next unit of its resource in program order;
  ``turn-slack1``/``turn-slack2``: the turn, unless its queue is longer than the shortest by more
  than 1 or 2 (as simulate.Units.dealt does for the vector pipes);
* ``slot``: the unit of the instance's slot in its dispatch group (the model's width a cycle,
  iterations back to back), modulo the units; ``least-slot``: the fewest waiting, ties from the
  slot's unit; ``least-group``: the fewest waiting as counted when the dispatch group began (the
  group's earlier picks added);
* ``sched-slot``, ``sched-turn``, ``sched-least``: one of :data:`SCHEDULERS` schedulers for the
  whole instruction (by slot, in turn over the instructions that hold a unit, or the one with the
  fewest waiting), every unit it holds the scheduler's number modulo that resource's units, so a
  load-op instruction's load goes with its ALU operation; ``sched-least-own``: the same, a
  resource with fewer units than schedulers taking its own fewest waiting where the number
  passes them.

Every policy leaves the dealt vector pipes (dealing.py) as simulate.py has them.  A row counts
within 10% of its measured cycles; the grids (``GRIDS``) are blocks whose forms the Zen 4 model
knows, with the cycles docs/ports-findings.md gives (its sections "Blocks the three AGUs bound",
"A compare on a dealt chain beside integer work", "The load path by kind, in small grids",
"Loads: the order and the run decide", "Over-predicted mixes taken apart"); ``--replay`` adds the
random mixes of saved ``bench/ports_accuracy.py --save`` files.
"""
from __future__ import annotations

import argparse
import json
import sys
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cyclebench.instructions.catalogue import Catalogue  # noqa: E402
from cyclebench.instructions.ports import simulate as S  # noqa: E402
from cyclebench.instructions.ports.latency import from_file  # noqa: E402
from cyclebench.instructions.ports.ensemble import one  # noqa: E402
from cyclebench.instructions.ports.predict import load as load_predictor  # noqa: E402

POLICIES = ["least", "turn", "turn-slack1", "turn-slack2", "slot", "least-slot", "least-group",
            "sched-slot", "sched-turn", "sched-least", "sched-least-own"]
SCHEDULERS = 4          # Zen 3/4: four integer schedulers (ALU and AGU)
RANDOM = "random mixes of modelled forms"
GR = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi"]
R16 = ["r8", "r9", "r10", "r11", "r12", "r13", "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r15", "r8", "r9"]


def _d(r: str) -> str:
    return {"rax": "eax", "rbx": "ebx", "rcx": "ecx", "rdx": "edx", "rsi": "esi", "rdi": "edi", "rbp": "ebp"}.get(r, r + "d")


def _kinds(spec: str) -> list[str]:
    """Letters to instructions, each operand on a line of its own at [r14+0x1000+0x40k+16(k mod 4)]:
    G ``mov r64, [m]``, A ``add r64, [m]``, C ``cmp dword [m], ebx``, c ``cmp r64, [m]``, V ``movsd
    xmm, [m64]``, M ``imul r8, [m64], imm32``, S ``sub r64, 2``."""
    out, k, g, v, s = [], 0, 0, 0, 0
    subs = ["r9", "r10", "r11", "r12", "r13", "r15", "rbp", "r9", "r10"]
    for ch in spec:
        m = f"[r14+{0x1000 + 0x40 * k + 16 * (k % 4):#x}]"
        k += ch != "S"
        if ch in "GAc":
            out.append(f"{dict(G='mov', A='add', c='cmp')[ch]} {GR[g % 6]}, qword ptr {m}")
            g += 1
        elif ch == "C":
            out.append(f"cmp dword ptr {m}, ebx")
        elif ch == "V":
            out.append(f"movsd xmm{v + 1}, qword ptr {m}")
            v += 1
        elif ch == "M":
            out.append(f"imul r8, qword ptr {m}, 0x12345")
        else:
            out.append(f"sub {subs[s]}, 2")
            s += 1
    return out


def grids() -> list[tuple[str, str, float]]:
    """(group, block, measured cycles) for the grids named in the module docstring (the blocks with a
    plain ``nop``, a form the model lacks, left out)."""
    rows = []
    agu = {1: [0.33, 0.33, 0.50, 0.75, 1.00, 1.25, 1.50], 2: [0.67, 0.75, 0.67, 0.83, 1.00, 1.25, 1.50],
           3: [1.00, 1.00, 1.08, 1.00, 1.17, 1.50, 1.67], 4: [1.33, 1.33, 1.50, 1.33, 1.33, 1.50, 2.00],
           5: [1.67, 1.69, 1.67, 1.69, 1.67, 2.00, 2.00], 6: [2.00, 2.20, 2.00, 2.02, 2.00, 2.00, 2.00]}
    for m, row in agu.items():          # m plain loads, k `mov r32, imm`
        for k, c in enumerate(row):
            rows.append(("AGUs", [f"mov {GR[i]}, qword ptr [r14+{0x200 + 0x48 * i:#x}]" for i in range(m)]
                         + [f"mov {_d(R16[j])}, 7" for j in range(k)], c))
    chain = ["ucomiss xmm1, xmm2", "cmpless xmm1, xmm2"]
    beside = {"mov": (lambda j: f"mov {_d(R16[j])}, 5", [(0, 3.00), (1, 3.00), (2, 3.00), (4, 3.00), (6, 3.00),
                                                           (7, 3.00), (8, 2.00), (9, 3.00), (10, 2.67)]),
              "lea": (lambda j: f"lea {R16[j]}, [rcx+0x1]", [(4, 3.00), (7, 3.00), (9, 3.00), (10, 2.67)]),
              "load": (lambda j: f"mov {R16[j]}, qword ptr [r14+{0x40 * (j + 1):#x}]",
                       [(4, 3.00), (7, 3.00), (8, 2.67), (9, 3.00), (10, 3.33)])}
    for x, (f, row) in beside.items():
        rows += [("compare chain", chain + [f(j) for j in range(k)], c) for k, c in row]
    rows += [("compare chain", ["addss xmm1, xmm2", "ucomiss xmm1, xmm2"] + [f"mov {_d(R16[j])}, 5" for j in range(k)], c)
             for k, c in [(0, 4.00), (8, 4.00), (10, 3.67), (12, 3.00), (14, 3.78), (16, 4.00)]]
    for spec, c in [("GGGGGG", 2.00), ("AAAAAA", 2.01), ("CCCC", 1.33), ("VG", 0.67), ("VGG", 1.00), ("VGGG", 1.33),
                    ("VC", 0.75), ("VCC", 1.13), ("VCCC", 1.50), ("VVC", 1.00), ("VVCC", 1.50), ("VVCCC", 1.87),
                    ("VVGG", 1.33), ("VVGGG", 1.67), ("VCGG", 1.33), ("VCCG", 1.33), ("VCCCG", 1.89), ("GGGV", 1.50),
                    ("Vccc", 1.50), ("VVVVVV", 3.00)]:
        rows.append(("loads by kind", _kinds(spec), c))
    mul = {"": [1.00, None, 1.00, 1.00, 1.64, 1.75, 1.97, 2.00, 2.26], "V": [1.33, 1.33, 1.00, 1.00, 1.72, 1.73, 2.01, 2.00, 2.28],
           "VV": [2.00, 2.00, 2.00, 1.81, 1.96, 1.90, 2.00], "GG": [1.50, 1.00, 1.00, 1.28, 1.75, 1.89, 2.00, 2.00]}
    rows += [("load-op multiply", _kinds("M" + rest + "S" * n), c) for rest, row in mul.items()
             for n, c in enumerate(row) if c is not None]
    two = ["imul rbx, qword ptr [r14+0x1000]", "movsd xmm1, qword ptr [r14+0x1050]", "mov rbx, 0x123456789"]
    rows += [("load-op multiply", two + more, c) for more, c in
             [([], 1.26), (["sub r9, 2"], 1.00), (["sub r9, 2", "sub r10, 2"], 1.01),
              (["andps xmm3, xmm4"], 1.26), (["movaps xmm3, xmm4"], 1.26)]]
    for s, c in [("gggg", 1.33), ("gggv", 1.50), ("vvggg", 1.67), ("ggvvvv", 2.46), ("vvg", 1.00), ("gvv", 1.00),
                 ("vgv", 1.00)]:
        g = v = 0
        block = []
        for i, ch in enumerate(s):
            a = f"[r14+{0x40 + 0x48 * i:#x}]"
            block.append(f"mov {GR[g]}, qword ptr {a}" if ch == "g" else f"movsd xmm{v + 1}, qword ptr {a}")
            g, v = g + (ch == "g"), v + (ch == "v")
        rows.append(("loads in order", block, c))
    return [(grp, "; ".join(b), c) for grp, b, c in rows]


class Steered(S.Units):
    """A unit resource whose instances are steered by :data:`POLICY`."""
    policy = "least"

    def __init__(self, k: int):
        super().__init__(k)
        self.frozen = None

    def steer(self, entered: int, slot: int, sched: int | None) -> int:
        self._settle(entered)
        p = self.policy
        if sched is not None and (sched < self.k or not p.endswith("-own")):
            return sched % self.k
        if p.startswith("turn"):
            unit = self.turn
            if p != "turn":
                short = min(range(self.k), key=lambda j: (len(self.waiting[j]), (j - self.turn) % self.k))
                if len(self.waiting[unit]) > len(self.waiting[short]) + int(p[-1]):
                    unit = short
            self.turn = (unit + 1) % self.k
            return unit
        if p == "slot":
            return slot % self.k
        if p == "least-slot":
            return min(((slot + j) % self.k for j in range(self.k)), key=lambda j: len(self.waiting[j]))
        if p == "least-group":
            if self.frozen is None or self.frozen[0] != entered:
                self.frozen = (entered, [len(q) for q in self.waiting])
            counts = self.frozen[1]
            unit = min(((self.turn + j) % self.k for j in range(self.k)), key=lambda j: counts[j])
            counts[unit] += 1
            self.turn = (unit + 1) % self.k
            return unit
        return self.choose(entered)


class SteeredScheduler(S.Scheduler):
    """simulate.Scheduler with its units steered by :attr:`Steered.policy` (``_pick``)."""
    width = 6               # the model's front-end width (_run sets it)

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.units = {r: Steered(u.k) for r, u in self.units.items()}
        self.queues: list[list[float]] = [[] for _ in range(SCHEDULERS)]
        self.next = 0
        self.last: int | None = None

    def _scheduler(self, entered: int, slot: int) -> int:
        for q in self.queues:
            q[:] = [t for t in q if t > entered]
        p = Steered.policy
        if p == "sched-slot":
            return slot % SCHEDULERS
        if p == "sched-turn":
            s, self.next = self.next, (self.next + 1) % SCHEDULERS
            return s
        s = min(((self.next + j) % SCHEDULERS for j in range(SCHEDULERS)), key=lambda j: len(self.queues[j]))
        self.next = (s + 1) % SCHEDULERS
        return s

    def _pick(self, i: int, entered: int):
        use = self.usage[i]
        whole = [r for r, u in use.items() if r in self.units and self.units[r].whole(u)]
        mine = [r for r in whole if not (r in self.pairs and self.dealt[i])]
        if not mine:
            return super()._pick(i, entered)
        slot = int((self.position - self.front[i] - entered) * self.width + 1e-6)   # its place in the group
        sched = self._scheduler(entered, slot) if Steered.policy.startswith("sched") else None
        self.last = sched
        pick = {r: self.units[r].dealt(entered, self.count % 2) for r in whole if r not in mine}
        pick.update({r: self.units[r].steer(entered, slot, sched) for r in mine})
        twice = {r: self.units[r].dealt(entered, self.count % 2) for r, u in use.items()     # as simulate.py
                 if self.twice[i] and self.dealt[i] and r in self.pairs and r not in pick and self.units[r].twice(u)}
        return pick, twice

    def __call__(self, i: int, ready: float) -> float:
        self.last = None
        begin = super().__call__(i, ready)
        if self.last is not None:
            self.queues[self.last].append(begin)
        return begin


def _rows(paths: list[Path], every: bool) -> list[tuple[str, str, float]]:
    """The grids' rows, then the saved blocks (random mixes; with ``every``, the other sets too)."""
    from cyclebench.blocks.code import block as code_of
    rows = [("grid: " + g, b, c) for g, b, c in grids()]
    for p in paths:
        for line in p.read_text().splitlines():
            d = json.loads(line)
            if d.get("set") == RANDOM or (every and "set" in d):
                block = d["block"] if "[" in d["block"] or " " in d["block"] else code_of(bytes.fromhex(d["block"])).code
                rows.append((("random " if d["set"] == RANDOM else "other ") + p.stem,
                             block.replace("\n", "; ") if isinstance(block, str) else block, d["measured"]))
    return rows


def _run(job):
    policy, model_path, lat_path, paths, every = job
    loaded = load_predictor(model_path)
    cat = Catalogue.load()
    lats = from_file(lat_path, cat, sorted(loaded.model.usage))[0]
    Steered.policy = policy
    SteeredScheduler.width = loaded.model.width or 1
    S.Scheduler = SteeredScheduler if policy != "least" else S.Scheduler
    out = []
    for group, block, measured in _rows(paths, every):
        p = one(block, loaded, cat, lats)
        if not p.unknown:
            chain = p.chain_bound >= p.cycles - 1e-9 and p.chain_bound > 0.3
            sim = p.simulated >= p.cycles - 1e-9 and p.simulated > p.resource_bound + 0.02
            out.append((group, block, measured, p.cycles, p.simulated,          # an abstract resource sets it
                        (p.binding_resource or "").startswith("R") and not chain and not sim))
    return policy, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--latencies", type=Path, required=True)
    ap.add_argument("--replay", type=Path, nargs="*", default=[])
    ap.add_argument("--policy", nargs="*", default=POLICIES)
    ap.add_argument("--every", action="store_true", help="the saved files' compiled and BHive blocks too")
    ap.add_argument("--rows", action="store_true", help="print the rows a policy moves across 10%% against least")
    ap.add_argument("--processes", type=int, default=1)
    args = ap.parse_args()
    policies = ["least"] + [p for p in args.policy if p != "least"]
    jobs = [(p, args.model, args.latencies, args.replay, args.every) for p in policies]
    with Pool(args.processes) as pool:
        done = dict(pool.map(_run, jobs))
    near = lambda r: abs(r[3] - r[2]) <= 0.1 * r[2]
    base = done["least"]
    under = [j for j, r in enumerate(base) if r[3] < 0.9 * r[2] and not r[0].startswith("other")]
    groups = sorted({r[0] for r in base if r[0].startswith("grid")})
    print("policy | " + " | ".join(g[6:] for g in groups) + " | grids | random mixes | an abstract resource binds"
          + f" | of the {len(under)} under-predicted rows")
    for p in policies:
        rows = done[p]
        grid = [r for r in rows if r[0].startswith("grid")]
        rand = [r for r in rows if r[0].startswith("random")]
        other = [r for r in rows if r[0].startswith("other")]
        bound = [r for r, b in zip(rand, [x for x in base if x[0].startswith("random")]) if b[5]]
        print(f"{p} | " + " | ".join(f"{sum(map(near, (r for r in grid if r[0] == g)))}/{sum(r[0] == g for r in grid)}"
                                     for g in groups)
              + f" | {sum(map(near, grid))}/{len(grid)} | {sum(map(near, rand))}/{len(rand)} | "
              f"{sum(map(near, bound))}/{len(bound)} | {sum(near(rows[j]) for j in under)}"
              + (f" | other sets {sum(map(near, other))}/{len(other)}" if other else ""))
        if args.rows and p != "least":
            for r, b in zip(rows, base):
                if near(r) != near(b):
                    text = r[1] if isinstance(r[1], str) else r[1].hex()
                    print(f"    {'+' if near(r) else '-'} {r[2]:.2f}: {b[3]:.2f} -> {r[3]:.2f} {r[0]}: {text[:110]}")


if __name__ == "__main__":
    main()
