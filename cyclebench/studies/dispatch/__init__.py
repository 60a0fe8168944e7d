"""The dispatch study (``cyclebench study dispatch``): Anton Ertl's control-flow
integrity microbenchmark on this CPU. sources.py writes the dispatchers (C and generated
assembly), builds.py the nine builds, checking.py checks every dispatcher before timing,
codesize.py traces each path's executed bytes, experiments.py plans the timings
(routines.time_routine), analysis/tables/plots/summary turn the records into Ertl's table,
per-build and per-pattern tables, plots and summary.md."""
