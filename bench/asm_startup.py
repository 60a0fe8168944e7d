"""Wall time of one `cyclebench asm` from start to exit, beside the interpreter's own start-up,
and where the time goes inside the process.

    flock -x ~/.cache/cyclebench-tests/tests-alone.lock python3 bench/asm_startup.py [-n 15] [CODE]

Prints the median (and min, max) wall time of N runs of `python3 -m cyclebench asm CODE` and of
`python3 -c pass` (the floor no cyclebench change can lower: it includes whatever the site's .pth
files import), then one in-process breakdown. The package measured is the one `python3` imports
(set PYTHONPATH to an absolute path to time a worktree). The interpreter is this script's
own (sys.executable): a launcher in front of it (a pyenv shim adds about 50 ms) is not counted. The first run after a boot also probes the counters (the
answer is then cached); the figures are for the runs after it.

Two states: *seen before* (the snippet's assembled objects and decoded instructions are in the
cache folder, as for any snippet measured again) and *new* (a cache folder that holds the runner,
the probe answers, the clock history and the harness's calibration object, which are made once
per machine and toolchain, but no assembled or decoded snippet, emptied before every run: what a
snippet measured for the first time costs). With PYTHONDONTWRITEBYTECODE set, every
run also compiles the package's sources; the script says so.
"""
from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NEUTRAL = tempfile.gettempdir()     # a working folder that holds no cyclebench: PYTHONPATH decides
BREAKDOWN = r"""
import io, sys, time
t0 = time.perf_counter()
from cyclebench.cli.parser import build_parser
argv = ["asm", sys.argv[1]]
try:
    parser = build_parser(argv)
except TypeError:                   # a tree whose build_parser() takes no arguments
    parser = build_parser()
args = parser.parse_args(argv)
t1 = time.perf_counter()
from cyclebench.measurement import api
t2 = time.perf_counter()
prepared = api.prepare(sys.argv[1])
t3 = time.perf_counter()
result = api.measure(sys.argv[1])
t4 = time.perf_counter()
from cyclebench.cli.asm import emit
out, sys.stdout = sys.stdout, io.StringIO()
emit(result, args)
sys.stdout = out
t5 = time.perf_counter()
print(" ".join(f"{1e3 * (b - a):.2f}" for a, b in ((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5))))
"""
PHASES = ("cli import + parse", "import measurement.api", "prepare (checked assembly + harness)",
          "measure (prepare again, from memory, + runner)", "report")


def wall(cmd: list[str], n: int, env: dict | None = None, before=lambda: None) -> list[float]:
    times = []
    for _ in range(n):
        before()
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, cwd=NEUTRAL, env=env)
        times.append(time.perf_counter() - t)
    return times


def new_snippet_cache() -> tuple[dict, callable]:
    """(environment, emptier) for runs that find no assembled or decoded snippet in the cache."""
    from cyclebench.cache import cache_dir
    from cyclebench.snippet import features
    kinds = (importlib.import_module("cyclebench.snippet.assemble").CACHE_KIND, features.CACHE_KIND)
    real = cache_dir()
    folder = Path(tempfile.mkdtemp(prefix="cyclebench-new-snippet-"))
    for entry in real.iterdir():
        if entry.name not in kinds:
            os.symlink(entry, folder / entry.name)
    return {**os.environ, "CYCLEBENCH_CACHE": str(folder)}, lambda: [shutil.rmtree(folder / k, True) for k in kinds]


def breakdown(code: str, n: int, env: dict | None = None, before=lambda: None) -> list[float]:
    runs = []
    for _ in range(n):
        before()
        out = subprocess.run([sys.executable, "-c", BREAKDOWN, code], check=True, cwd=NEUTRAL, env=env,
                             capture_output=True, text=True).stdout
        runs.append([float(x) for x in out.split()])
    return [statistics.median(r[i] for r in runs) for i in range(len(PHASES))]


def show(label: str, times: list[float]) -> None:
    print(f"{label:44s} median {statistics.median(times):.3f} s  (min {min(times):.3f}, max {max(times):.3f}, "
          f"n={len(times)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("code", nargs="?", default="add rax, rbx; add rbx, rax")
    ap.add_argument("-n", type=int, default=15, help="runs per figure (default 15)")
    a = ap.parse_args()
    from cyclebench.machine.cpu import cpu_info
    print(f"CPU: {cpu_info().model_name}; python {sys.version.split()[0]}")
    import cyclebench
    print(f"package: {Path(cyclebench.__file__).parent}")
    subprocess.run([sys.executable, "-m", "cyclebench", "asm", a.code], stdout=subprocess.DEVNULL, check=True,
                   cwd=NEUTRAL)
    if sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set: where no .pyc exists yet, every run compiles the sources")
    cmd = [sys.executable, "-m", "cyclebench", "asm", a.code]
    env, empty = new_snippet_cache()
    show("python3 -c pass", wall([sys.executable, "-c", "pass"], a.n))
    show(f"python3 -m cyclebench asm '{a.code}'", wall(cmd, a.n))
    show("  the same, as a snippet not seen before", wall(cmd, a.n, env, empty))
    seen, new = breakdown(a.code, a.n), breakdown(a.code, a.n, env, empty)
    print(f"in one process, median of {a.n} (measure's prepare() is answered from the in-memory assembly cache):")
    print(f"  {'':48s} {'seen':>6s} {'new':>6s}")
    for i, name in enumerate(PHASES):
        print(f"  {name:48s} {seen[i]:6.1f} {new[i]:6.1f} ms")
    shutil.rmtree(env["CYCLEBENCH_CACHE"], True)


if __name__ == "__main__":
    main()
