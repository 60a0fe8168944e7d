"""How many mask registers the core can rename, beside the rate of copies that load a mask register,
in ONE process, over time.

    flock -x ~/.cache/cyclebench-tests/tests-alone.lock python3 bench/mask_rename.py [--rounds 20] [--sleep 0.7] [--cpu 1]

Copies that write a mask register from memory (``kmovw k, [m16]``) run at a rate set by how many of
them the core can hold in flight, not by its ports (``cyclebench/instructions/window.py``).  This
script times, in one process and one round after another, (1) seven ``kmovw k1..k7, [m]`` (cycles a
copy, against a chain of ``add`` for the clock) and (2) the *knee* of N independent copies behind a
block of 16 dependent ``imul`` (48 cycles): the smallest N whose group takes 3% longer than the block alone, for
register-only mask writes (``vpcmpgtd k, xmm, xmm``: the mask registers free for renaming), for
``kmovw k, [m]``, for 64-bit loads (``mov r64, [m]``) and for ``vpaddd xmm`` (the vector registers).
A round's two rates are taken before and after its knees.  ``--sleep`` idles the CPU between rounds.

It builds a small C program with gcc (the kernels are generated assembly) in a temporary folder; it
needs AVX-512 (AVX512F/BW for the mask forms) and exits with a message on other CPUs.  Figures are
TSC-based: cycles are the add chain's, so only ratios are meaningful, and a round in a burst of host
noise reads high everywhere (the script marks a round whose add-chain clock moved).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

STEPS = {   # kernel name -> (copy i's line, the Ns scanned)
    "kmask": (lambda i: f"vpcmpgtd k{1 + i % 7}, xmm1, xmm2", range(32, 65)),
    "kload": (lambda i: f"kmovw k{1 + i % 7}, [rdi+{2 * (i % 7)}]", range(32, 65)),
    "gload": (lambda i: f"mov {('rbx', 'rdx', 'r8', 'r9', 'r10', 'r11', 'r12')[i % 7]}, [rdi+{8 * (i % 7)}]",
              range(120, 180, 2)),
    "vadd": (lambda i: f"vpaddd xmm{1 + i % 7}, xmm8, xmm9", range(130, 190, 2)),
}
COPIES = 28        # a loop iteration of the rate kernels

C_MAIN = r"""
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <x86intrin.h>
#include "kernels.h"
static double best(kf f, void *p, long n) {
    unsigned long b = ~0UL;
    for (int r = 0; r < 5; r++) { unsigned long t0 = __rdtsc(); f(p, n); unsigned long t1 = __rdtsc(); if (t1 - t0 < b) b = t1 - t0; }
    return (double)b;
}
int main(int argc, char **argv) {
    int cpu = atoi(argv[1]), rounds = atoi(argv[2]); double pause = atof(argv[3]);
    cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu, &s); sched_setaffinity(0, sizeof s, &s);
    char *m = mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    memset(m, 0, 1 << 20);
    for (int r = 0; r < rounds; r++) {
        if (pause > 0) usleep((useconds_t)(pause * 1e6));
        double tick = best(addchain, m, 4000) / (4000.0 * COPIES);
        double before = best(kmovrate, m, 4000) / (4000.0 * COPIES) / tick;
        printf("%d %.3f", r, before);
        double block = best(imulblock, m, 2000) / 2000.0 / tick;
        printf(" %.1f", block);
        const char *last = "";
        for (int i = 0; i < NK; i++) {
            double c = best(ks[i].f, m, 2000) / 2000.0 / tick;
            if (strcmp(ks[i].kind, last) && c > block * 1.03) { printf(" %s=%d", ks[i].kind, ks[i].n); last = ks[i].kind; }
        }
        double tick2 = best(addchain, m, 4000) / (4000.0 * COPIES);
        printf(" %.3f %.3f\n", best(kmovrate, m, 4000) / (4000.0 * COPIES) / tick2, tick2 / tick);
        fflush(stdout);
    }
    return 0;
}
"""


def kernels() -> tuple[str, str]:
    """(assembly, C header) of the rate kernels and every knee kernel."""
    asm, names = [".intel_syntax noprefix", ".text"], []

    def fn(name: str, body: list[str]) -> None:
        asm.append(f".p2align 6\n.globl {name}\n{name}:\n  push rbx\n  push r12\n  mov rcx, rsi\n  mov rax, 3\n"
                   "  .p2align 6\n1:")
        asm.extend("  " + b for b in body)
        asm.append("  dec rcx\n  jnz 1b\n  pop r12\n  pop rbx\n  ret")

    fn("addchain", ["add rax, rdx"] * COPIES)
    fn("kmovrate", [STEPS["kload"][0](i) for i in range(COPIES)])
    fn("imulblock", ["imul rax, rax"] * 16)
    for kind, (line, ns) in STEPS.items():
        for n in ns:
            fn(f"k_{kind}_{n}", ["imul rax, rax"] * 16 + [line(i) for i in range(n)])
            names.append((kind, n))
    head = ["typedef void (*kf)(void *, long);", f"#define COPIES {COPIES}",
            "extern void addchain(void *, long), kmovrate(void *, long), imulblock(void *, long);"]
    head += [f"extern void k_{k}_{n}(void *, long);" for k, n in names]
    head.append("static struct { const char *kind; int n; kf f; } ks[] = {"
                + ", ".join(f'{{"{k}", {n}, k_{k}_{n}}}' for k, n in names) + "};")
    head.append(f"#define NK {len(names)}")
    return "\n".join(asm) + "\n", "\n".join(head) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="exit codes: 0 measured (or no AVX512BW to measure), 2 bad arguments, "
                                        "3 the probe could not be built or run")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--sleep", type=float, default=0.0, help="seconds idle before each round")
    ap.add_argument("--cpu", type=int, default=1, help="the CPU to pin to (default 1)")
    a = ap.parse_args(argv)
    if a.rounds < 1 or not 0 <= a.sleep <= 60 or a.cpu not in os.sched_getaffinity(0):
        ap.error(f"--rounds at least 1, --sleep 0-60 s, --cpu one of {sorted(os.sched_getaffinity(0))}")
    flags = open("/proc/cpuinfo").read()
    if " avx512bw" not in flags:
        print("this CPU has no AVX512BW: no mask registers to measure")
        return 0
    asm, head = kernels()
    with tempfile.TemporaryDirectory() as d:
        for name, text in (("kernels.S", asm), ("kernels.h", head), ("main.c", C_MAIN)):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        exe = os.path.join(d, "probe")
        try:
            subprocess.run(["gcc", "-O2", "-o", exe, "main.c", "kernels.S", "-Wl,-z,noexecstack"], cwd=d,
                           check=True, capture_output=True, text=True)
            print("round, kmovw cycles a copy, the block alone (cycles), knees (the first N over the block by 3%), "
                  "kmovw cycles a copy again")
            out = subprocess.run([exe, str(a.cpu), str(a.rounds), str(a.sleep)], capture_output=True, text=True,
                                 check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            why = (getattr(e, "stderr", None) or str(e)).strip().splitlines()
            print(f"error: the probe could not be built or run: {why[-1] if why else e}", file=sys.stderr)
            print("hint: it needs gcc (setup.sh installs it) and a CPU with AVX-512", file=sys.stderr)
            return 3
    for line in out.stdout.splitlines():
        p = line.split()
        drift = float(p[-1])
        print(" ".join(p[:-1]) + ("   (clock moved: host noise)" if abs(drift - 1) > 0.02 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
