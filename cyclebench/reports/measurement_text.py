"""A measurement Result as nanoBench prints it: one line per event, the backend and stability
below, and (verbose) every raw reading."""
from __future__ import annotations


def value_text(v: float, u: float) -> str:
    """Value with as many decimals as its uncertainty supports (at least 2, at most 4)."""
    if u != u or u <= 0:
        return f"{v:.2f}"
    digits = 2 if u >= 0.01 else 3 if u >= 0.001 else 4
    return f"{v:.{digits}f} ± {u:.{digits}f}"


def results_text(results: list, verbose: bool = False) -> str:
    """Measurement Results as text (the text format's rendering of them), each headed by its code
    when there are several."""
    many = len(results) > 1
    return "\n".join(ln for r in results for ln in result_lines(r, verbose, heading=many)) + "\n"


def result_lines(r, verbose: bool = False, heading: bool = False) -> list[str]:
    out = [f"== {r.parameters.get('code')}"] if heading else []
    per = "per run" if r.parameters.get("no_normalization") else "per copy"
    for e in r.events.values():
        if getattr(e, "upper_bound", None) is not None:
            out.append(f"{e.label}: < {e.upper_bound:.2g} {per} (upper bound: the code costs less than "
                       f"the resolution){_mux(e)}")
        elif e.aggregate == "range":
            out.append(f"{e.label}: {e.min:.4f} - {e.max:.4f}{_mux(e)}")
        else:
            out.append(f"{e.label}: {value_text(e.value, e.uncertainty)}{_mux(e)}")
    p = r.parameters
    loop = f"loop {p['loop']}{' (auto)' if p.get('loop_auto') else ''}" if p.get("use_loop") else "no loop"
    out.append(f"# backend {r.backend['name']}: {r.backend['reason']}")
    out.append(f"# unroll {p['unroll']}, {loop}, {p['n_measurements']} measurements, "
               f"aggregate {p['aggregate']}, {_verdict(r)}"
               + ("" if (r.stability.get("linearity") or {}).get("linear", True)
                  else ", NOT LINEAR in the copies (see the warning)"))
    if verbose:
        out += raw_lines(r)
    return out


def _verdict(r) -> str:
    """Stable or not; a figure below the resolution has no meaningful relative spread."""
    st = r.stability
    if st.get("below_resolution"):
        return "below resolution" + ("" if r.stable else ", UNSTABLE")
    spread = st.get("spread")
    return (("stable" if r.stable else "UNSTABLE")
            + (f" (spread {spread:.2%})" if spread is not None else " (spread around a median of zero)"))


def _mux(e) -> str:
    """A multiplexed perf event is flagged on its line, never scaled."""
    if not getattr(e, "multiplexed", False):
        return ""
    return f"  [MULTIPLEXED: counted {e.running_fraction:.0%} of the time at worst; not scaled]"


def raw_lines(r) -> list[str]:
    out = []
    groups = r.backend.get("groups") or []
    for n, att in enumerate(r.raw.get("attempts", [])):
        names = f" ({', '.join(groups[0]['events'])})" if groups else ""
        out.append(f"# attempt {n + 1}: loop {att['loop']}, TSC {att['tsc_hz'] / 1e9:.4f} GHz; "
                   f"per repetition: calib A/B ticks, A/B readings (tsc, events{names}...)")
        for i, (a, b) in enumerate(zip(att["a"], att["b"])):
            cal = f"{att['ca'][i][0]} {att['cb'][i][0]}  " if "ca" in att else ""
            out.append(f"#  rep {i:3d}: {cal}A {' '.join(map(str, a))}  B {' '.join(map(str, b))}")
        for g, grp in enumerate(att.get("groups", []), start=1):
            out.append(f"# attempt {n + 1}, event group {g} ({', '.join(grp['events'])}): A/B readings (tsc, events...)")
            for i, (a, b) in enumerate(zip(grp["a"], grp["b"])):
                out.append(f"#  rep {i:3d}: A {' '.join(map(str, a))}  B {' '.join(map(str, b))}")
    return out
