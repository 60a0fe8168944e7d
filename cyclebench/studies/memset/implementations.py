"""The implementations a memset run times: the selected kernels (see __init__.py), routines the
user adds (``--routine NAME=LIB.so:SYMBOL``) and, for the threshold sweep, one build per rep stosb
cut-over; their correctness check before anything is timed; and the facts around them (glibc's
version and threshold, which PMU events can be counted)."""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cyclebench.counters.backends import select_backend
from cyclebench.counters.resolve import resolve_events
from cyclebench.errors import CycleBenchError
from cyclebench.routines.build import Routine, resolve
from cyclebench.routines.checking import checked, mark_checked

from .correctness import MemsetDomain, check_many
from .library import KERNELS, missing_features, routine as kernel_routine
from .config import StudyConfig

@dataclass
class Impl:
    """One implementation in the study: its routine and the domain it was checked on."""
    name: str
    routine: Routine
    domain: MemsetDomain
    kernel: str | None          # the KERNELS name, None for --routine extras


def _selected_kernels(cfg: StudyConfig) -> list[str]:
    names = list(cfg.kernels) if cfg.kernels is not None else list(KERNELS)
    return [n for n in names if not missing_features(KERNELS[n])]


def implementations(cfg: StudyConfig) -> list[Impl]:
    out = [Impl(n, kernel_routine(n), KERNELS[n].domain, n) for n in _selected_kernels(cfg)]
    for name, spec in cfg.extra:
        out.append(Impl(name, resolve(spec, name=name), MemsetDomain(), None))
    return out


def threshold_impls(cfg: StudyConfig, selected: list[str]) -> list[tuple[str, int, Impl]]:
    out = []
    for k in cfg.sweep_kernels:
        if k not in selected or not KERNELS[k].uses_stosb_threshold:
            continue
        for t in cfg.thresholds:
            out.append((k, t, Impl(f"{k}@{t}", kernel_routine(k, t), KERNELS[k].domain, k)))
    return out


def check_all(impls: list[Impl]) -> None:
    """Check every implementation (in parallel) before anything is timed; raise the first failure.
    One that passed in this process and has not changed since is not checked again."""
    impls = [i for i in impls if not checked(i.routine, i.domain)]
    results = check_many([(i.routine, i.domain) for i in impls])
    for impl, res in zip(impls, results):
        if isinstance(res, CycleBenchError):
            raise res
        mark_checked(impl.routine, impl.domain, res)


# ---------------------------------------------------------------------------------------------
# glibc facts

def glibc_info() -> dict:
    """glibc's version and its rep stosb threshold tunable (``ld.so --list-tunables``)."""
    info = {"version": os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None,
            "x86_rep_stosb_threshold": None, "x86_rep_stosb_threshold_source": None,
            "GLIBC_TUNABLES": os.environ.get("GLIBC_TUNABLES")}
    for ld in ("/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"):
        if not Path(ld).exists():
            continue
        try:
            out = subprocess.run([ld, "--list-tunables"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = re.search(r"glibc\.cpu\.x86_rep_stosb_threshold:\s*(0x[0-9a-fA-F]+|\d+)", out)
        if m:
            info["x86_rep_stosb_threshold"] = int(m.group(1), 0)
            info["x86_rep_stosb_threshold_source"] = f"{ld} --list-tunables"
            break
    if info["x86_rep_stosb_threshold"] is None:
        info["x86_rep_stosb_threshold"] = 2048
        info["x86_rep_stosb_threshold_source"] = "glibc's documented default (ld.so --list-tunables unavailable)"
    return info


def pmu_events() -> tuple[tuple[str, ...], str]:
    """(events to count, why): branch-misses when a hardware PMU works, else none and the reason."""
    try:
        b = select_backend("auto")
        if b.name != "perf":
            return (), b.reason
        select_backend("auto", resolve_events("branch-misses"))
        return ("branch-misses",), "hardware PMU available: branch-misses counted"
    except CycleBenchError as e:
        return (), e.cause


