"""The bounds study's tables as shown (text, Markdown, CSV), one per part. Our figures are
TSC-calibrated core cycles on this CPU; the reference's are published for a Skylake with MPX
and are labelled so. A trailing ``!`` marks a flagged figure (unstable, or noisy)."""
from __future__ import annotations

from cyclebench.reports.model import Column, Table

from . import published as pub
from . import snippets

FLAG = "'!': flagged (an unstable measurement, or repetitions spread over 5% of the median): treat with care."
PUB = f"published: {pub.SOURCE}"


def _t(title, headers, rows, notes) -> Table:
    cols = [Column(f"c{i}", h, "left" if i < 2 else "right") for i, h in enumerate(headers)]
    return Table(title, cols, [{c.key: ("-" if v is None else str(v)) for c, v in zip(cols, r)} for r in rows], notes)


def _f(v, d=2, flag=False):
    return None if v is None else f"{v:.{d}f}" + (" !" if flag else "")


def instructions_view(rows) -> Table:
    out = []
    for r in rows:
        p = r["published"] or (None, None, None, None)
        out.append([r["name"], r["label"] or (f"replaces {r['replaces']}" if r["replaces"] else ""),
                    _f(r["cycles"], 3, r["flag"]), _f(r["per_cycle"], 2), r["instructions"], p[0], p[1], p[2], p[3]])
    return _t("Part 1: bnd* instructions and their software stand-ins (1,000 copies in a loop)",
              ["form", "on this CPU", "cycles per copy", "copies per cycle", "instructions per copy",
               "published µops", "published tput", "published lat", "published ports"], out,
              ["Ours: TSC-calibrated core cycles per copy of the form (throughput: copies are independent). "
               f"Every bnd* row {snippets.NOP}: its figure is a hint-NOP's, not MPX's.",
               "The bnd* forms have no result a dependent instruction could read (the reference's note 2), so no "
               "latency is measured; the published latencies are the reference's estimates.",
               "Software rows: the check a compiler emits instead (registers r8/r9 hold the bounds); bndldx/bndstx "
               "as the emulated MPX's table walk (c/mpxemu.h); ASan's shadow check stands in for bndcl + bndcu.",
               PUB + " (throughput in instructions per cycle, latency in cycles, port use per cycle)", FLAG])


def sequences_view(rows) -> Table:
    out = []
    for r in rows:
        cells = [r["name"], "yes" if r["check"] is None else ""]
        for kind in snippets.KINDS:
            s = r[kind]
            cells += [_f(s and s["ipc"], 2, s and s["flag"]), _f(s and s["cycles"], 3)]
        cells.append(r["published_ipc"])
        out.append(cells)
    return _t("Part 2: IPC of check sequences before a load or a store",
              ["sequence", "baseline", "bnd NOP: IPC", "cycles", "cmp/jcc: IPC", "cycles", "ASan shadow: IPC", "cycles",
               "published IPC (MPX)"], out,
              ["'r': the checked address is a register; 'm': an address expression (the cmp/jcc and ASan forms "
               "compute it with lea first). Cycles are per copy of the whole sequence, IPC = its instructions / "
               "cycles (exact: the branches are never taken). The first rows of each access are this CPU's own "
               "load and store baselines.",
               f"bnd columns: {snippets.NOP}. ASan has one shadow check per access, whatever the bounds, so its "
               "'bndcl + bndcu' rows repeat its single-check rows.", PUB, FLAG])


BUILD_NAMES = {"native": "native", "asan": "ASan", "asan_writes": "ASan, writes only", "ubsan": "UBSan bounds (trap)",
               "inline": "inline checks", "mpx_emu": "emulated MPX"}


def overhead_view(rows) -> Table:
    out = []
    for r in rows:
        nat = r["builds"]["native"]
        cells = [r["kernel"], f"{r['size']:,}", _f(nat["per_access"], 3)]
        for b in ("asan", "asan_writes", "ubsan", "inline", "mpx_emu"):
            f = r["builds"].get(b)
            cells.append(None if not f else (_f(f["ratio"], 2, f["ratio_flag"]) or "-") + f" ({_f(f['ratio_wall'], 2) or '-'})")
        p = r["published"]
        cells += [f"{p['gcc_mpx']:.2f}", f"{p['icc_mpx']:.2f}", f"{p['gcc_mpx_only_write']:.2f}",
                  f"{p['gcc_mpx_no_narrow_bounds']:.2f}"]
        out.append(cells)
    return _t("Part 3: slowdown over native (time per pass / native's)",
              ["kernel", "elements", "native cycles per access", "ASan", "ASan writes", "UBSan", "inline",
               "emulated MPX", "published GCC-MPX", "published ICC-MPX", "published GCC-MPX writes",
               "published GCC-MPX no narrowing"], out,
              ["Ours: whole programs (c/kernels.c, gcc -O2 -fno-tree-vectorize). First figure: the ratio of the "
               "thread CPU time per pass the program measured (CLOCK_THREAD_CPUTIME_ID, which other processes' "
               "preemption cannot inflate; the fastest of 20 slices of a 2n run's passes, the fastest over the "
               "repetitions, which avoids the host's bursts); in brackets: time_programs' wall-clock figure (n and 2n "
               "passes interleaved, the fastest 2n run minus the fastest n run). '!' when the two differ by over "
               "10%. Native cycles per access from CPU time x the calibrated clock. Elements: bytes (array*), structs, "
               "pointers (5 stores each).",
               "Published: mean time over 10 runs per build, over the same compiler's native, from the reference's "
               "raw_results/micro/raw.csv (Skylake, MPX hardware); 'writes': -fchkp-check-read off; "
               "'no narrowing': -fno-chkp-narrow-bounds."])


def tables_view(rows) -> Table:
    out = []
    for r in rows:
        for b, f in r["builds"].items():
            rep = f["report"]
            out.append([f"{r['variant']}, {r['chunks']:,} chunks", BUILD_NAMES[b], _f(f["seconds"] * 1e3, 1, f["flag"]),
                        _f(f["ratio"], 2, f["ratio_flag"]), rep.get("user_us"), rep.get("sys_us"), rep.get("minflt"),
                        rep.get("page_faults"), rep.get("tables"),
                        f"{r['published']:.2f}" if b == "mpx_emu" else None])
    return _t("Part 4: the OS cost of bounds tables (1 MiB-aligned chunks, a pointer stored in each)",
              ["variant", "build", "ms per round", "/ native", "user µs", "system µs", "minor faults",
               "page faults (perf sw)", "tables mapped per round", "published MPX / native"], out,
              ["MPX bounds tables need kernel support that Linux removed in 5.6, so the reference's 2.33x (alloc) "
               "and 2.25x (alloc + free) are published only; beside them the closest analogue measurable here: the "
               "emulated MPX maps a 4 MiB table per 1 MiB region on first store (c/mpxemu.h).",
               "ms per round: the n/2n difference of whole runs (alloc keeps its chunks until exit, so their release "
               "at exit is included, as in the reference's whole runs). user/system µs and faults: per round, read "
               "by the program around its rounds (getrusage, and the page-faults software perf event: there is "
               "no PMU here for the reference's instruction counts). Built -O0 as the reference.", FLAG])


def race_view(rows) -> Table:
    out = []
    for r in rows:
        what = "false negatives (unflagged out-of-bounds reads)" if r["mode"] == "fn" else \
            "false positives (flagged in-bounds reads)"
        out.append([r["mode"], BUILD_NAMES[r["build"]], f"{r['runs']}", f"{r['accesses'] or 0:,}",
                    f"{r['flagged']:,}" if r["build"] == "mpx_emu" else "-",
                    f"{r['false_outcomes']:,} {what}" if r["build"] == "mpx_emu" else "-",
                    f"{r['runs_with_false']}" if r["build"] == "mpx_emu" else "-",
                    f"{r['init_bounds']:,}" if r["build"] == "mpx_emu" else "-",
                    f"{r['caught_runs']} of {r['runs']}", r["object_distance"]])
    return _t("Part 5: the multithreading race (two threads pinned to CPUs 0 and 1)",
              ["test", "build", "runs", "reads", "flagged", "false outcomes", "runs with one", "INIT bounds loads",
               "runs stopped by a report", "obj2 - obj1 (bytes)"], out,
              ["fn reads 1.5 KiB past the object each pointer names (always a bug): a correct checker flags every "
               "read; fp reads at offset 0 (always correct): a correct checker flags none. Published (MPX, GCC and "
               "ICC): fn flags fewer than all reads, fp raises #BR non-deterministically.",
               "Emulated MPX: pointer then bounds stored by one thread, pointer then bounds loaded by the other, "
               "each non-atomically; a failed check is counted (CHKP_RT_MODE=count). 'INIT bounds loads': the "
               "table entry held another pointer, so nothing was checked."])
