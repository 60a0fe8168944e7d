"""Study options every study shares (study.base.preset, study.base.comma_list): refused before
anything is built or measured, and no output folder is made; a --routine that is no shared object
is refused while preparing, before anything is timed."""
import os

from bad_input import Case

CASES = [
    Case(f"study-{name}-{what}", ["study", name, *args, "--out", "{tmp}/out"], 2, error, hint)
    for name in ("memset", "memory", "paging", "dispatch", "bounds")
    for what, args, error, hint in (
        ("zero-repetitions", ["-n", "0"], r"0 repetitions is out of range", r"1 <= -n"),
        ("negative-repetitions", ["-n", "-3"], r"-3 repetitions is out of range", r"1 <= -n"),
    )
] + [
    Case(f"study-{name}-empty-experiments", ["study", name, "--experiments", ",", "--out", "{tmp}/out"], 2,
         r"an empty list was given", r"--experiments")
    for name in ("memset", "memory", "paging", "dispatch", "bounds")
] + [
    Case(f"study-{name}-unknown-experiment", ["study", name, "--experiments", "nope", "--out", "{tmp}/out"], 2,
         r"unknown experiment.* 'nope'", r"(use|experiments:) ")
    for name in ("memset", "memory", "paging", "dispatch", "bounds")
] + [
    # --parts: the bounds study's old spelling of --experiments, still accepted
    Case("study-bounds-unknown-part", ["study", "bounds", "--parts", "instructions,mpx", "--out", "{tmp}/out"], 2,
         r"unknown experiment, kernel or build 'mpx'", r"experiments: instructions, sequences"),
    Case("study-bounds-empty-parts", ["study", "bounds", "--parts", ",", "--out", "{tmp}/out"], 2,
         r"an empty list was given", r"--experiments"),
    # --routine names a file that is no shared object: refused while preparing, before any timing
    Case("study-routine-folder", ["study", "memset", "--quick", "--kernels", "libc", "--routine", "x={tmp}:f",
                                  "--out", "{tmp}/out"], 2, r"is not a regular file", r"shared object"),
    Case("study-routine-fifo", ["study", "memset", "--quick", "--kernels", "libc", "--routine", "x={tmp}/fifo:f",
                                "--out", "{tmp}/out"], 2, r"fifo is not a regular file", r"shared object",
         setup=lambda tmp: os.mkfifo(os.path.join(tmp, "fifo")), subprocess=True, timeout=60),
    # a results.jsonl that cyclebench did not write is never moved aside: refused before any work
    Case("study-foreign-results-file", ["study", "memset", "--quick", "--out", "{tmp}/out"], 10,
         r"out/results\.jsonl is not a cyclebench results file", r"move or rename it yourself",
         files={"out/results.jsonl": b"my own notes\n"}, intact=("out/results.jsonl",)),
]
