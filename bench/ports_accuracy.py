#!/usr/bin/env python3
"""Benchmark (not a test): the resource model inferred from throughput (``cyclebench ports``),
against the published ports column and as a throughput predictor beside llvm-mca-16.

Prints
* port-set agreement with the published ports column (the uops.info column of the CPU the model was
  measured on, or --arch),
  on every studied form that has one (portsets.compare: µops per mapped port set, a pumped
  register width counted by the column's own rule);
* predicted-vs-measured error of whole blocks: the share within 10% and the mean absolute
  percentage error, for random mixes of the modelled forms, for basic blocks of the project's
  own C kernels (gcc -O2, objdump; memory operands rebased onto the harness's data area) and for
  BHive blocks (cyclebench/blocks/data) whose every instruction is a modelled form, with
  llvm-mca-16 (-mcpu, default this CPU's from the microarchitecture table) on the same blocks;
* where the model misses by more than 10%: which bound set its figure (the scheduling simulation
  where it is above both bounds, the front end, a resource, a form's own throughput alone, the
  dependency chains), over or under;
* the share within 10% of the blocks with no memory operand and of those with one apart
  (ports_figures.by_memory): where loads read levels that vary from process to process (a Zen 3
  guest, docs/ports.md), the second holds those readings' misses.

Random and compiled blocks are measured with the instruction tables' session (cycles per
iteration of the block, harmless vector values), BHive blocks with ``cyclebench block``'s
measurement (bulk.run, its start state and memory mapping).  Only stable readings count: a
reading the measurement flags unstable (a noise burst; a busy SMT sibling on the host, which its
contention gauge sees, slows throughput-bound code) is taken again on the next CPU of --cpus in
turn, and a block with no stable reading is left out of the figures and counted (`Readings`).
Latencies for the chain bound come from the published column or --latencies (a cyclebench inst
results file).  Wrap a measuring run in the test suite's lock; run it on a quiet machine.

``--save FILE`` writes every measured block (its set, text, init, measured cycles, CPU,
llvm-mca's figure) as it goes; ``--replay FILE...`` predicts those blocks again with the model
given, measuring nothing; ``--remeasure FILE`` (with ``--save``) measures a saved file's blocks
again as above (a random mix's init drawn again from its seed where the file lacks it), and
``--replay FILE... --again FILE...`` gives the figures apart for the blocks the two passes read
alike (within 5%) and for the others: what one pass can show where blocks do not read the same twice.

``--model`` takes one results file of ``cyclebench ports`` or several of this CPU (the same command
run again into another file): the prediction is then the mean of the models' figures
(ports/ensemble.py); the port-set agreement and the probe lines are the first file's.

Run: python3 bench/ports_accuracy.py --model ports.jsonl [ports-again.jsonl] [--random 40] [--compiled 60] [--bhive 60] [--seed 1]
                                     [--save blocks.jsonl | --replay blocks.jsonl ...] [--rows] [--cpus 0,1]
     python3 bench/ports_accuracy.py --model ports.jsonl --remeasure old.jsonl --save new.jsonl
     python3 bench/ports_accuracy.py --model ports.jsonl --replay old.jsonl --again new.jsonl

A block whose reading's floating-point work met denormals (MXCSR's flags after the run,
measurement/evaluate.fp_flags_warning: a random mix that reads as a float what an integer
instruction wrote) is saved with ``"values": true`` and also counted apart: its figure holds a cost
of the values, which no model of instructions has. ``--values FILE`` gives that flag to files
saved before it was kept (bench/ports_values.py writes FILE).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.append(str(ROOT))      # ports_figures.py beside this file, also when a test loads this one by path

from cyclebench.errors import CycleBenchError, UsageError  # noqa: E402
from cyclebench.instructions.bulk import default_cpus  # noqa: E402
from cyclebench.instructions.catalogue import Catalogue  # noqa: E402
from cyclebench.machine.cpu import cpu_info  # noqa: E402
from cyclebench.measurement.stability import MIN_MODE_GAP  # noqa: E402
from cyclebench.instructions.llvm_mca import run as mca_run  # noqa: E402
from cyclebench.instructions.ports.blocks import compiled_blocks, random_blocks  # noqa: E402
from cyclebench.instructions.ports.portsets import against  # noqa: E402
from cyclebench.instructions.ports.latency import from_file  # noqa: E402
from cyclebench.instructions.ports.ensemble import OWN, Models, measured_on, one, spread  # noqa: E402
from cyclebench.instructions.ports.run import load  # noqa: E402
from cyclebench.instructions.published import read_csv  # noqa: E402
from cyclebench.instructions.reference import resolve_arch  # noqa: E402
from cyclebench.instructions.session import Session  # noqa: E402
from cyclebench.measurement.evaluate import FP_VALUES  # noqa: E402
from ports_figures import bound, print_rows, report, values_report  # noqa: E402

BHIVE = ROOT.parent / "cyclebench" / "blocks" / "data" / "bhive_blocks.csv"
BHIVE_SET = "BHive blocks of modelled forms (cyclebench block's measurement)"


SAVED = None          # --save: the open file each measured block is written to, as it is measured


def record(ours, mca, rows, p, m, q, text, saved_as=None, block=None, **extra):
    """One block's figures; ``saved_as`` (its set's name) also writes it to the --save file, with
    ``block`` (what predict() takes again: the lines, or the BHive hex) and ``extra`` (its init,
    the CPU it was read on)."""
    ours.append((p.cycles, m))
    mca.append((q, m))
    rows.append((m, p.cycles, p.resource_bound, p.chain_bound, q, text, bound(p), p.binding_resource, p.simulated,
                 spread(p)))
    if SAVED is not None and saved_as:
        SAVED.write(json.dumps({"set": saved_as, "block": block or text, "text": text, "measured": m,
                                "mca": q, **extra}) + "\n")
        SAVED.flush()


class Readings:
    """Stable readings of blocks, or none: a reading flagged unstable (or non-linear in the copies,
    or below the resolution: no figure of the block's cost) is taken again on the next
    CPU in turn (up to TRIES readings), starting each block on the CPU that last read stable
    (``session``: a Session's maker, given the CPU). Zen 4 KVM guest: a mix saved at 1.13 cycles
    when the bench kept flagged readings reads 0.78 on CPU 1 and 0.75 on CPU 0; flagged readings
    of others ran 3.02-6.09 and 1.50-2.35 cycles."""

    TRIES = 4

    def __init__(self, cpus, session=lambda cpu: Session(budget=0.5, cpu=cpu), processes=2):
        self.cpus, self.processes = cpus, processes
        self.sessions = [session(c) for c in cpus]
        self.first = 0
        self.again = self.unsettled = 0
        self.modes = None       # the last stable reading's two modes (faster, slower), when it read two
        self.values = False     # its floating-point work met denormals (evaluate.fp_flags_warning)

    def __call__(self, lines, init):
        """(cycles, cpu) of a stable reading, or None. A block whose repetitions read two modes
        (measurement/stability.two_modes) gives the faster mode's level, the two kept in
        ``modes``; a stable reading that showed one level is taken once more, in another process
        (one reading of a Zen 4 mix with two modes shows both 6-8 times in 10: docs/ports-findings.md,
        "Two modes"), so that a re-measure reads such a block alike.  Two such readings each of one
        level, apart by more than two_modes' gap, are the two levels too: a Zen 3 kernel block,
        ``mov rax, [r14+0x200]; mov rbx, [r14+0x240]; cmp eax, 1``, read 0.958 and 0.668 cycles,
        each stable, in two processes a minute apart (as the inference's mixes, the faster of two
        runs, would read it).  With ``processes`` above two, each single-level reading is taken
        again in up to that many processes, the fastest and the slowest kept: on the same guest
        ``mov r9d, [r14+0x228]; mov rdx, [r14+0x208]; cmp r9d, 1`` read 0.971, 0.867 and 0.899 in
        three processes and ``mov r9, ...; cmp r9, 1`` 0.956, 0.87 and 0.667."""
        got = self._stable(lines, init)
        self.modes = got and got[2]
        levels = [got[0]] if got else []
        counts = self.again, self.unsettled             # the further readings are no retries
        while got and not self.modes and len(levels) < self.processes:
            try:
                again = self._stable(lines, init)
            except CycleBenchError:
                again = None
            if not again:
                break
            self.modes = again[2]
            levels.append(again[0])
        self.again, self.unsettled = counts
        if levels and not self.modes and min(levels) * (1 + MIN_MODE_GAP) < max(levels):
            self.modes = (min(levels), max(levels))
        if self.modes:
            return self.modes[0], got[1]
        return got and got[:2]

    def _stable(self, lines, init):
        """(cycles, cpu, modes) of a stable reading, or None; a failed reading (a burst can fail the
        clock calibration's own check) counts as a try, and the last failure is raised if all fail."""
        failed = None
        for k in range(self.TRIES):
            i = (self.first + k) % len(self.sessions)
            try:
                m = self.sessions[i].measure(lines, init, per=1)
            except CycleBenchError as e:
                failed = e
                continue
            if m.stable and m.linear and m.below is None:    # a bound or a non-linear cost is no figure
                self.first = i
                self.values = any(w.startswith(FP_VALUES) for w in m.warnings)
                self.again += k > 0
                return m.value, self.cpus[i], getattr(m, "modes", None)
        if failed is not None:
            raise failed
        self.unsettled += 1
        return None

    def summary(self):
        return (f"  readings: {self.again} blocks read again after an unstable reading; {self.unsettled} left out "
                f"(no stable reading in {self.TRIES} tries on CPUs {', '.join(map(str, self.cpus))})")


def near(p, m):
    """A prediction within 10% of a measured figure (the goal's measure)."""
    return abs(p - m) <= 0.1 * m


def repeat_report(source, twice, agree=0.05):
    """Blocks measured twice (``twice``: predicted, first reading, second): the model's share within
    10% apart for the blocks whose two readings agree within ``agree`` and for the others, where a
    figure within 10% of either reading is counted too.  A block that reads otherwise from one
    pass to the next bounds what one pass can show (docs/ports.md, "Measured on a Zen 3 core")."""
    if not twice:
        return
    same = [(p, a) for p, a, b in twice if abs(a - b) <= agree * min(a, b)]
    apart = [(p, a, b) for p, a, b in twice if abs(a - b) > agree * min(a, b)]
    print(f"  read again ({source}): {len(same)} of {len(twice)} blocks within {agree:.0%} of their first "
          f"reading, predicted within 10% for {sum(near(p, a) for p, a in same)}"
          + (f" ({sum(near(p, a) for p, a in same) / len(same):.1%})" if same else "")
          + f"; {len(apart)} further apart, within 10% of the first reading for "
          f"{sum(near(p, a) for p, a, _ in apart)} and of either for {sum(near(p, a) or near(p, b) for p, a, b in apart)}")


def modes_report(moded):
    """Blocks whose repetitions read two modes (measurement/stability.two_modes; the figure counted
    is the faster, Readings): how many, and how the prediction stands to each mode."""
    if not moded:
        return
    fast = sum(near(p, m[0]) for p, _, m, _ in moded)
    slow = sum(near(p, m[1]) for p, _, m, _ in moded)
    either = sum(near(p, m[0]) or near(p, m[1]) for p, _, m, _ in moded)
    print(f"  two modes in {len(moded)} blocks: predicted within 10% of the faster mode {fast}, of the slower "
          f"{slow}, of either {either}")
    for p, got, m, text in moded:
        print(f"    {m[0]:.2f} or {m[1]:.2f}, counted {got:.2f}, predicted {p:.2f}: {text}")


def evaluate(name, blocks, pred, readings, mcpu):
    ours, mca, rows, moded, flags = [], [], [], [], []
    readings.again = readings.unsettled = 0          # counted by set
    for lines, init, q in blocks:
        text = "\n".join(lines)
        try:
            p = pred(text)
        except CycleBenchError:
            continue
        if p.unknown:
            continue
        try:
            got = readings(lines, init)
        except CycleBenchError as e:
            print(f"  not measured ({e.cause}): {'; '.join(lines)}")
            continue
        if got is None:
            print(f"  left out, no stable reading: {'; '.join(lines)}")
            continue
        if q is None and mcpu:
            try:
                clean = "\n".join(ln.replace("{load} ", "").replace("{store} ", "").replace("{evex} ", "")
                                  for ln in lines)
                q = mca_run(clean, mcpu, iterations=200).cycles_per_iteration
            except CycleBenchError:
                q = None
        two = {"modes": list(readings.modes)} if readings.modes else {}
        values = readings.values
        record(ours, mca, rows, p, got[0], q, "; ".join(lines), name, text, init=list(init), cpu=got[1], **two,
               **({"values": True} if values else {}))
        flags.append(values)
        if two:
            moded.append((p.cycles, got[0], readings.modes, "; ".join(lines)))
    report(name, ours, mca, rows)
    values_report(ours, flags)
    modes_report(moded)
    print(readings.summary())
    return rows


def bhive(pred, n, rng, mcpu, cpus, chosen=None):
    """BHive blocks whose every instruction is a modelled form, measured by cyclebench block
    (``chosen``: the blocks of a --remeasure file, by hex, with their saved llvm-mca figures)."""
    from cyclebench.blocks import bulk
    from cyclebench.blocks.code import block
    from cyclebench.blocks.measure import clean, why_not_clean
    from cyclebench.blocks.predictors import LlvmMca, PredictionFailed
    picked = []
    for row in bulk.read_csv(BHIVE):
        if chosen is not None and row["hex"] not in chosen:     # --remeasure: these blocks only
            continue
        try:
            code = block(bytes.fromhex(row["hex"])).code
            p = pred(code)
        except CycleBenchError:
            continue
        if not p.unknown:
            picked.append((row, code, p))
    if chosen is None:
        print(f"BHive: {len(picked)} of its blocks use only modelled forms; measuring {min(n, len(picked))}")
        picked = rng.sample(picked, min(n, len(picked)))
    docs = bulk.run([r for r, _, _ in picked], cpus=cpus)     # unstable blocks read again (bulk.RETRIES)
    by_hex = {d["hex"]: d for d in docs}
    mca_pred = LlvmMca(mcpu)
    ours, mca, rows, moded = [], [], [], []
    unsettled = 0
    for row, code, p in picked:
        d = by_hex.get(row["hex"])
        if d is None or not clean(d):
            why = "not measured" if d is None else why_not_clean(d)
            unsettled += why.startswith("unstable")
            print(f"  left out, {why}: {d and d.get('text') or row['hex']}")
            continue
        try:
            q = chosen[row["hex"]] if chosen is not None else mca_pred.predict(code)
        except PredictionFailed:
            q = None
        m, two = d["cycles"], d.get("modes")     # the faster of two modes, as Readings counts it
        if two:
            m = two[0]
            moded.append((p.cycles, m, two, d.get("text") or row["hex"]))
        record(ours, mca, rows, p, m, q, d.get("text") or row["hex"], BHIVE_SET, row["hex"],
               cpu=d.get("cpu"), **({"modes": two} if two else {}))
    report(BHIVE_SET, ours, mca, rows)
    modes_report(moded)
    if len(cpus or ()) != 1 and unsettled > len(picked) / 2:
        # Zen 1: two busy vCPUs read 2.32-2.45 GHz against one's 2.54, below each CPU's history
        print(f"  hint: {unsettled} of {len(picked)} BHive blocks were unstable on several CPUs at once; "
              "a core that clocks lower with both busy reads below its history: try --cpus 0")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="exit codes: 0 done; 2 bad arguments or an unknown CPU; 10 a model file "
                                        "that is missing or holds no model; the others as in cyclebench --help")
    ap.add_argument("--model", type=Path, required=True, nargs="+",
                    help="results file of cyclebench ports; several of this CPU: the mean of the models")
    ap.add_argument("--random", type=int, default=40)
    ap.add_argument("--compiled", type=int, default=60)
    ap.add_argument("--bhive", type=int, default=60)
    ap.add_argument("--arch", default="auto",
                    help="the published column: auto (that of the CPU the model was measured on) or a uops.info code")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mcpu", help="llvm-mca -mcpu (default: this CPU's, from the microarchitecture table)")
    ap.add_argument("--latencies", type=Path, help="a cyclebench inst results file (measured latencies)")
    ap.add_argument("--rows", action="store_true", help="print every block")
    ap.add_argument("--as-inferred", action="store_true",
                    help="predict with the model as inferred, not mended against its own readings (repair.py)")
    ap.add_argument("--save", type=Path, help="write each measured block (set, block, measured, llvm-mca) here")
    ap.add_argument("--replay", type=Path, nargs="+", metavar="FILE",
                    help="predict the blocks --save files hold again, measuring nothing (several: pooled too)")
    ap.add_argument("--values", type=Path, metavar="FILE",
                    help="with --replay: the random mixes bench/ports_values.py found meeting denormals, for "
                         "--save files written before a reading kept that flag")
    ap.add_argument("--again", type=Path, nargs="+", metavar="FILE",
                    help="with --replay: the same blocks measured again (--remeasure), one file for each --replay "
                         "file in order: the figures also apart for blocks whose two readings agree within 5%%")
    ap.add_argument("--remeasure", type=Path, help="measure the blocks a --save file holds again (with --save)")
    ap.add_argument("--processes", type=int, default=2, choices=(1, 2, 3, 4),
                    help="2-4: a stable reading that showed one level is taken again, in up to this many "
                         "processes in all, to find a block's levels; the fastest is counted (Readings)")
    ap.add_argument("--cpus", help="CPUs to measure on, e.g. 0,1 (default: up to two on distinct cores); a block "
                                   "read unstable on one is read again on the next")
    ap.add_argument("--upper-factor", default="model", metavar="X|model|probe|none",
                    help="resources a legacy-SSE XMM write takes while a ZMM register dirties the upper state "
                         "(upper.py): 'model' for the figure cyclebench ports keeps in the model file (default; "
                         "a file without one: 'probe', or with --replay 'none'), a figure, 'probe' to measure "
                         "it now, or 'none' to charge nothing")
    args = ap.parse_args()
    if args.again and (not args.replay or len(args.again) > len(args.replay)):
        ap.error("--again pairs files with --replay's, in order: give at most one for each --replay file")
    for given in (*(args.replay or ()), *(args.again or ()), args.remeasure, args.values):
        if given and not given.is_file():
            ap.error(f"no file {given} (make one with --save)")
    if args.remeasure and not args.save:
        ap.error("--remeasure writes its readings to a new file: give --save")
    try:
        cpus = [int(c) for c in args.cpus.split(",")] if args.cpus else default_cpus()
    except ValueError:
        ap.error(f"--cpus {args.cpus!r} is not a list of CPU numbers such as 0,1")
    if not set(cpus) <= os.sched_getaffinity(0):
        ap.error(f"--cpus {args.cpus}: this process may run on CPUs {sorted(os.sched_getaffinity(0))} only")
    if not args.mcpu and not args.replay:
        from cyclebench.instructions.llvm_mca import own_mcpu
        args.mcpu = own_mcpu()
    for given in args.model:
        if not given.is_file():
            ap.error(f"no model file {given} (make one with cyclebench ports)")
    model, report = load(args.model[0])
    cat = Catalogue.load()
    forms = sorted(model.usage)
    column = resolve_arch(args.arch, measured_on(args.model[0]))
    records = read_csv(str(column.path), collect=True)[0]
    seen = against(model, report, records, cat)
    lats, label = from_file(args.latencies or column.path, cat, forms)
    print(f"published column: {column.label}; a µop of a register width passes its pipe: "
          f"{', '.join(f'{w} {k}x' for w, k in sorted(seen.pumps.items()))}")
    print(f"latencies of the chain bound: {label}, {len(set(lats) & set(forms))} of the model's {len(forms)} "
          f"forms, {len(lats)} in all (others: 1 cycle)")
    print(f"model: {len(forms)} forms, {len(model.resources)} resources + front end (width {model.width}), "
          f"{report['measurements_per_form']} measurements per form, {report['readings']} readings")
    if seen.held:
        print(f"forms whose published figures hold their pipe longer: "
              f"{', '.join(f'{f} {k}x' for f, k in sorted(seen.held.items()))}")
    print(f"port sets: {len(seen.mapped)} of {len(model.resources)} resources mapped to published port sets "
          f"({', '.join(''.join(sorted(q)) for q, _ in seen.mapped.values())})"
          + (f"; {len(seen.off)} left out (a probe that crowds a set "
             f"apart from its own)" if seen.off else ""))
    comps = seen.comparisons
    if comps:
        print(f"  agreement with the published ports column: {seen.agree}/{len(comps)} = "
              f"{seen.agree / len(comps):.1%} of the studied forms that have one")
    for c in comps:
        if not c["agree"]:
            print(f"  differs: {c['form']}: published {c['published']} -> {c['expected']}, inferred {c['inferred']}"
                  + (" (port part of a unit's form: sets compared)" if c.get("unit") else ""))
    print(f"  resources for {len(seen.unpublished)} forms with no published ports (e.g. Zen's integer pipes)")
    models = Models.load(args.model)
    loaded = models.first
    if len(args.model) > 1:
        print(f"predicted by the mean of {len(args.model)} models: {', '.join(map(str, args.model))} "
              f"(ports/ensemble.py; the lines above and below are the first's)")
    if not args.as_inferred:
        notes = loaded.notes
        print(f"model mended against its own readings (repair.py): {len(notes)} usages changed, "
              f"{sum(map(len, loaded.floors.table.values()))} class-pair and "
              f"{sum(map(len, loaded.floors.own.values()))} form-pair ratios as floors, "
              f"{len(loaded.shared.pairs)} pairs' shared resources as floors at any ratio (shared.py)"
              + "".join(f"\n  {n}" for n in notes if args.rows))

    factor = upper_factor(args.upper_factor, args.replay, loaded)
    own_factor = args.upper_factor == "model" and all(m.upper_probed for m in models.loaded)
    print(f"waiting instructions in flight, the simulation's limit: {loaded.in_flight or 'none'} "
          f"({loaded.in_flight_source})")
    print(f"stores written two a cycle within {loaded.grain} bytes ({loaded.grain_source})")
    print("a 512-bit load " + ("has its cycle of the load path to itself" if loaded.in_order else "shares the load path")
          + f" ({loaded.in_order_source})")
    print(f"loads of one 8-byte bank: {loaded.banks_source}")
    print(f"a store's data to a later load: {loaded.trips_source}")
    print(f"a NOP beside the instruction before it: {loaded.nops_source}")
    print(f"merging forms with their merge input written afresh: {loaded.fresh_source}")
    print(f"vector domains: {loaded.domains_source}")
    print(f"a legacy-SSE write after a 256-bit write: {loaded.transition_source}")
    print(f"narrow stores: {loaded.narrow_source}")
    print(f"immediates and displacements a dispatch group carries: {loaded.fields_source}")

    def pred(block):
        if args.as_inferred:
            return one(block, loaded, cat, lats, upper_factor=factor, inferred=model)
        # each file its own probe records; a factor given or measured here is charged by all
        return models.predict(block, cat, lats, upper_factor=OWN if own_factor else factor)
    if args.replay:
        return replay(args.replay, pred, args.rows, values_file(args.values), args.again or ())
    global SAVED
    if args.save:
        SAVED = args.save.open("w")
        c = cpu_info()
        SAVED.write(json.dumps({"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seed": args.seed,
                                "cpu": f"{c.model_name} (family {c.family} model {c.model})",
                                "model": " ".join(map(str, args.model)), "cpus": cpus,
                                **({"remeasured": str(args.remeasure)} if args.remeasure else {})}) + "\n")
    readings = Readings(cpus, processes=args.processes)
    if args.remeasure:
        return remeasure(args.remeasure, pred, readings, cat)
    rng = random.Random(args.seed)
    rb = [(lines, init, None) for lines, init in random_blocks(cat, forms, args.random, rng)]
    cb = []
    seen = set()
    for src in sorted(glob.glob(str(ROOT.parent / "cyclebench" / "studies" / "*" / "c" / "*.c"))):
        for b in compiled_blocks(Path(src)):
            if "; ".join(b) not in seen:
                seen.add("; ".join(b))
                cb.append(b)
    cb = [(b, [], None) for b in rng.sample(cb, min(args.compiled, len(cb)))]
    r1 = evaluate(RANDOM_SET, rb, pred, readings, args.mcpu)
    r2 = evaluate(COMPILED_SET, cb, pred, readings, args.mcpu)
    r3 = bhive(pred, args.bhive, rng, args.mcpu, cpus) if args.bhive else []
    if args.rows:
        print_rows(r1 + r2 + r3)


def remeasure(path, pred, readings, cat):
    """The blocks of a --save file measured again (Readings; BHive blocks by bulk.run), their
    llvm-mca figures kept. A random mix saved without its init gets it from the mixes its seed
    draws with the model the file names."""
    head, sets = saved(path)
    draws = {}
    if any("init" not in d for d in sets.get(RANDOM_SET, ())):
        forms = sorted(load(Path(head["model"]))[0].usage)
        draws = {"; ".join(b): init for b, init in random_blocks(cat, forms, REDRAW, random.Random(head["seed"]))}
    for name, docs in sets.items():
        if name == BHIVE_SET:
            bhive(pred, 0, None, None, readings.cpus, {d["block"]: d["mca"] for d in docs})
            continue
        inits = [d.get("init", draws.get(d["text"]) if name == RANDOM_SET else []) for d in docs]
        for d in (d for d, init in zip(docs, inits) if init is None):
            print(f"  left out, its init not drawn again from seed {head['seed']}: {d['text']}")
        evaluate(name, [(d["block"].split("\n"), init, d["mca"]) for d, init in zip(docs, inits) if init is not None],
                 pred, readings, None)


REDRAW = 100          # mixes drawn again from a seed to find a saved mix's init (a run draws --random)
RANDOM_SET = "random mixes of modelled forms"
COMPILED_SET = "basic blocks of the project's C kernels (gcc -O2)"


def values_file(path):
    """(seed, text) of each mix a bench/ports_values.py file names (None: no file)."""
    if path is None:
        return None
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {(d["seed"], d["text"]) for d in rows if "text" in d}


def saved(path):
    """A --save file: its head line and its blocks by set."""
    head, sets = {}, {}
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if "set" in d:
            sets.setdefault(d["set"], []).append(d)
        else:
            head = d
    return head, sets


def upper_factor(text, replaying, loaded):
    """The upper-state factor the predictor charges (upper.py), printed with where it came from
    (``loaded``: the model file as predict.load reads it)."""
    from cyclebench.instructions.ports.upper import probe
    if text == "model":
        if loaded.upper_probed:
            factor, where = loaded.upper_factor, loaded.upper_source
            print("legacy-SSE writes under a dirty ZMM state: "
                  + (f"factor {factor:.2f} ({where})" if factor else f"charged nothing ({where})"))
            return factor
        text = "probe"
    if text == "probe" and replaying:
        text = "none"
    if text == "none":
        print("legacy-SSE writes under a dirty ZMM state: charged nothing (--upper-factor none)")
        return None
    if text == "probe":
        factor = probe(Session(budget=0.5))["factor"]
        print(f"legacy-SSE writes under a dirty ZMM state: measured factor "
              f"{'none (no AVX-512)' if factor is None else f'{factor:.2f}'} (upper.probe)")
        return factor
    try:
        factor = float(text)
    except ValueError:
        raise UsageError(f"--upper-factor {text!r} is not a number, 'probe' or 'none'",
                         "give a factor such as 1.5, 'probe' to measure it, or 'none'")
    print(f"legacy-SSE writes under a dirty ZMM state: factor {factor:.2f} (given)")
    return factor


def replay(paths, pred, rows_too, values=None, again=()):
    """The blocks of --save files predicted again with this model, their measured and llvm-mca
    figures kept: a change to the predictor checked in a second, measuring nothing.  Each file
    is reported as it is read; several files are also pooled, set by set.  A block saved with
    ``values`` (its run met denormals), or whose (seed, text) ``values`` holds (--values: files
    saved before the flag was read), is counted apart as well.  ``again``: for the files in
    order, the same blocks measured again (--remeasure; see :func:`repeat_report`)."""
    from cyclebench.blocks.code import block as code_of
    values = values or set()
    pooled, twice = {}, {}
    every = []
    seconds = [{name: {d["text"]: d["measured"] for d in docs} for name, docs in saved(a)[1].items()}
               for a in again]
    spent, predicted = 0.0, 0            # the predictor's own time: its speed as a figure
    for i, path in enumerate(paths):
        head, sets = saved(path)
        second = seconds[i] if i < len(seconds) else None
        print(f"replaying {path.name}: measured {head.get('when', '?')} on {head.get('cpu', '?')}, "
              f"seed {head.get('seed')}")
        for name, docs in sets.items():
            ours, mca, rows, moded, flags, pairs = [], [], [], [], [], []
            for d in docs:
                try:
                    block = code_of(bytes.fromhex(d["block"])).code if name == BHIVE_SET else d["block"]
                    t = time.perf_counter()
                    p = pred(block)
                    spent, predicted = spent + time.perf_counter() - t, predicted + 1
                except CycleBenchError as e:
                    print(f"  not predicted ({e.cause}): {d['text']}")
                    continue
                if p.unknown:
                    print(f"  forms this model lacks ({', '.join(p.unknown)}): {d['text']}")
                    continue
                record(ours, mca, rows, p, d["measured"], d["mca"], d["text"])
                flags.append(bool(d.get("values")) or (head.get("seed"), d["text"]) in values)
                if d.get("modes"):
                    moded.append((p.cycles, d["measured"], d["modes"], d["text"]))
                if second is not None and second.get(name, {}).get(d["text"]):
                    pairs.append((p.cycles, d["measured"], second[name][d["text"]]))
            report(name, ours, mca, rows)
            values_report(ours, flags)
            modes_report(moded)
            if second is not None:
                repeat_report(again[i].name, pairs)
                twice.setdefault(name, []).extend(pairs)
            every += rows
            for kept, new in zip(pooled.setdefault(name, ([], [], [], [])), (ours, mca, rows, flags)):
                kept += new
    if len(paths) > 1:
        print(f"pooled over {len(paths)} files:")
        for name, (ours, mca, rows, flags) in pooled.items():
            report(name, ours, mca, rows)
            values_report(ours, flags)
            if name in twice:
                repeat_report("the files read again", twice[name])
    if predicted:
        print(f"predicted {predicted} blocks in {spent:.1f} s, {1000 * spent / predicted:.0f} ms a block "
              "(this process, the models loaded before)")
    if rows_too:
        print_rows(every)


if __name__ == "__main__":
    try:
        main()
    except CycleBenchError as e:        # a missing model, an unknown CPU: one line, its own exit code
        print(f"error: {e.cause}\nhint: {e.hint}", file=sys.stderr)
        sys.exit(e.exit_code)
