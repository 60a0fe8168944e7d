"""The memory-hierarchy study (``cyclebench study memory``): load-to-use latency against
working-set size for four chain layouts and two page sizes, detected cache levels beside sysfs and
CPUID, TLB reach, memory-level parallelism, bandwidth kernels and loaded latency.

chains.py builds the pointer chains (numpy), chase.py turns one into a measure() call,
kernels.py the bandwidth kernels, levels.py finds the level edges, cachespec.py reads what the
machine says about its caches; study.py runs it on the framework in cyclebench/study/."""
