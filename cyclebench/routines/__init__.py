"""The routine benchmark harness: build a routine, check it, feed it input streams, time it.

* ``build``: compile assembly/C into a cached shared object; resolve ``libc:memset`` or
  ``lib.so:symbol`` to a Routine.
* ``correctness``: check a memset-like routine on its whole domain in a native child process.
* ``streams``: argument streams (fixed, random with the reference's parameters, from a size
  distribution file) as packed little-endian u64 triples.
* ``stats``: the mean of the fastest 10%, median, minimum, spread, per-call cost.
* ``timing``: cycles per call over a stream through ``cyclebench.measure``, minus the empty-call
  pass measured in the same runner process; optional L1d eviction; correctness checked first.
"""
from cyclebench.routines.build import (Built, Routine, build_executable, build_shared, cache_dir,
                                       empty_routine, resolve)
from cyclebench.routines.correctness import CheckResult, MemsetDomain, check_many, check_memset
from cyclebench.routines.stats import Summary, fastest_mean, improvement_percent, per_call, summarize
from cyclebench.routines.streams import (Stream, distribution_stream, fixed_stream, parse_distribution,
                                         random_stream)
from cyclebench.routines.timing import Timing, TimingOptions, time_routine

__all__ = [
    "Built", "Routine", "build_executable", "build_shared", "cache_dir", "empty_routine", "resolve",
    "CheckResult", "MemsetDomain", "check_many", "check_memset",
    "Summary", "fastest_mean", "improvement_percent", "per_call", "summarize",
    "Stream", "distribution_stream", "fixed_stream", "parse_distribution", "random_stream",
    "Timing", "TimingOptions", "time_routine",
]
