"""Measure one instruction form: latency per operand pair, throughput, µops/ports (PMU only).

**Latency** (uops.info's definition: input operand -> output operand).  For each pair from
:func:`instantiate.latency_pairs`:

* when the output can feed the input directly, :func:`instantiate.chain` gives one instance and the
  harness repeats it: cycles per copy = the pair's latency (``method: chain``, exact);
* otherwise the chain is closed with a connector (:mod:`connectors`): cycles per copy minus the
  connector's latency, whose bounds come from reference loops measured separately (once per
  process).  Exact when the connector's latency is pinned down (integer ALU steps), else an upper
  bound ``≤`` (the lower bound is kept too).

**Throughput**: cycles per instruction over independent copies (:mod:`throughput`).  **Operand
values** and the session that measures: :mod:`session`.  **Zero idioms and eliminated moves**
read 0 with a label (:mod:`renaming`).

**µops and ports** need a hardware PMU.  Without one (our KVM guests) they are null with the
reason; nothing is guessed.
"""
from __future__ import annotations

import re
import time

from ..errors import CalibrationFailed, CycleBenchError, UnstableMeasurement
from . import connectors as C
from . import distinct, isolate, mask_chain, memory_chain, renaming, unlinked, zeroed_source
from .forms import Form, offsets_memory
from .instantiate import Instance, LatencyPair, Ref, chain, instantiate, latency_pairs, verified
from .session import (EXACT_SLACK, MAX_PAIRS, SCHEMA, SCHEMA_VERSION, Session, form_init, form_notes,
                      used_gprs, value_init, value_pattern)
from .comparing import ABS_TOL, LAT_TOL
from .issue_fill import (FILLED, ISSUE_BOUND, ISSUE_NOTE, filled_past_issue, largest, mark_issue_bound,
                         self_latencies, without_throughput)
from .throughput import measure_throughput
from . import reference_values
from .values import SWEPT, latency_view, sweeps_values, value_session, with_values

__all__ = ["FILLED", "ISSUE_BOUND", "SCHEMA", "SCHEMA_VERSION", "Session", "characterize", "mark_issue_bound",
           "measure_pair", "measure_throughput",
           "skipped_doc", "value_init", "value_pattern"]

# ------------------------------------------------------------------------------------- one form

def _mem_text(inst: Instance) -> str | None:
    text = inst.text.split("#", 1)[1] if inst.via_bytes else inst.text
    m = re.search(r"\[[^\]]*\]", text)
    return m.group(0) if m else None


def _port(form: Form, inst: Instance, ref: Ref) -> C.Port:
    if ref.kind == "flags":
        return C.Port("FLAGS", flags=form.flags_written)
    if ref.kind == "implicit":
        port = C.port_for_register(ref.register)
        port.written = any(i.register == ref.register and i.write for i in form.implicit)
        text = inst.text.split("#", 1)[1] if inst.via_bytes else inst.text
        port.address = any(re.search(rf"\b{port.reg}\b", m) for m in re.findall(r"\[[^\]]*\]", text))
        return port
    op = form.operands[ref.pos]
    if ref.kind == "addr":
        return C.Port("ADDR", mem=_mem_text(inst))
    if ref.kind == "index":             # [base+index...]: the second register of the address
        return C.port_for_register(re.findall(r"[a-z][a-z0-9]*", _mem_text(inst) or "")[1])
    if ref.kind == "mem":
        return C.Port("MEM", bits=op.bits, mem=_mem_text(inst))
    if op.is_mask:
        return C.port_for_register("k1", is_mask=True)
    port = C.port_for_register(inst.regs[op.pos])
    port.written = op.write
    # a bit offset steers the address: the connector carries the dependency, not the loaded value
    port.address = offsets_memory(form, op)
    return port


def _pair_doc(pair: LatencyPair) -> dict:
    return {"start": pair.start.label, "end": pair.end.label, "value": None, "bound": None,
            "lower": None, "upper": None, "uncertainty": None, "method": None, "code": None,
            "init": None, "connector": None, "stable": None, "samples": [], "warnings": [],
            "linear": None, "error": None, "label": None, "same_register": False}


def measure_pair(session: Session, form: Form, pair: LatencyPair, pattern: int | None = None) -> dict:
    """One pair's latency; measured again with the form's other read-written operands broken after
    the chain (isolate.py), a pair between two written operands with distinct registers
    (distinct.py) and a scalar form's pass-through source zeroed (zeroed_source.py), the lower
    figure kept, as uops.info does."""
    doc = _one_register_or_more(session, form, pair, pattern)
    if distinct.applies(form, pair):
        doc = _lower(doc, _distinct_pair(session, form, pair, pattern))
    if zeroed_source.applies(form, pair) and doc["value"] is not None:
        doc = zeroed_source.kept(doc, zeroed_source.measure(session, form, pair, pattern))
    return doc


def _one_register_or_more(session: Session, form: Form, pair: LatencyPair, pattern: int | None) -> dict:
    """The pair as chain() or a connector closes it, and with the other operands broken."""
    doc, ctx = _measure_pair(session, form, pair, pattern, [])
    if doc["value"] is None or ctx is None:
        return doc
    if mask_chain.applies(form, pair):
        doc["published_method"] = _published_mask_chain(session, form, pair, pattern)
    extra = isolate.breakers(form, ctx["inst"], pair, _mem_text(ctx["inst"]), ctx["used"])
    if not extra:
        return doc
    alone, _ = _measure_pair(session, form, pair, pattern, extra)
    if alone["value"] is None or alone["stable"] is False or alone["value"] >= doc["value"]:
        doc["isolated"] = {"breakers": extra, "value": alone["value"]}
        return doc
    alone["isolated"] = {"breakers": extra, "value": alone["value"], "without": doc["value"]}
    alone["method"] = f"{alone['method']}, other operands broken"
    if renaming.no_dependency(alone["value"]) and alone["bound"] == "exact" and not alone.get("label"):
        alone.update(value=0.0, lower=0.0, upper=0.0, label=isolate.INDEPENDENT)
    return alone


def _distinct_pair(session: Session, form: Form, pair: LatencyPair, pattern: int | None) -> dict | None:
    """The pair with distinct registers (distinct.py): the self chain, or the connector route."""
    insts = distinct.self_chain(form, pair)
    if insts is None:
        return _measure_pair(session, form, pair, pattern, [], direct_ok=False)[0]
    doc = _pair_doc(pair)
    try:
        verified(insts)
        init = form_init(form, insts[0]) + [s for s in insts[1].init if s not in insts[0].init]
        m = session.measure([i.text for i in insts], init, per=len(insts),
                            pattern=value_pattern(form) if pattern is None else pattern)
    except (CycleBenchError, ValueError) as e:
        doc.update(error=str(getattr(e, "cause", e)), method=distinct.METHOD)
        return doc
    doc.update(value=m.value, bound="exact", lower=m.value, upper=m.value, method=distinct.METHOD,
               code=m.code, init=m.init, uncertainty=m.uncertainty, stable=m.stable,
               samples=m.samples, warnings=m.warnings, linear=m.linear)
    return doc


def _lower(doc: dict, other: dict | None) -> dict:
    """``other`` (distinct registers) in place of ``doc`` (one register) when it reads lower beyond
    the latency tolerance and is as firm (exact, stable); either way the other reading is kept."""
    if other is None or other.get("value") is None:
        return doc
    v, o = doc.get("value"), other["value"]
    better = (v is None or (o < v - max(LAT_TOL * v, ABS_TOL) and other.get("stable") is not False
                            and (other.get("bound") == "exact" or doc.get("bound") != "exact")))
    if not better:
        doc["distinct_registers"] = {"value": o, "bound": other.get("bound"), "method": other.get("method"),
                                     "code": other.get("code")}
        return doc
    other["one_register"] = {"value": v, "bound": doc.get("bound"), "method": doc.get("method"),
                             "code": doc.get("code")}
    return other


def _published_mask_chain(session: Session, form: Form, pair: LatencyPair, pattern: int | None) -> dict:
    """The write mask -> mask pair measured uops.info's way (mask_chain.py)."""
    try:
        inst, code = mask_chain.configuration(form, pair)
    except (ValueError, KeyError) as e:        # no instance with those registers: not measured
        return {"code": None, "value": None, "error": str(e)}
    out = {"code": "\n".join(code), "value": None}
    try:
        verified([inst])
        m = session.measure(code, form_init(form, inst), pattern=value_pattern(form) if pattern is None else pattern)
        key = "uops.info: " + mask_chain.KMOVQ       # one reading per process
        if key not in session.refs:
            k = session.settled([mask_chain.KMOVQ])
            session.refs[key] = {"code": mask_chain.KMOVQ, "cycles": k.value, "stable": k.stable}
        k = session.refs[key]
    except (CycleBenchError, ValueError) as e:
        return {**out, "error": getattr(e, "cause", str(e))}
    out.update(cycles=m.value, kmovq=k["cycles"], stable=bool(m.stable and k["stable"]))
    if out["stable"]:
        out["value"] = mask_chain.reading(m.value, k["cycles"])
    try:                # the same loop with one kmovq: what the form adds when the chain is short
        s = session.measure(mask_chain.short(code), form_init(form, inst), pattern=value_pattern(form) if pattern is None else pattern)
        out["one_kmovq"] = {"cycles": s.value, "stable": s.stable}
    except CycleBenchError:
        pass
    return out


def _measure_pair(session: Session, form: Form, pair: LatencyPair, pattern: int | None,
                  extra: list[str], direct_ok: bool = True) -> tuple[dict, dict | None]:
    """(the pair's document, what it was measured with) with ``extra`` after the chain;
    ``direct_ok`` False: through a connector even where chain() gives one instance."""
    doc = _pair_doc(pair)
    inst = chain(form, pair) if direct_ok else None
    conn, others = None, []
    direct = inst is not None
    if not direct:
        inst = instantiate(form)
    verified([inst])
    used = used_gprs(inst.text, *inst.init)
    if not direct:
        try:
            start, end = _port(form, inst, pair.start), _port(form, inst, pair.end)
            conn = C.connect(end, start, used)
            others = C.alternatives(end, start, used)
        except C.NoConnector as e:
            doc["error"] = f"not measured: {e}"
            return doc, None
    ctx = {"inst": inst, "used": used | used_gprs(conn.text if conn else "")}
    code = [inst.text] + (conn.lines if conn else []) + extra
    init = form_init(form, inst) + (conn.init if conn else [])
    pattern = value_pattern(form) if pattern is None else pattern
    try:
        m = session.measure(code, init, pattern=pattern)
    except CycleBenchError as e:
        doc.update(error=e.cause, code="\n".join(code))
        if isinstance(e, TRANSIENT):        # a reading still to make (a busy host), not the form's
            doc["stable"] = False
        return doc, None
    doc.update(code=m.code, init=m.init, uncertainty=m.uncertainty, stable=m.stable,
               samples=m.samples, warnings=m.warnings, linear=m.linear)
    if not conn or not conn.steps:
        doc.update(value=m.value, bound="exact", lower=m.value, upper=m.value, method="chain",
                   same_register=direct and renaming.same_register_chain(form, pair))
        if renaming.no_dependency(m.value) and not extra:   # zero idiom / eliminated move: latency 0
            doc.update(renaming.zero_update(form, m.value, doc["same_register"]))
        return doc, ctx
    doc["method"] = "chain + connector"
    upper, lower, exact, doc["connector"] = _closed(session, m.value, conn)
    if others:
        conn, upper, lower, exact = _other_routes(session, doc, others, [inst.text], extra, init, pattern,
                                                  m.value, (conn, upper, lower, exact))
        ctx["used"] = used | used_gprs(conn.text)
    fill = memory_chain.filled(conn, end, start, used)
    if fill is not None and not exact:
        try:
            f = session.measure([inst.text] + fill.lines + extra, init, pattern=pattern)
        except CycleBenchError:
            f = None
        # a chain can't run faster than the fill's own one-cycle steps: such a reading is not kept
        floor = sum(session.step_bounds(s)[0] for s in fill.steps if not s.startswith(("store_", "load_")))
        if f is not None and f.stable is not False and f.value >= floor:
            f_upper, f_lower, _, f_conn = _closed(session, f.value, fill)
            doc["connector"]["filled"] = {**f_conn, "cycles": f.value, "upper": f_upper}
            if f_lower is not None:
                lower = f_lower if lower is None else max(lower, f_lower)
            if f_upper < upper:        # the lower of two upper bounds (memory_chain.py)
                upper = f_upper
                doc.update(code=f.code, uncertainty=f.uncertainty, samples=f.samples, warnings=f.warnings,
                           linear=f.linear, stable=f.stable)
                doc["connector"].update(f_conn, chosen="filled")
    if exact:
        doc.update(value=upper, bound="exact", lower=upper, upper=upper)
    elif renaming.no_dependency(upper) and doc["stable"] is not False:
        # the loop is at least the pair plus its connector, so the pair is at most ``upper``; a
        # dependency costs a cycle or more, so one below ZERO_BELOW is none
        doc.update(value=0.0, bound="exact", lower=0.0, upper=0.0, label=BELOW_A_CYCLE, bound_read=upper)
    else:
        doc.update(value=upper, bound="upper", lower=None if lower is None else min(lower, upper), upper=upper)
    return doc, ctx


BELOW_A_CYCLE = "no dependency: the pair's upper bound is below a cycle"
TRANSIENT = (CalibrationFailed, UnstableMeasurement)    # failures of the moment: the pair is unsettled


def _other_routes(session: Session, doc: dict, others: list, head: list[str], extra: list[str], init,
                  pattern: int, cycles: float, best: tuple) -> tuple:
    """The chain closed through each other route between the same kinds (connectors.alternatives):
    ``cycles``: the first route's chain, ``best`` its (connector, upper, lower, exact).  Each route
    bounds the same pair, so the lowest upper and the highest lower hold; of two exact routes the
    lower (uops.info keeps its least reading: a domain crossing costs one more).  The route kept
    is shown (``doc`` updated), every one listed under the connector's ``routes``.  Returns
    (connector, upper, lower, exact)."""
    conn, upper, lower, exact = best
    routes = [{**doc["connector"], "cycles": cycles, "upper": upper}]
    for alt in others:
        try:
            a = session.measure(head + alt.lines + extra, init + alt.init, pattern=pattern)
        except CycleBenchError:
            continue
        a_upper, a_lower, a_exact, a_conn = _closed(session, a.value, alt)
        routes.append({**a_conn, "cycles": a.value, "upper": a_upper})
        if a.stable is False or (exact and not a_exact):
            continue
        if a_lower is not None and not a_exact:
            lower = a_lower if lower is None else max(lower, a_lower)
        if (a_exact and not exact) or a_upper < upper:      # two exact routes: the lower, as uops.info
            conn, upper, exact = alt, a_upper, a_exact
            lower = a_lower if a_exact else lower
            doc.update(code=a.code, uncertainty=a.uncertainty, samples=a.samples, warnings=a.warnings,
                       linear=a.linear, stable=a.stable)
            doc["connector"] = a_conn
    doc["connector"]["routes"] = routes
    return conn, upper, lower, exact


def _closed(session: Session, cycles: float, conn: C.Connector) -> tuple[float, float | None, bool, dict]:
    """(upper, lower, exact, connector doc) of a pair whose chain with ``conn`` took ``cycles`` per link.

    An exact connector (its steps pinned or whole one-cycle steps) leaves the pair exact; the chain's
    cycles are then taken to the whole cycle within connectors.PIN_WHOLE, as uops.info rounds its
    chains (``int(cycles + .2)``): a 512-bit mask loop's fraction (6.14) is no step's."""
    bounds = [session.step_bounds(s) for s in conn.steps]
    if cycles < sum(b[0] for b in bounds):
        # this chain ran faster than its connector's lower bounds allow: memory renaming bypassed
        # a store/load that the reference loop saw go through the store queue; it may cost 0 here
        bounds = [(C.lower_bound(s), b[1]) for s, b in zip(conn.steps, bounds)]
    lo_c = sum(b[0] for b in bounds)
    hi_c = None if any(b[1] is None for b in bounds) else sum(b[1] for b in bounds)
    info = {"code": conn.text, "steps": conn.steps, "latency_lower": lo_c, "latency_upper": hi_c}
    if hi_c is not None and hi_c - lo_c <= EXACT_SLACK * len(bounds):
        value = max(0.0, C.whole_cycles(cycles) - lo_c)
        return value, value, True, info
    # bounds loosened by a reference read during a burst: a figure still to measure (comparing.unsettled)
    info["unsettled_reference"] = [s for s in conn.steps if session.unsettled_step(s)]
    info["note"] = (f"≤: the loop, {cycles:.2f} cycles, less the connector's least latency, {lo_c:g}: each "
                    "step's lower bound (a computing µop 1 cycle, a store or load 1 through the store "
                    "queue, 0 where memory renaming may bypass it); its share of a round trip is unknown")
    return max(0.0, cycles - lo_c), None if hi_c is None else max(0.0, cycles - hi_c), False, info


def measure_same_register(session: Session, form: Form, pattern: int | None = None) -> dict | None:
    """The same-register case of a form with three or more register operands of one family
    (renaming.py): 0 with its label when the renamer breaks the dependency, else its latency."""
    case = renaming.same_register_case(form)
    if case is None:
        return None
    start, end, inst = case.start, case.end, case.inst
    verified([inst])
    doc = {k: None for k in ("value", "bound", "lower", "upper", "uncertainty", "code", "init",
                             "connector", "stable", "label", "error", "linear")}
    doc.update(start=start, end=end, method="chain (same register)", same_register=True,
               samples=[], warnings=[])
    pattern = value_pattern(form) if pattern is None else pattern
    conn = None
    try:
        if case.closed:         # a mask destination: back to the sources through a connector
            conn = C.connect(C.port_for_register(inst.regs[case.dst]), C.port_for_register(inst.regs[case.src]),
                             used_gprs(inst.text, *inst.init))
        init = form_init(form, inst) + (conn.init if conn else [])
        m = session.measure([inst.text] + (conn.lines if conn else []), init, pattern=pattern)
        alone = session.measure([inst.text], form_init(form, inst), pattern=pattern).value if conn else m.value
    except (CycleBenchError, C.NoConnector) as e:
        doc.update(error=str(getattr(e, "cause", e)), code=inst.text)
        return doc
    value, lower, bound = m.value, m.value, "exact"
    if conn:
        value, low, exact, doc["connector"] = _closed(session, m.value, conn)
        lower, bound = value if exact else low, "exact" if exact else "upper"
    doc.update(value=value, bound=bound, lower=lower, upper=value, code=m.code, init=m.init,
               uncertainty=m.uncertainty, stable=m.stable, samples=m.samples, warnings=m.warnings,
               linear=m.linear)
    if conn:                # the instance alone: uops.info's same-register TP_single (comparing.py)
        doc["cycles_per_copy"] = alone
    if renaming.no_dependency(value):
        doc.update(renaming.zero_update(form, alone, True))
    return doc


def _machine_reason(backend: dict | None) -> str:
    if not backend:
        return "not measured"
    if backend.get("name") == "tsc":
        reason = backend.get("reason") or ""
        return reason if reason.startswith("no hardware PMU") else f"no hardware PMU: {reason}"
    return "µop and port counters are not wired into instruction tables yet (PMU present)"


def skipped_doc(form: Form | None, name: str, reason: str, status: str = "skipped") -> dict:
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "form": name, "status": status,
            "reason": reason, "extensions": list(form.cpuid_features) if form else [],
            "instruction": None, "latency": [], "latency_max": None, "throughput": None,
            "uops": None, "ports": None, "uops_reason": reason, "notes": [], "elapsed_s": 0.0}


def characterize(form: Form, session: Session, latency: bool = True, throughput: bool = True,
                 max_pairs: int = MAX_PAIRS) -> dict:
    """Everything cyclebench can measure about ``form`` here, as one JSON-able document."""
    if not form.offered:
        return skipped_doc(form, form.name, form.reason or "not offered")
    t0 = time.monotonic()
    doc = skipped_doc(form, form.name, None, status="ok")
    doc["instruction"] = instantiate(form).text
    doc["notes"] = form_notes(form)
    pairs = latency_pairs(form) if latency else []
    sweep = sweeps_values(form)
    first_tp = measure_throughput(session, form) if throughput and (pairs or sweep) else None
    pattern, values = value_pattern(form), {}
    if sweep and first_tp is not None and first_tp.get("value") is not None:
        # operand values that take the common path, for every figure (masked accesses)
        first_tp, note = with_values(session, form, first_tp, {})
        pattern = first_tp["pattern"]
        values = {k: first_tp[k] for k in SWEPT if k in first_tp}
        doc["notes"] += [note] if note else []
    for i, pair in enumerate(pairs):
        if i >= max_pairs:
            d = _pair_doc(pair)
            d["error"] = f"not measured: more than {max_pairs} pairs"
            doc["latency"].append(d)
            continue
        doc["latency"].append(measure_pair(session, form, pair, pattern))
    if pairs:
        same = measure_same_register(session, form, pattern)
        if same is not None:
            doc["latency"].append(same)
    measured = [p for p in doc["latency"] if p["value"] is not None]
    if throughput:
        doc["throughput"] = measure_throughput(value_session(session, form, first_tp), form,
                                               self_latencies(pairs, doc["latency"]), earlier=first_tp,
                                               pattern=pattern)
        doc["throughput"].update(values)
        ref = reference_values.measure(session, form) if reference_values.applies(form) else None
        if ref is not None:     # uops.info's operand values, where the cost depends on them
            doc["reference_values"] = ref
            doc["notes"] += [n for n in [reference_values.note(ref, doc["throughput"].get("value"))] if n]
        mark_issue_bound(latency_view(doc))
        filled_past_issue(session, form, pairs, latency_view(doc), pattern, _measure_pair)
        unlinked.test_pairs(session, form, pairs, latency_view(doc), pattern, _measure_pair)
        if any(p.get("label") == ISSUE_BOUND for p in doc["latency"]):
            doc["notes"].append(ISSUE_NOTE)
    elif pairs:
        without_throughput(session, form, pairs, doc, pattern, _measure_pair)
    doc["latency_max"] = largest(doc["latency"])
    reason = _machine_reason(session.backend)
    doc["uops_reason"] = reason
    if session.backend:         # what --counters auto chose: a resume compares it (params.used)
        doc["backend"] = session.backend.get("name")
    ok_tp = doc["throughput"] and doc["throughput"]["value"] is not None
    if not measured and not ok_tp:
        errors = [p["error"] for p in doc["latency"] if p.get("error")]
        if doc["throughput"] and doc["throughput"].get("error"):
            errors.insert(0, doc["throughput"]["error"])
        if errors or pairs or throughput:
            doc["status"] = "failed"
            doc["reason"] = errors[0] if errors else "nothing could be measured"
    unstable = [p for p in doc["latency"] if p.get("stable") is False]
    if doc["throughput"] and doc["throughput"].get("stable") is False:
        unstable.append(doc["throughput"])
    doc["stable"] = not unstable
    nonlinear = [f"{p['start']} -> {p['end']}" for p in doc["latency"] if p["linear"] is False]
    nonlinear += ["throughput"] if doc["throughput"] and doc["throughput"]["linear"] is False else []
    if nonlinear:
        doc["notes"].append("the cost per copy changed with the number of copies (" + ", ".join(nonlinear) +
                            "): those figures are not the cost of one instruction; see their warnings")
    doc["elapsed_s"] = round(time.monotonic() - t0, 3)
    return doc
