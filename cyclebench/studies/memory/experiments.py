"""The memory study's plan: one Task per measurement. A key names the experiment, the chain or
kernel, the page size, the size and the timing options, so a resumed run measures exactly what
is missing and changed settings are measured again."""
from __future__ import annotations

import hashlib
import json

from cyclebench.study.base import Task

from . import chains, kernels
from .config import LEVELS, StudyConfig
from .measuring import chase_record, cpu_pair, kernel_record, loaded_record


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:10]


def _h(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << (shift - 4)) == 0:
            return f"{n / (1 << shift):g} {unit}"
    return f"{n} B"


def level_footprints(cfg: StudyConfig, caches: dict[int, int]) -> dict[str, int]:
    """Bytes all of a kernel's arrays take together, per level: half of L1d and L2, a quarter of
    L3 (from sysfs), and for DRAM ``dram_factor`` x L3 per array (STREAM's rule, capped)."""
    l1, l2, l3 = caches.get(1, 32 << 10), caches.get(2, 512 << 10), caches.get(3, 32 << 20)
    return {"L1": l1 // 2, "L2": l2 // 2, "L3": l3 // 4, "DRAM": min(cfg.dram_factor * l3, cfg.dram_cap)}


def plan(cfg: StudyConfig, caches: dict[int, int], widths: list[str]) -> list[Task]:
    tasks: list[Task] = []
    opts = {"reps": cfg.reps, "budget": cfg.budget, "min_loads": cfg.min_loads, "max_loads": cfg.max_loads,
            "seed": cfg.seed, "settle": [cfg.chase_budget, cfg.settle_seconds, cfg.max_processes, "median-over-processes"]}
    tag = _digest(opts)
    two = cpu_pair()        # two-CPU experiments need two distinct physical cores

    if "latency" in cfg.experiments:
        sizes = cfg.latency_sizes(tuple(sorted(caches.values())))
        for layout in cfg.layouts:
            pages = cfg.pages if layout in cfg.full_pages_layouts else cfg.pages[:1]
            for page in pages:
                for i, size in enumerate(sizes):
                    if layout in cfg.sparse_layouts and i % 2 and size != sizes[-1]:
                        continue
                    params = {"layout": layout, "page": page, "size": size, "group_pages": cfg.group_pages}

                    def run(layout=layout, page=page, size=size, params=params):
                        c = chains.build(layout, size, group_pages=cfg.group_pages, seed=cfg.seed)
                        return chase_record(c, page, cfg, params)
                    tasks.append(Task(f"latency|{layout}|{page}|{size}|{cfg.group_pages}|{tag}", "latency",
                                      f"latency {layout} {page} {_h(size)}", run))

    if "tlb" in cfg.experiments:
        for page, counts, psize in (("4k", cfg.tlb_pages_4k, 4096), ("2m", cfg.tlb_pages_2m, 2 << 20)):
            if page not in cfg.pages:
                continue
            for n in counts:
                for dense in (False, True):
                    params = {"page": page, "pages": n, "dense": dense}

                    def run(n=n, dense=dense, page=page, psize=psize, params=params):
                        return chase_record(chains.tlb(n, psize, dense=dense, seed=cfg.seed), page, cfg, params)
                    tasks.append(Task(f"tlb|{page}|{n}|{'dense' if dense else 'paged'}|{tag}", "tlb",
                                      f"tlb {page} {n} pages{' (dense twin)' if dense else ''}", run))

    if "mlp" in cfg.experiments:
        for k in cfg.mlp_chains:
            params = {"chains": k, "size": cfg.mlp_size, "page": "4k"}

            def run(k=k, params=params):
                return chase_record(chains.parallel(cfg.mlp_size, k, seed=cfg.seed), "4k", cfg, params)
            tasks.append(Task(f"mlp|{k}|{cfg.mlp_size}|{tag}", "mlp", f"mlp {k} chains", run))

    if "bandwidth" in cfg.experiments:
        foot = level_footprints(cfg, caches)
        for level in cfg.bw_levels:
            for k in kernels.kernels(widths):
                if k.nt and level not in cfg.nt_levels:
                    continue
                size = kernels.array_size(k, foot[level]) if level != "DRAM" else foot[level] // 256 * 256
                size -= size % k.step
                passes = max(1, -(-cfg.bw_pass_bytes // (size * kernels.ARRAYS[k.op]))) if level != "DRAM" else 1
                for cpus in (1, 2):
                    if cpus == 2 and (level not in cfg.two_cpu_levels or k.width not in cfg.two_cpu_widths
                                      or two is None):
                        continue
                    params = {"level": level, "kernel": k.name, "op": k.op, "width": k.width, "nt": k.nt,
                              "array_bytes": size, "arrays": kernels.ARRAYS[k.op], "passes": passes, "cpus": cpus,
                              "stream_bytes": k.stream_bytes(size), "allocate_bytes": k.allocate_bytes(size)}

                    # a cache-level kernel takes milliseconds: a burst the gauges see is re-run, as
                    # every other measurement is; a DRAM pass takes long enough to stay one run
                    budget = cfg.budget if level != "DRAM" and cpus == 1 else 0.0

                    def run(k=k, size=size, passes=passes, cpus=cpus, params=params, budget=budget):
                        return kernel_record(k, size, passes, cfg.bw_reps, cpus, params, budget)
                    tasks.append(Task(f"bw|{level}|{k.name}|{size}|{passes}|{cpus}|{cfg.bw_reps}|best-b-minus-best-a"
                                      + ("|fastest-confirmed|else-median-over-6-processes" if cpus == 1
                                         else "|fastest-confirmed-of-6-pairs")
                                      + (f"|budget {budget:g}" if budget else ""), "bandwidth",
                                      f"bandwidth {level} {k.name} x{cpus} CPU", run))

    if "loaded" in cfg.experiments and two is not None:
        stream = kernels.Kernel("read", "avx2" if "avx2" in widths else "scalar")
        ssize = level_footprints(cfg, caches)["DRAM"] // 256 * 256
        for loaded in (False, True):
            params = {"size": cfg.loaded_size, "layout": "random", "page": "4k", "loaded": loaded,
                      "stream": stream.name if loaded else None}

            def run(loaded=loaded, params=params):
                c = chains.build("random", cfg.loaded_size, seed=cfg.seed)
                if loaded:
                    return loaded_record(c, "4k", stream, ssize, 1, cfg, params)
                return chase_record(c, "4k", cfg, params)
            tasks.append(Task(f"loaded|{cfg.loaded_size}|{loaded}|{tag}", "loaded",
                              f"loaded latency ({'while another core streams' if loaded else 'idle neighbour'})", run))
    return tasks


LEVEL_ORDER = {lv: i for i, lv in enumerate(LEVELS)}
