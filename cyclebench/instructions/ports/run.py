"""Running the inference on this CPU: choosing forms, measuring mixes, the results file.

Forms are a seeded random sample of the offered forms that can be mixed (mixes.mixable), plus any
named ones.  Readings go to a JSON-lines results file (study/store.py, kind ``ports``) as they are
made; ``resume=True`` reads them back and measures only what is missing.  The model and the
inference report are appended at the end; :func:`load` reads the last ones back.  Resuming a
finished file solves its readings again under the rules of the cyclebench at hand (:func:`started`
gives the forms and seed it was begun with), measuring only readings those rules need that it lacks;
:func:`solve` does so measuring nothing, for a file of any CPU.
"""
from __future__ import annotations

import importlib
import math
import os
import random
import time
from pathlib import Path

from ...errors import ResultFileError, UsageError
from ...study.store import ResultsStore
from ..catalogue import Catalogue
from ..session import Session
from .infer import KIND, SCHEMA_VERSION, Inference
from .mixes import cut, legacy_sse, measure_mix, mixable, wide
from .model import Model


def _number(x) -> bool:
    """a finite number"""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _count(x) -> bool:
    """a count"""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _flag(x) -> bool:
    """true or false"""
    return isinstance(x, bool)


def _time(x) -> bool:
    """a time in cycles or none"""
    return x is None or _number(x) and x >= 0


def _times(x) -> bool:
    """a table of names and numbers"""
    return isinstance(x, dict) and all(isinstance(k, str) and _number(v) for k, v in x.items())


def _forms(x) -> bool:
    """a list of forms"""
    return isinstance(x, list) and all(isinstance(f, str) for f in x)


def _pairs(x) -> bool:
    """a list of legacy and wide forms read side by side"""
    return isinstance(x, list) and all(isinstance(p, dict) and isinstance(p.get("legacy"), str)
                                       and isinstance(p.get("wide"), str) and "shared" in p for p in x)


def _kept(x) -> bool:
    """a table of forms and the flags each passes on"""
    from .kept_flags import CONDITION
    return isinstance(x, dict) and all(isinstance(k, str) and isinstance(v, list) and all(f in CONDITION for f in v)
                                       for k, v in x.items())


def _counts(x) -> bool:
    """a list of counts"""
    return isinstance(x, list) and all(map(_count, x))


def _by(x) -> bool:
    """what loads of one bank share: "bank", "address" or none"""
    return x in (None, "bank", "address")


def _maybe(test):
    """``test``, or None (a figure the probe could not read)."""
    def check(x) -> bool:
        return x is None or test(x)
    check.__doc__ = f"{test.__doc__} or none"
    return check


# The CPU probes `cyclebench ports` keeps as records, each measured by the module of its name's
# probe(): type -> (the key its figure is under, what it is, what the log says while measuring,
# the test each field it writes passes: a file edited by hand or cut short is refused on reading,
# with the record's line, never met later as a bug).  The figure itself may be None, with the
# reason the CPU gave none.
PROBES = {
    "inflight": ("waiting", "an in-flight",
                 "how many waiting instructions fit in flight (two divide chains and their waiters)",
                 {"waiting": _count, "n": _maybe(_count), "times": _times}),
    "upper": ("factor", "an upper-state",
              "the upper-state factor (legacy-SSE writes after a ZMM write)",
              {"factor": _number, "clean": _number, "dirty": _number}),
    "upper_loop": ("legacy", "a legacy-beside-ZMM",
                   "legacy-SSE writes beside ZMM writes in the loop",
                   {"legacy": _number, "wide": _number, "times": _times}),
    "upper_pool": ("shared", "a merge-pipes",
                   "whether legacy-SSE writes beside ZMM writes take the vector pipes",
                   {"shared": _flag, "times": _times}),
    "dealing": ("deals", "a dealing",
                "whether vector µops are dealt to pipe pairs in turn", {"deals": _flag, "times": _times}),
    "store_grain": ("grain", "a store-span",
                    "the span two stores are written in one cycle", {"grain": _count, "times": _times}),
    "load_order": ("whole", "a load-order",
                   "a 512-bit load beside narrower vector loads", {"whole": _flag, "times": _times}),
    "load_banks": ("per", "a load-banks", "six loads on one address, on six banks and on six lines",
                   {"per": _count, "by": _by, "times": _times}),
    "store_load": ("forwarded", "a store-to-load",
                   "what a store-to-load round trip costs",
                   {"forwarded": _number, "renamed": _counts, "times": _times}),
    "flag_order": ("pair", "a flag-order",
                   "a compare after a flag writer",
                   {"pair": _number, **dict.fromkeys(("late", "gpr_late", "late_even", "gpr_late_even"),
                                                     _maybe(_number)), "times": _times}),
    "mul_loads": ("pipes", "a load-op-multiply",
                  "a load-op multiply beside plain loads", {"pipes": _count, "times": _times}),
    "fresh": ("times", "a fresh-merge",
              "each merging vector form with its merge input written afresh", {"times": _times}),
    "fields": ("cap", "a dispatch-values",
               "immediates and displacements a dispatch group carries",
               {"cap": _count, "alus": _maybe(_count), "times": _times}),
    "nop_pairs": ("bytes", "a NOP-pair", "whether a NOP takes a front-end slot beside the instruction before it",
                  {"bytes": _count, "vector": _flag, "times": _times}),
    "address": ("scaled", "an addressing-mode", "a memory operand's time by addressing mode",
                {"scaled": _number, "three": _maybe(_number), "index": _number, "times": _times}),
    "apart": ("pairs", "a kept-apart",
              "the resources the upper-state rule kept apart, side by side", {"pairs": _pairs}),
    "domains": ("references", "a vector-domains", "which vector forms share a bypass domain, and the delay between domains",
                {"latency": _times, "pairs": _times, "references": _forms}),
    "transition": ("cycles", "a state-transition", "what a legacy-SSE write after a 256-bit write costs",
                   {"cycles": _number, "times": _times}),
    "narrow_stores": ("window", "a narrow-stores", "whether a store under 32 bits waits for its line's store before",
                      {"window": _count, "wait": _maybe(_number), "per": _maybe(_number), "times": _times}),
    "kept_flags": ("kept", "a kept-flags", "which flags the ISA leaves undefined each form passes on",
                   {"kept": _kept, "times": _times}),
}


# How a mix lays out its loads, kept in the header: "banks", each copy on the banks the loads
# before it use least (mixes._banked); a file without it had every copy on one address.
LOADS = "banks"


def _check(rec: dict) -> str | None:
    t = rec.get("type")
    if t == "reading":
        counts = rec.get("counts")
        if not (isinstance(counts, dict) and counts
                and all(isinstance(f, str) and _count(n) and n > 0 for f, n in counts.items())):
            return "a reading without counts"
        if not _time(rec.get("cycles")):
            return f"a reading whose cycles {rec['cycles']!r} are no time"
        if rec.get("stable") not in (None, True, False):
            return f"a reading whose stability {rec['stable']!r} is not true or false"
        return None
    if t == "stream":                # a form's own stream of a mix (infer.Inference.chained)
        counts = rec.get("counts")
        if not (isinstance(counts, dict) and len(counts) == 2 and rec.get("form") in counts
                and all(isinstance(f, str) and _count(n) and n > 0 for f, n in counts.items())):
            return "a stream reading without its mix and form"
        return None if _time(rec.get("cycles")) else "a stream reading whose cycles are no time"
    if t == "lines":
        if not isinstance(rec.get("form"), str):
            return "a lines reading without its form"
        return None if _time(rec.get("cycles")) else "a lines reading whose cycles are no time"
    if t in PROBES:                  # a CPU probe's record (PROBES): its figure must be there
        key, what, _, fields = PROBES[t]
        if key not in rec:
            return f"{what} record without its figure"
        for name, test in fields.items():
            if name in rec and not (name == key and rec[name] is None) and not test(rec[name]):
                return f"{what} record whose {name} {rec[name]!r} is not {test.__doc__}"
        return None
    if t == "model":
        m, report = rec.get("model"), rec.get("report")
        if not isinstance(m, dict):
            return "a model record without a model"
        if not (isinstance(m.get("resources"), list) and isinstance(m.get("usage"), dict)
                and all(isinstance(u, dict) for u in m["usage"].values())):
            return "a model without its resources and usages"
        width = m.get("width")
        if width is not None and not (_count(width) and width > 0):
            return f"a model whose front-end width {width!r} is no count of instructions"
        if not all(map(_times, m["usage"].values())):
            return "a model whose usages are not all numbers"
        for part in ("alone", "lines"):
            if not _times(m.get(part) or {}):
                return f"a model whose {part} times are not all numbers"
        probes = m.get("probes") or {}
        if not (isinstance(probes, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in probes.items())):
            return "a model whose probes are not all forms"
        if not isinstance(report, dict):
            return "a model record without its report"
        return None
    return f"unknown record type {t!r}"


def store(path: Path) -> ResultsStore:
    return ResultsStore(path, KIND, SCHEMA_VERSION, check_record=_check)


_READ: dict[str, tuple[tuple, tuple]] = {}     # path -> (the file's signature, (header, records))


def read(path: Path) -> tuple[dict | None, list[dict]]:
    """(header meta, records) of a results file, parsed once while it is unchanged (same inode,
    size and modification time): loading a model for the predictor asks for one file's records
    once per probe, about twenty times.  The records are shared: read them, never change them."""
    try:
        st = os.stat(path)
    except OSError:
        return store(path).load()             # its own clear error, or (None, []) for a missing file
    key, sig = str(Path(path).resolve()), (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _READ.get(key)
    if hit is None or hit[0] != sig:
        hit = _READ[key] = (sig, store(path).load())
    return hit[1]


def record(path: Path, kind: str, session=None, log=lambda msg: None) -> dict:
    """The record of the CPU probe ``kind`` (a :data:`PROBES` type) in a results file: the last one
    it holds, or measured now by ``cyclebench.instructions.ports.<kind>.probe`` and appended, so a
    resumed run measures it once.  A probe of the file's forms (the module's ``PER_FORM``) is
    given them, one of the file's model (``PER_MODEL``) the model.  A record without a figure the probe now writes (the module's
    ``FIELDS``: a part added to the probe later) is measured again, so ``--resume`` brings an older
    file up to the current rules."""
    module = importlib.import_module(f"{__package__}.{kind}")
    st = store(path)
    with st:
        old = [r for r in st.start({}, resume=True) if r.get("type") == kind]
        if old and all(f in old[-1] for f in getattr(module, "FIELDS", ())):
            return old[-1]
        log(f"measuring {PROBES[kind][2]}")
        from .. import session as measuring     # looked up now: a test's stand-in session is used
        forms = ((st.meta or {}).get("forms") or [],) if getattr(module, "PER_FORM", False) else ()
        if getattr(module, "PER_MODEL", False):
            forms = (load(path)[0],)
        rec = module.probe(session or measuring.Session(budget=0.5), *forms)
        st.append(rec)
    return rec


def stored_record(path: Path, kind: str) -> dict | None:
    """The last record of a CPU probe (``kind``) a results file holds, or None."""
    recs = [r for r in read(path)[1] if r.get("type") == kind]
    return recs[-1] if recs else None


def stored_figure(path: Path, kind: str, key: str, missing: str) -> tuple[object, dict | str]:
    """(the figure ``key`` of the file's ``kind`` probe record, the record's times), or (None, why):
    ``missing`` where the file has no such record, the record's own reason where the CPU gave no
    figure (a CPU without the feature the probe needs)."""
    r = stored_record(path, kind)
    if r is None:
        return None, missing
    if r.get(key) is None:
        return None, r.get("why") or "no figure"
    return r[key], r.get("times") or {}


def sample(catalogue: Catalogue, n: int, seed: int = 0, names: list[str] = (), among=None) -> list[str]:
    """``names`` (checked) plus ``n`` mixable forms drawn at random (half of them legacy-encoded).
    ``among`` (a predicate on a form, optional): draw only forms it accepts, legacy or not (the
    forms a published ports column covers, to check the inferred port sets against it)."""
    out = []
    for name in names:
        f = catalogue.get(name)
        if f is None:
            raise UsageError(f"no form named {name!r}", "see cyclebench inst --list for the names")
        why = mixable(f)
        if why:
            raise UsageError(f"{f.name} cannot be mixed: {why}", "leave it out")
        out.append(f.name)
    pool = [f for f in catalogue.offered() if f.name not in out]
    random.Random(seed).shuffle(pool)
    if among is not None:
        return out + [f.name for f in pool if among(f) and mixable(f) is None][:n]
    # half general-purpose (legacy) forms, half the rest: the catalogue is mostly vector forms
    for legacy, share in ((True, n // 2), (False, n - n // 2)):
        got = 0
        for f in pool:
            if got >= share:
                break
            if (f.encoding == "LEGACY") == legacy and mixable(f) is None:
                out.append(f.name)
                got += 1
    return out


def with_ports(catalogue: Catalogue):
    """A predicate: the form has a ports figure in this CPU's published column (refused when the
    CPU has no column of its own)."""
    from ..published import read_csv
    from ..reference import resolve_arch
    from .portsets import published_for
    col = resolve_arch("auto")
    records = read_csv(str(col.path), collect=True)[0]
    names = [f.name for f in catalogue.offered()]
    has = {n for n, rec in published_for(names, records, catalogue).items() if rec.ports_text}
    return lambda form: form.name in has


def infer(forms: list[str], results: Path, resume: bool = False, seed: int = 0, session: Session | None = None,
          catalogue: Catalogue | None = None, log=lambda msg: None, measuring: bool = True) -> tuple[Model, dict]:
    """Measure what the file lacks and solve.  ``measuring=False`` (:func:`solve`) measures
    nothing: the header's machine is not compared with this one, and a reading the rules need
    that the file lacks is an error."""
    catalogue = catalogue or Catalogue.load()
    session = session or (Session(budget=0.5) if measuring else None)
    by_name = {f: catalogue.get(f) for f in forms}
    st = store(results)
    from ...machine.metadata import machine_metadata
    meta = {"forms": forms, "seed": seed, "loads": LOADS} | ({"machine": machine_metadata()} if measuring else {})
    records = st.start(meta, resume=resume)
    if measuring and resume and st.meta and st.meta.get("loads") != LOADS:
        st.close()     # new readings of another layout would be solved beside the old ones
        raise ResultFileError(f"{results} was measured with each load form's copies on one address",
                              "start a new results file (cyclebench predict and --solve still read this one)")
    if resume and st.meta and st.meta.get("forms") and set(forms) - set(st.meta["forms"]):
        st.close()
        raise ResultFileError(f"{results} was started with other forms", "resume with the same forms and seed")
    if resume and st.meta and st.meta.get("seed", seed) != seed:
        st.close()     # the seed orders the blockers: another would solve the readings otherwise
        raise ResultFileError(f"{results} was started with --seed {st.meta['seed']}, not {seed}",
                              f"resume with --seed {st.meta['seed']}, or leave --seed out")
    t0 = time.monotonic()
    with st:
        def reading(counts: dict[str, int]) -> tuple[float | None, bool | None]:
            if not measuring:
                _lacking(results, " + ".join(f"{n} {f}" for f, n in counts.items()))
            r = measure_mix(session, by_name, counts)
            return r.cycles, r.stable

        def lines(form: str) -> float | None:
            if not measuring:
                _lacking(results, f"{form} on distinct cache lines")
            return measure_mix(session, by_name, {form: 1}, lines=True).cycles

        def stream(counts: dict[str, int], form: str) -> float | None:
            return measure_mix(session, by_name, counts, only=form).cycles

        inf = Inference(reading, st.append, log=log, measure_lines=lines,
                        mixes_with_all=lambda f: not (legacy_sse(by_name[f]) or wide(by_name[f])),
                        measure_stream=stream if measuring else None, cut=lambda counts: cut(by_name, counts))
        inf.load(records)
        stores = [f for f, form in by_name.items() if form.memory_operand is not None
                  and form.memory_operand.kind == "mem" and form.memory_operand.write]
        model, report = inf.run(forms, seed, stores)
        report["seconds_now"] = round(time.monotonic() - t0, 1)
        st.append({"type": "model", "model": model.to_json(), "report": report})
    return model, report


def _lacking(path: Path, what: str):
    raise ResultFileError(f"{path} lacks a reading this cyclebench's rules need ({what})",
                          "resume it with --resume on the CPU it was measured on, which measures it")


def solve(path: Path, catalogue: Catalogue | None = None, log=lambda msg: None) -> tuple[Model, dict]:
    """Solve a results file's readings again under this cyclebench's rules, measuring nothing: a
    file from any CPU (one measured elsewhere, or before a rule was added) is read as the rules
    stand.  The model is appended to the file, as a resumed run appends it; the CPU probes'
    records are read as they are, and one the file lacks is left out as for any older file."""
    catalogue = catalogue or Catalogue.load()
    begun = started(path)
    if begun is None:
        raise ResultFileError(f"{path} holds no readings" if Path(path).exists() else f"no file {path}",
                              "measure one first: cyclebench ports --results FILE")
    offered(path, begun["forms"], catalogue, "solve it with the cyclebench that measured it")
    return infer(begun["forms"], path, resume=True, seed=begun["seed"], catalogue=catalogue, log=log,
                 measuring=False)


def offered(path: Path, forms: list[str], catalogue: Catalogue, hint: str) -> None:
    """Refuse a file begun with a form this cyclebench's catalogue does not offer."""
    gone = next((n for n in forms if catalogue.get(n) is None), None)
    if gone:
        raise ResultFileError(f"{path} was started with {gone!r}, which this cyclebench does not offer", hint)


def started(path: Path) -> dict | None:
    """The forms and seed a results file was begun with ({"forms", "seed"}), None when it is
    missing or empty."""
    header, _ = read(path)
    if header is None:
        return None
    forms = header.get("forms")
    if not isinstance(forms, list) or not all(isinstance(f, str) for f in forms) or not isinstance(
            header.get("seed", 0), int):
        raise ResultFileError(f"{path} has a header without its forms and seed", "start a new results file")
    return {"forms": forms, "seed": header.get("seed", 1)}


def load(path: Path) -> tuple[Model, dict]:
    """The last model of a results file."""
    header, records = read(path)
    if header is None:
        raise ResultFileError(f"{path} {'holds no resource model' if Path(path).exists() else 'does not exist'}",
                              "run cyclebench ports first")
    models = [r for r in records if r.get("type") == "model"]
    if not models:
        raise ResultFileError(f"{path} holds readings but no model (the run was cut short)",
                              "finish it with cyclebench ports --resume")
    report = dict(models[-1]["report"])      # a copy: the records are shared (read)
    if "probed" not in report:          # a file written before the report named them
        inf = Inference(lambda counts: None)
        inf.load(records)
        report["probed"] = inf.probed(report.get("blockers") or {}, report.get("alone") or {})
    return Model.from_json(models[-1]["model"]), report
