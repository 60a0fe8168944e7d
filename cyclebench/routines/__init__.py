"""The routine benchmark harness: build a routine, check it, feed it input streams, time it; and
time whole programs built from C.

* ``build``: compile assembly/C into a cached shared object or program; resolve ``libc:memset`` or
  ``lib.so:symbol`` to a Routine.
* ``shape``: call shapes: which argument registers a routine takes (memset's dst/c/n, a
  dispatcher's index, an array kernel's pointer/length/index).
* ``streams``: argument streams of a shape, as packed little-endian u64 records (memset's: fixed,
  random with the reference's parameters, from a size distribution file).
* ``checking``: the checker interface and the memo of checked routines (a study brings its own
  checker: memset's is ``studies/memset/correctness.py``, dispatch's ``studies/dispatch/checking.py``).
* ``options``: ``TimingOptions``, how a routine is timed.
* ``passes``: the generated pass over a stream, the paired empty pass, L1d eviction.
* ``timing``: cycles per call over a stream through ``cyclebench.measure``, minus the empty pass
  measured in the same runner process; correctness checked first.
* ``program``: a whole program built from C with given flags, run pinned and resource-limited,
  timed with the TSC; per-iteration core cycles with measure()'s calibration.
* the statistics (mean of the fastest 10%, median, spread, per-call cost) are
  ``cyclebench.measurement.stats``, re-exported here.
* ``trace``: the instructions one call executes, by single-stepping (the memset study counts
  their stores and branches; the dispatch study the bytes of each path).
"""
from cyclebench.routines.build import (Built, Routine, build_executable, build_shared, cache_dir,
                                       empty_routine, resolve)
from cyclebench.routines.checking import CallableChecker, Checker, ensure_correct, mark_checked
from cyclebench.routines.program import ProgramLimits, ProgramTiming, build_program, time_program, time_programs
from cyclebench.routines.shape import MEMSET, Arg, CallShape, array_shape, dispatch_shape
from cyclebench.measurement.stats import Summary, fastest_mean, improvement_percent, per_call, summarize
from cyclebench.routines.streams import (Stream, distribution_stream, fixed_stream, make_stream,
                                         parse_distribution, random_stream)
from cyclebench.routines.options import TimingOptions
from cyclebench.routines.timing import Timing, time_routine

__all__ = [
    "Built", "Routine", "build_executable", "build_shared", "cache_dir", "empty_routine", "resolve",
    "CallableChecker", "Checker", "ensure_correct", "mark_checked",
    "ProgramLimits", "ProgramTiming", "build_program", "time_program", "time_programs",
    "MEMSET", "Arg", "CallShape", "array_shape", "dispatch_shape",
    "Summary", "fastest_mean", "improvement_percent", "per_call", "summarize",
    "Stream", "distribution_stream", "fixed_stream", "make_stream", "parse_distribution", "random_stream",
    "Timing", "TimingOptions", "time_routine",
]
