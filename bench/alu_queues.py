"""A small simulation of four ALU queues fitted to Zen 4's multiply grids: does a steering rule,
with or without a timing rule of the multiply's pipe, give the measured cycles?

    python3 bench/alu_queues.py [--show ROW] [--code BLOCK]

Each block is a string of letters, every instruction on a register of its own (``--code`` prints
the assembly; docs/ports-findings.md, "Multiplies side by side", has the figures and how they were
read).  The simulation dispatches up to ``width`` µops a cycle in program order into four ALU
queues (a µop that takes no ALU takes a dispatch slot or, with ``free``, none), stops at a full
queue, and issues from each queue the oldest ready µop a cycle.  The multiply and ``pdep`` are held
to pipe 1, shifts, ``bt`` and three-part ``lea`` to pipes 1 and 2.  Steering: ``least`` (the
queue with the fewest waiting, turn about on a tie, as simulate.py), ``turn`` (each flexible µop
the next queue in turn; a µop that meets a full queue stops dispatch and its turn passes on),
``turn_rl`` (as ``turn``, a µop held to two pipes the shorter of them).  Timing of pipe 1:
``bus`` (a µop may not issue where its result would be written in the cycle of an earlier
µop's on the same pipe: a 1-cycle µop two cycles after a 3-cycle multiply), ``kind`` (only
where both write the same kind of result, a register or the flags), ``stall`` (a µop so held
blocks its pipe that cycle instead of letting a younger one pass), ``hold`` (no 1-cycle µop the
cycle after a multiply).  A block fits where the simulation is within 5% of the measurement; each
row prints its fits in each set at the width (6, 8), queue length (8, 24) and dispatch slots of
non-ALU µops that fit the grids best (docs/ports-findings.md, "A result-bus rule for the
multiply's pipe", has the table).
"""
from __future__ import annotations

import argparse

# letter -> (pipes, latency, chained to its own last instance, results written); pipes None: no ALU
OPS = {
    "I": ((1,), 3, False, "RF"), "V": ((1,), 3, False, "R"), "J": ((1,), 3, False, "RF"),
    "A": ((0, 1, 2, 3), 1, True, "RF"), "W": ((0, 1, 2, 3), 1, True, "RF"),
    "X": ((0, 1, 2, 3), 1, True, "RF"), "P": ((0, 1, 2, 3), 1, False, "RF"),
    "T": ((0, 1, 2, 3), 1, False, "F"), "K": ((0, 1, 2, 3), 1, False, "F"),
    "O": ((0, 1, 2, 3), 1, False, "R"), "Z": ((0, 1, 2, 3), 1, True, "R"), "G": ((0, 1, 2, 3), 1, False, "R"),
    "H": ((1, 2), 1, True, "RF"), "E": ((1, 2), 2, False, "R"), "B": ((1, 2), 1, False, "F"),
    "M": (None, 0, False, ""), "L": (None, 0, False, ""), "N": (None, 0, False, ""), "n": (None, 0, False, ""),
}
CODE = {"I": "imul {r}, r15, 3", "V": "pdep {r}, r15, r13", "J": "imul {r}, qword ptr [r14+{m}], 3",
        "A": "add {r}, 1", "W": "add {r}, 0x12345", "X": "xor {r}, 1", "P": "popcnt {r}, r15",
        "T": "test {r}, {r}", "K": "cmp {r}, 7", "O": "mov {r}, 5", "Z": "not {r}", "G": "lea {r}, [r15+8]",
        "H": "shl {r}, 2", "E": "lea {r}, [r15+r12*2+8]", "B": "bt {r}, 3", "M": "mov {r}, r15",
        "L": "mov {r}, qword ptr [r14+{m}]", "N": "nop", "n": "nop dword ptr [rax]"}
REGS = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "rbp"]

# Zen 4, cycles an iteration: the grids of docs/ports-findings.md ("Multiplies side by side") ...
GRID = dict(x.split(":") for x in """IIAAAA:2.75 IAIAAA:2.00 IIAAAAA:3.25 IIAAAAAA:3.50 IIAAAAAAAA:3.75
IAIAAAAA:2.00 IAAIAAAA:2.00 IAAAIAAA:2.00 IIXXXX:2.75 IIMMMM:2.00 IILLLL:2.00 IIHHHH:4.00 IIPPPP:2.75
IIEEEE:4.00 IIAANAA:2.75 NIIAAAA:2.75 IIIAAAAAA:3.00 IAIAIAAAA:3.00 IAAIAAIAA:3.00 IIIIAAAAAAAA:6.50
IAIAIAIAAAAA:5.00 IAAAA:1.65 IAAAAAAA:2.00 IAAAAAAAAA:2.56 IIAAAAAAA:3.67 INIAAAA:2.75 ILIAAAA:2.75
IMIAAAA:2.78 INNIAAAA:2.82 IIAAAAMM:2.00 IIMMAAAA:3.25 IIMMMMAAAA:3.67 IIAA:2.00 IIAAA:2.00 IAIA:2.00
IAIAA:2.00 IIA:2.00 IAA:1.00 IIIAAAA:3.00 IIIAAAAA:3.00 IIIIAAAA:4.00 IAIAIAIAAAA:4.00 IIIIAAAAA:4.00
IIAAAAIAAAA:4.50 IIAAAAIIAAAA:5.50 IIAAAAM:2.78 IIAAAAMMM:3.26 IIAAAANN:2.82 MIIAAAA:2.78 IIMAAAA:2.76
IIAMAAA:2.74 IIAAMAA:2.77 IIAAAMA:2.73 IIAAAALL:2.00 IIIIAAAAAAAAMMMM:6.50 IIAAAAMMMM:2.00
IIAAAAMMMMM:2.00 IIAAAAMMMMMM:2.42 IIAAAANNNN:2.00 IIAAAALLL:2.00 IIAAAALLLL:2.00 IIAAAAL:2.75
IIAAAMM:1.99 IIAAAAAMM:3.33 IIAAAAAAMM:2.00 IAIAAAM:2.00 IAIAAAMM:2.00 IAIAAAMMM:2.00
IIIIAAAAAAAAMM:6.50 IIAAMMAA:2.00 IIAMMAAA:2.97 IIAAAAnn:2.74 IIAAAAn:2.75 IIAAAAnnn:2.58 IIWWWW:2.75
IIWWWWMM:2.00 IIAAAAAAnn:3.50 IInnAAAA:2.74 IJAAAA:2.75 IAJAAA:2.00 VV:2.00 VVVV:4.00 VVAAAA:2.75
VAVAAA:2.00 VVAAAAAA:3.50 VAVAAAAA:2.00 IVAAAA:2.75 IAVAAA:2.00""".split())
# ... the load-op multiply beside `test` and `mov r, imm` ("The multiply's pipe among the ALUs") ...
PIPE = dict(x.split(":") for x in "JT:1.00 JTT:1.00 JTTT:1.00 JTTTT:1.50 ITTT:1.00 ITTTT:1.50 JOOO:1.00 JOOOO:1.62".split())
# ... and pdep (no flags written) against the multiply beside ALU forms by the results they write
# ("A result-bus rule for the multiply's pipe"; each block's other half is in the sets above)
KINDS = dict(x.split(":") for x in """VTTTT:1.25 IKKKK:1.50 VKKKK:1.25 IOOOO:1.63 VOOOO:1.63
IZZZZ:1.77 VZZZZ:1.77 IGGGG:1.62 VGGGG:1.63 VAAAA:1.75 IBB:1.50 VBB:1.50 IBBBB:2.50 VBBBB:2.50
IIBBBB:3.50 VVBBBB:3.50 IBIBBB:3.00 VVHHHH:4.00 VVEEEE:4.00 ITTTTTTTT:2.25 VTTTTTTTT:2.25
IOOOOOOOO:2.26 VOOOOOOOO:2.26 ITTOO:1.50 VTTOO:1.25 IOOTT:1.62
IITTTT:2.50 VVTTTT:2.25 ITITTT:2.00 VTVTTT:2.00 IIOOOO:2.75 VVOOOO:2.75 IOIOOO:2.00""".split())
SETS = {"grid": GRID, "pipe": PIPE, "kinds": KINDS}


def code(block: str) -> str:
    out, k, m = [], 0, 0
    for c in block:
        out.append(CODE[c].format(r=REGS[k % len(REGS)], m=hex(0x40 * (m + 1))))
        k, m = k + (c not in "Nn"), m + (c in "JL")
    return "; ".join(out)


def simulate(block: str, width: int, cap: int, steer: str, timing: str, free: bool, iters: int = 120) -> float:
    """Cycles an iteration over the middle third of ``iters`` iterations."""
    n, stream = len(block), block * iters
    total = len(stream)
    queues: list[list[tuple[int, int]]] = [[] for _ in range(4)]     # (µop, cycle dispatched)
    written: list[set] = [set() for _ in range(4)]                 # pipe -> (cycle, kind) of results
    long_issue: list[set] = [set() for _ in range(4)]              # pipe -> cycles a multiply issued
    done: dict[int, int] = {}
    issued: dict[int, int] = {}
    k = cyc = turn = 0
    while k < total or any(queues):
        for p in range(4):
            for e in queues[p]:
                i, when = e
                pipes, lat, chained, kinds = OPS[stream[i]]
                if when >= cyc or (chained and i >= n and done.get(i - n, 1 << 30) > cyc):
                    continue
                ks = kinds if "kind" in timing else "X"
                if ("bus" in timing and any((cyc + lat, x) in written[p] for x in ks)) or \
                        ("hold" in timing and lat < 3 and cyc - 1 in long_issue[p]):
                    if "stall" in timing:
                        break
                    continue
                queues[p].remove(e)
                written[p].update((cyc + lat, x) for x in ks)
                if lat >= 3:
                    long_issue[p].add(cyc)
                done[i], issued[i] = cyc + lat, cyc
                break
        m = 0
        while m < width and k < total:
            pipes = OPS[stream[k]][0]
            if pipes is None:
                issued[k] = cyc
                k, m = k + 1, m + (not free)
                continue
            cand = [(turn + j) % 4 for j in range(4) if (turn + j) % 4 in pipes]
            if steer == "least":
                pick = min(cand, key=lambda j: len(queues[j]))
                turn = (pick + 1) % 4
            else:
                pick = min(cand, key=lambda j: len(queues[j])) if steer == "turn_rl" and len(pipes) < 4 else cand[0]
                if len(pipes) == 4:
                    turn = (pick + 1) % 4
            if len(queues[pick]) >= cap:
                break
            queues[pick].append((k, cyc))
            k, m = k + 1, m + 1
        cyc += 1
    lo, hi = (iters // 3) * n, (2 * iters // 3) * n
    return (max(issued[i] for i in range(hi - n, hi)) - max(issued[i] for i in range(lo - n, lo))) * n / (hi - lo)


ROWS = {    # steering, pipe timing: the rows of docs/ports-findings.md's table
    "least": ("least", ""), "least+bus": ("least", "bus"), "least+bus+stall": ("least", "bus+stall"),
    "least+kind": ("least", "bus+kind"), "least+hold": ("least", "hold"), "turn": ("turn_rl", ""),
    "turn+bus": ("turn_rl", "bus+stall"), "turn+kind": ("turn_rl", "bus+stall+kind"),
}
SHAPES = [dict(width=w, cap=c, free=f) for w in (6, 8) for c in (8, 24) for f in (True, False)]


def fits(steer: str, timing: str, shape: dict) -> list[int]:
    """Blocks within 5% in each set."""
    return [sum(abs(simulate(b, steer=steer, timing=timing, **shape) - float(v)) / float(v) < 0.05
                for b, v in s.items()) for s in SETS.values()]


def best(steer: str, timing: str) -> tuple[dict, list[int]]:
    """The shape that fits most grid blocks (then most in all), and its fits."""
    scored = [(fits(steer, timing, sh), sh) for sh in SHAPES]
    got, shape = max(scored, key=lambda t: (t[0][0], sum(t[0])))
    return shape, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", choices=ROWS, help="every block's figure under one row, in its best shape")
    ap.add_argument("--code", help="print a block's assembly and exit")
    a = ap.parse_args()
    if a.code:
        print(code(a.code))
        return
    if a.show:
        steer, timing = ROWS[a.show]
        shape, _ = best(steer, timing)
        for s in SETS.values():
            for b, v in s.items():
                got = simulate(b, steer=steer, timing=timing, **shape)
                print(f"{b:18s} {float(v):5.2f} {got:5.2f}{'' if abs(got - float(v)) / float(v) < 0.05 else '  miss'}")
        return
    print(f"{'row':16s} " + "  ".join(f"{s} ({len(v)})" for s, v in SETS.items()) + "  width, queue, free slots")
    for name, (steer, timing) in ROWS.items():
        shape, got = best(steer, timing)
        print(f"{name:16s} " + "  ".join(f"{g:>{len(s) + len(str(len(v))) + 3}d}" for g, (s, v) in zip(got, SETS.items()))
              + f"  {shape['width']}, {shape['cap']}, {shape['free']}")


if __name__ == "__main__":
    main()
