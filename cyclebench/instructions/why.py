"""``inst --why``: for a form that disagrees with published data, run the variant experiments and
say which, if any, reproduces the published figure.

The variants are the choices a measurement method makes that the published figure may have made
differently, each measured here on the same form:

* **dependency breakers** between throughput copies: uops.info's (ours: zero idioms for registers,
  ``test r, r`` for the flags), port-free zero idioms throughout, breakers that occupy an ALU
  (``test r, r``, ``mov r32, 0``), none;
* **operand values**: 1.0 per element (sign bits clear) and all bits set (every mask lane on),
  and the characterisation's own sweep (values.py: a valid segment selector, denormals);
* **addresses** of read-modify-write copies: one operand width apart (ours), one cache line per
  copy, one shared address;
* a gather's or scatter's **mask** not set again before each copy, as uops.info's copies run;
* **uops.info's own throughput experiment** (published_throughput.py: 1, 4, 8 and 16 copies,
  unrolled and in two loops, the least kept);
* **the same register** for every register operand against distinct ones (latency: the
  characterisation measures both, and their entries are listed);
* **uops.info's own chain** for a pair between two vector registers (``vandpd``/``vpand``
  connectors, read as ``int(cycles + .2)`` minus the links, in up to CHAIN_PROCESSES processes),
  also into an implicit vector register, for a legacy form's memory and flags pairs and for an
  AVX-512 gather's write mask (published_chains.py), measured on demand;
* **a shift count of 0** (CL forms; the tables run count 1): the flags are then left as they were,
  and a flags read after it may take a slow path; uops.info's flags -> CL chain (``SETcc CL``)
  leaves the count 0 whenever the flag is clear;
* **latency configurations** a pair was measured in besides the one kept: with the form's other
  read-written operands broken or not (isolate.py), a memory chain with uops.info's fill or without,
  a scalar form's pass-through source zeroed or not (zeroed_source.py), and the no-dependency
  test's lengthened chain (unlinked.py), with the figure it replaced where it moved the pair.

A variant *reproduces* the published figure when it agrees within the comparison's tolerance
(:func:`agreement.agrees`).  Where none does and uops.info's own chains read our figure, that is
the cause (:func:`method_reads_ours`).  Nothing here changes the reported figures.
"""
from __future__ import annotations

from ..errors import CycleBenchError
from . import connectors as C, published_chains, published_throughput
from .comparing import TOLERANCES, agrees, match, ours, single_issue, theirs
from .forms import Form
from .instantiate import AREA_GUARD, instantiate, latency_pairs, verified
from .copies import LINE, independent_copies, rmw_stride
from .mask_chain import whole
from .session import Session, form_init, has_count, value_pattern, with_count
from .zeroed_source import LEGACY_INT, LINKS, vector_chain
from .breakers import BREAKERS
from .throughput import measure_throughput
from .values import ALL_ONES
from .operands import VECTOR_CLASSES


def _tp_variants(form: Form) -> list[tuple[str, dict]]:
    """(description, measure_throughput keyword arguments) for this form."""
    out = [("as reported (uops.info's breakers, our operand values and addresses)", {})]
    carried = independent_copies(form, 2).carried
    if carried:
        out += [(f"breakers: {k} ({', '.join(carried)})", {"breakers": k}) for k in BREAKERS[1:]]
    out.append(("operand values: all bits set (every mask lane on)", {"pattern": ALL_ONES}))
    if value_pattern(form) != ALL_ONES:
        out.append((f"operand values: {value_pattern(form):#x} per lane", {"pattern": value_pattern(form)}))
    stride = rmw_stride(form)
    if stride is not None:
        out += [(f"addresses: one per copy, {s} bytes apart", {"stride": s})
                for s in sorted({stride, LINE}) if s]
        # a stride of the whole area wraps to one address: the copies chain through memory
        out.append(("addresses: one address for all copies", {"stride": AREA_GUARD}))
    return out


FIGURES = ("throughput", "latency_min", "latency_max")
REPRODUCED = "reproduced by an inst --why variant"


def explain(session: Session, form: Form, doc: dict, rec, figures: tuple[str, ...] = FIGURES) -> dict:
    """The variant experiments for ``form`` (its characterisation ``doc``) against the published
    record ``rec``: {"form", "figures": [{figure, ours, published, match, variants: [...]}]}."""
    out = {"form": form.name, "figures": []}
    chains = None
    # the published latencies ours misses: a vector chain is run again until a process reads one
    missed = {m["published"] for f in figures if f != "throughput"
              for m in [match(doc, rec, f)] if m["match"] is False and m["published"] is not None}
    for figure in figures:
        tol = TOLERANCES[figure]
        entry = {"figure": figure, **match(doc, rec, figure), "variants": []}
        their, their_bound = entry["published"], entry["published_bound"]
        if figure == "throughput" and their is not None:
            for text, kw in _tp_variants(form):
                entry["variants"].append(_run_tp(session, form, text, kw, their, their_bound, tol))
            entry["variants"] += _mask_unset(doc, their, their_bound, tol) + _values_swept(doc, their, their_bound, tol)
            entry["variants"] += published_throughput.variant(published_throughput.measure(session, form),
                                                              their, their_bound)
        elif their is not None:
            for p in (doc.get("latency") or []) + ((doc.get("reference_values") or {}).get("latency") or []):
                if p.get("value") is None:
                    continue
                what = f"{p['start']} -> {p['end']}" + (f" ({p['label']})" if p.get("label") else "") + \
                    (f" with uops.info's operand values, {p['values']}" if p.get("values") else "")
                entry["variants"].append({"variant": f"latency pair {what}", "value": p["value"],
                                          "bound": p["bound"],
                                          "reproduces": agrees(p["value"], their, their_bound, tol)})
                for text, value in _pair_variants(p):
                    entry["variants"].append({"variant": f"latency pair {what}, {text}", "value": value,
                                              "bound": p["bound"],
                                              "reproduces": agrees(value, their, their_bound, tol)})
            if chains is None:
                chains = [dict(r, its=True) for r in vector_chain_runs(session, form, missed, single_issue(doc))] + \
                    [{"variant": t, "value": v, "its": False} for t, v in _count_zero(session, form)] + \
                    [{"variant": t, "value": v, "its": True}
                     for t, v in published_chains.measure(session, form, single_issue(doc))]
            for c in chains:
                entry["variants"].append({"variant": c["variant"], "value": c["value"], "bound": "exact",
                                          "published_method": c["its"],
                                          **({"cycles": c["cycles"], "links": c.get("links", LINKS)}
                                             if c.get("cycles") else {}),
                                          "reproduces": agrees(c["value"], their, their_bound, tol)})
        out["figures"].append(entry)
    return out


def experiment_cause(session: Session, form: Form, doc: dict, rec, figure: str,
                     cache: dict | None = None) -> str | None:
    """A mismatch's cause as the experiments name it (bench/instruction_accuracy.py ``--why``): the
    first variant of :func:`explain` that reproduces the published figure, else uops.info's own
    chains reading ours (:func:`method_reads_ours`), else None (no experiment explains it); an
    "unexplained" that says the experiments could not run where they raised.  Zen 4, ``VPERMW (ZMM, ZMM, ZMM)``: 5.00 through one
    register, published 6; uops.info's chain with five ``vandpd`` reads 11.17 cycles, 6 its way.
    ``cache`` (by form): both latency figures read one set of experiments."""
    figures = (figure,) if figure == "throughput" else ("latency_min", "latency_max")
    key = (form.name, figures)
    if cache is None or key not in cache:
        try:
            result = explain(session, form, doc, rec, figures)
        except (CycleBenchError, ValueError) as e:
            result = {"error": str(e)}
        if cache is not None:
            cache[key] = result
    result = cache[key] if cache is not None else result
    if "error" in result:       # not explained, but not by the experiments either: say so
        return f"unexplained: the inst --why experiments could not run ({result['error']})"
    hits = [v for f in result["figures"] if f["figure"] == figure for v in f["variants"] if v.get("reproduces")]
    if hits:
        return f"{REPRODUCED}: {hits[0]['variant']} = {hits[0]['value']:.2f}"
    return unsteady_chain(result, figure) or method_reads_ours(result, figure)


def throughput_cause(session: Session, form: Form, doc: dict, rec, prior: str) -> str:
    """A throughput mismatch's cause with uops.info's own throughput experiment run here
    (published_throughput.py) where it explains the published figure, ``prior`` (causes.cause's)
    after it; ``prior`` alone where the experiment cannot run.  An "unexplained" stays so
    (first), with the experiment's readings beside it."""
    our, _b = ours(doc, "throughput")
    their, their_bound = theirs(rec, "throughput")
    try:
        result = published_throughput.measure(session, form)
    except (CycleBenchError, ValueError) as e:
        return f"{prior} (uops.info's throughput experiment could not run: {e})"
    said = published_throughput.cause(result, our, their, their_bound)
    if said is None:
        return prior
    if said.startswith((REPRODUCED, published_throughput.SOME_CONFIGS, published_throughput.SPANS)):
        return said if prior == "unexplained" else f"{said}; {prior}"
    return f"{prior}: {said}" if prior == "unexplained" else f"{prior}; {said}"


UNSTEADY_CHAIN = "uops.info's chain is not steady here"
UNSTEADY_SPREAD = 0.5   # cycles between a chain's readings in different processes: more than noise


def unsteady_chain(result: dict, figure: str) -> str | None:
    """No variant reproduces the published figure, and one of uops.info's vector chains read
    differently from process to process (by UNSTEADY_SPREAD or more) with the published figure
    within its readings read its way or one above the highest: its figure is one run's reading of a
    chain that does not settle here.  Zen 4, ``vpexpandd zmm1{k1}{z}, zmm2`` with five ``vandpd``
    or ``vpandd``: 11.49 to 12.89 cycles in 16 processes, 6 to 8 its way, published 8."""
    f = next((f for f in result["figures"] if f["figure"] == figure), None)
    if f is None or f.get("published") is None:
        return None
    their = float(f["published"])
    for v in f["variants"]:
        cycles = v.get("cycles") or []
        if not v.get("published_method") or len(cycles) < 2 or max(cycles) - min(cycles) < UNSTEADY_SPREAD:
            continue
        links = v.get("links", LINKS)
        lo, hi = (max(0, whole(c) - links) for c in (min(cycles), max(cycles)))
        if not lo <= their <= hi + 1:
            continue
        where = ("within them" if their <= hi else
                 f"one above the highest ({max(cycles):.2f} cycles; {their + links - 0.2:.2f} reads {their:g})")
        ours = f" ours {f['ours']:.2f};" if f.get("ours") is not None else ""
        return (f"{UNSTEADY_CHAIN}: {v['variant']}: {min(cycles):.2f} to {max(cycles):.2f} cycles, "
                f"{lo} to {hi} its way;{ours} the published {their:g} is {where}")
    return None


METHOD_READS_OURS = "uops.info's own chain reads ours here"


def method_reads_ours(result: dict, figure: str) -> str | None:
    """No variant reproduces the published figure, and uops.info's own chains, run here and read
    its way, give the least (smallest latency) or the most (largest) of their readings as our
    figure: its method, on this core, does not reach the published figure either, so the two
    differ by the machine measured, not by the method.  None without such chains, or when they
    read neither figure (a difference of method not yet found)."""
    f = next((f for f in result["figures"] if f["figure"] == figure), None)
    if f is None or f.get("ours") is None or f.get("published") is None:
        return None
    mine = [v for v in f["variants"] if v.get("published_method") and v.get("value") is not None]
    if not mine:
        return None
    pick = (min if figure == "latency_min" else max)(mine, key=lambda v: v["value"])
    tol = TOLERANCES[figure]
    if not agrees(f["ours"], float(pick["value"]), False, tol) or pick.get("reproduces"):
        return None
    return (f"{METHOD_READS_OURS}: {pick['variant']} = {pick['value']:.2f}, "
            f"{'the least' if figure == 'latency_min' else 'the most'} of its {len(mine)} chain reading"
            f"{'s' if len(mine) > 1 else ''} here, against the published {f['published']:g}")


def _mask_unset(doc: dict, their, their_bound, tol) -> list[dict]:
    """A gather's or scatter's copies without the per-copy mask set-up, as uops.info's copies run
    (measured with the throughput, throughput.py), as a variant."""
    unset = (doc.get("throughput") or {}).get("mask_unset") or {}
    if unset.get("value") is None:
        return []
    return [{"variant": "mask not set again before each copy (uops.info's copies: empty after the first)",
             "value": unset["value"], "stable": unset.get("stable"),
             "reproduces": agrees(unset["value"], their, their_bound, tol)}]


def _values_swept(doc: dict, their, their_bound, tol) -> list[dict]:
    """The throughput with each operand value the characterisation swept (values.py: a valid
    segment selector, every bit set, denormals) and with uops.info's (reference_values.py), as variants."""
    swept = [(f"operand values swept: {v['values']}", v) for v in (doc.get("throughput") or {}).get("values") or []]
    swept += [(f"uops.info's operand values: {c['values']}", c)
              for c in ((doc.get("reference_values") or {}).get("throughput") or {}).get("configs") or []]
    return [{"variant": text, "value": v["value"], "reproduces": agrees(v["value"], their, their_bound, tol)}
            for text, v in swept if v.get("value") is not None]


def _pair_variants(p: dict) -> list[tuple[str, float]]:
    """The other configurations a pair was measured in (characterize.measure_pair keeps the lower):
    without the breakers of the form's other operands, the memory chain with or without the fill,
    and a scalar form's pass-through source zeroed or not (zeroed_source.py)."""
    out = []
    iso = p.get("isolated") or {}
    if iso.get("without") is not None:
        out.append(("without breaking the other operands", iso["without"]))
    elif iso.get("value") is not None:
        out.append(("other operands broken (" + ", ".join(iso.get("breakers") or []) + ")", iso["value"]))
    usual = p.get("usual_values") or {}
    if usual.get("value") is not None:
        out.append(("with the form's usual operand values (source not zeroed)", usual["value"]))
    zeroed = p.get("zeroed_source") or {}
    if zeroed.get("cycles") is not None and not usual:
        out.append((f"{zeroed['method']} ({zeroed['cycles']:.2f} cycles a loop)",
                    max(0.0, zeroed["cycles"] - zeroed["links"] * zeroed["link_latency"])))
    fill = (p.get("connector") or {}).get("filled")
    if fill and fill.get("upper") is not None:
        out.append(("memory chain with uops.info's fill", fill["upper"]))
    test = p.get("no_dependency_test") or {}
    if test.get("value") is not None and test.get("stable") is not False:
        kept = test.get("without")     # the figure the test replaced, where it moved the pair
        out.append((f"no-dependency test: {test['steps']} one-cycle steps ({test['step']}) on the start"
                    + (", the other inputs broken" if test.get("breakers") else "")
                    + ("" if test.get("exact") else ", an upper bound"), test["value"]))
        if kept is not None:
            out.append(("the pair's own chain, before the no-dependency test", kept))
    return out


def vector_chain_runs(session: Session, form: Form, missed: set | frozenset = frozenset(),
                      throughput: float | None = None) -> list[dict]:
    """Each pair from a read vector register operand to another vector register, explicit or
    implicit (``pcmpestrm``'s XMM0), measured with uops.info's own connector (nanoBench
    ``getChainInstrForVectorRegs``: ``vandpd src, dst, dst``, and ``vpand``, or for a legacy SSE form
    ``pshufd src, dst, 0``, then more of the same on src, ``cRep + 1`` links in all,
    published_chains.c_rep) and read as uops.info reads it, ``int(cycles + .2)`` minus the links:
    where it differs from our chain through one register, the connector's consumer matters (Zen 4,
    ``vpexpandw zmm1, zmm2``: 5.00 through one register, 11.5 cycles with five ``vpandd``: 6;
    ``pcmpestrm xmm1, [m], 2`` to XMM0: 7.00 through one register, 15.05 and 15.13 cycles with
    ``pshufd`` and six ``pand``: 8).  Each chain runs in up to CHAIN_PROCESSES runner processes,
    until one reads a published figure in ``missed`` (the ones ours misses): the same loop settles
    from 10.37 to 11.95 cycles from process to process (Zen 4, ``vpermi2w zmm1{k1}{z}, zmm2, zmm3``
    with five ``vandpd`` or ``vpandd``: 5 or 6 its way), and uops.info's figure is one run's reading."""
    out = []
    inst = verified([instantiate(form)])[0]      # as assembled (pcmpestrm64: GNU as has no such name)
    links = published_chains.c_rep(throughput) + 1
    for pair in latency_pairs(form):
        s, e = pair.start, pair.end
        if s.kind != "op" or e.kind not in ("op", "implicit") or (e.kind == "op" and s.pos == e.pos):
            continue
        a = form.operands[s.pos]
        if e.kind == "op":
            b = form.operands[e.pos]
            dst, cls, bits = inst.regs.get(e.pos), b.cls if b.kind == "reg" else None, b.bits
        else:
            dst = str(e.register).lower()
            cls = dst[:3].upper()
            bits = {"XMM": 128, "YMM": 256, "ZMM": 512}.get(cls)
        if not (a.kind == "reg" and a.cls in VECTOR_CLASSES and cls in VECTOR_CLASSES and not a.write):
            continue
        src = inst.regs.get(s.pos)
        if not src or not dst or src == dst:
            continue
        src = C.vec(src, max(a.bits, bits))
        for op in ("vandpd", LEGACY_INT if form.encoding == "LEGACY" else C.vand(src)):
            readings = []
            for _ in range(CHAIN_PROCESSES):
                try:
                    m = session.measure(vector_chain(inst.text, src, dst, op, links), form_init(form, inst),
                                        pattern=value_pattern(form))
                except CycleBenchError:
                    break
                readings.append(m.value)
                if not missed or whole(m.value) - links in missed:
                    break
            if not readings:
                continue
            # the reading uops.info's figure came from, if one process gave it, else the last
            best = next((c for c in readings if whole(c) - links in missed), readings[-1])
            runs = ", ".join(f"{c:.2f}" for c in readings)
            where = f" in {len(readings)} processes" if len(readings) > 1 else ""
            out.append({"variant": f"latency pair {pair}, uops.info's chain ({op} x{links}, {runs} cycles{where}, "
                                   f"{best:.2f} read as int(cycles + .2) minus the links)",
                        "value": float(max(0, whole(best) - links)), "cycles": readings, "links": links})
    return out


CHAIN_PROCESSES = 5     # runner processes of one uops.info chain, at most


def _count_zero(session: Session, form: Form) -> list[tuple[str, float]]:
    """Each pair of a CL-count form measured again with the count 0 (the same methods, the count's
    init line ``mov ecx, 0``): Zen 4, ``sar eax, cl; cmovc rcx, rcx`` runs 33.1 cycles a loop with
    count 0 (1 + 1 with count 1)."""
    if not has_count(form):
        return []
    from .characterize import measure_pair          # characterize's methods, on another session
    other = with_count(session, 0)
    out = []
    for pair in latency_pairs(form):
        try:
            d = measure_pair(other, form, pair)
        except (CycleBenchError, ValueError):
            continue                                    # a variant that cannot run shows nothing
        if d.get("value") is not None:
            bound = "" if d.get("bound") == "exact" else " (upper bound)"
            out.append((f"latency pair {pair}, count CL = 0 (the flags left as they were){bound}", d["value"]))
    return out


def _run_tp(session, form, text, kw, their, their_bound, tol) -> dict:
    try:
        d = measure_throughput(session, form, **kw)
    except (CycleBenchError, ValueError) as e:
        return {"variant": text, "value": None, "error": str(e), "reproduces": None}
    v = d.get("value")
    return {"variant": text, "value": v, "bound": d.get("bound"), "stable": d.get("stable"),
            "code": (d.get("code") or "").splitlines()[:2], "error": d.get("error"),
            "reproduces": agrees(v, their, their_bound, tol) if v is not None else None}


def verdict(result: dict) -> list[str]:
    """Text lines: per figure that disagrees, which variants reproduce the published figure."""
    lines = []
    for f in result["figures"]:
        if f["match"] is not False:
            continue
        hits = [v for v in f["variants"] if v.get("reproduces")]
        pub = ("≤" if f["published_bound"] else "") + f"{f['published']:g}"
        head = f"{result['form']} {f['figure']}: ours {f['ours']:.2f}, published {pub}"
        if hits:
            lines.append(head + "; reproduced by: " + "; ".join(
                f"{v['variant']} = {v['value']:.2f}" for v in hits))
        else:
            tried = "; ".join(f"{v['variant']} = " + (f"{v['value']:.2f}" if v.get("value") is not None
                                                     else f"failed ({v.get('error')})")
                              for v in f["variants"])
            lines.append(head + "; no variant reproduces it (tried: " + (tried or "none") + ")")
            same = unsteady_chain(result, f["figure"]) or method_reads_ours(result, f["figure"])
            if same:
                lines.append(f"{result['form']} {f['figure']}: {same}")
    return lines or [f"{result['form']}: agrees with the published figures; nothing to explain"]
