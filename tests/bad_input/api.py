"""The Python API (issue 8 item 12) and the measurement edge cases of items 7, 8 and 11: bad
keyword types and values, malformed result JSON, code with nothing to measure, too many
repetitions for the timeout, and unusable cache folders or history files."""
from __future__ import annotations

import json
from pathlib import Path

from . import ApiCase, Case

FAULT = "mov rax, [0]"        # reaches the runner (and the clock history) quickly, then exit 5
NO_CACHE_ENV = {"CYCLEBENCH_CACHE": "", "XDG_CACHE_HOME": ""}


def _measure(code="nop", **kw):
    def call():
        import cyclebench
        return cyclebench.measure(code, **kw)
    return call


def _from_json(text):
    def call():
        import cyclebench
        return cyclebench.Result.from_json(text)
    return call


def _bare_measure(*args, **kw):
    def call():
        import cyclebench
        return cyclebench.measure(*args, **kw)
    return call


def _result_doc(**changes) -> str:
    doc = {"schema": "cyclebench.result", "schema_version": 1, "kind": "snippet", "parameters": {},
           "backend": {}, "machine": {}, "stability": {"stable": True, "spread": 0.0},
           "events": {"cycles": {"name": "cycles", "unit": "cycles", "value": 1.0, "uncertainty": 0.0,
                                 "aggregate": "avg", "label": "cycles", "min": 1.0, "median": 1.0, "max": 1.0}}}
    doc.update(changes)
    return json.dumps(doc)


def _bad_history(tmp: str) -> None:
    """Damaged clock and contention history files where this machine's would be."""
    from cyclebench.measurement import clock_history
    root = Path(tmp) / "cache"
    root.mkdir()
    key = clock_history.machine_key()
    clock_history._path(key, "clock", root).write_text("[1e999]")
    clock_history._path(key, "contention", root).write_text('{"a": null}')


_TYPE = r"must be a whole number, not"
CASES = [
    # item 12: every keyword's type and range, with the CLI's wording
    ApiCase("api-code-int", _measure(123), 2, r"code to measure must be assembly text .* not int 123"),
    ApiCase("api-code-list", _measure(["nop"]), 2, r"not list \['nop'\]"),
    ApiCase("api-code-nul", _measure("\x00"), 2, "NUL character"),
    ApiCase("api-init-int", _measure(init=5), 2, "init code must be assembly text"),
    ApiCase("api-unroll-str", _measure(unroll="5"), 2, "unroll count " + _TYPE + " str '5'"),
    ApiCase("api-unroll-float", _measure(unroll=5.5), 2, "unroll count " + _TYPE + " float 5.5"),
    ApiCase("api-unroll-bool", _measure(unroll=True), 2, "unroll count " + _TYPE + " bool"),
    ApiCase("api-unroll-zero", _measure(unroll=0), 2, "unroll count 0 is out of range"),
    ApiCase("api-loop-negative", _measure(loop=-1), 2, "loop count -1 is out of range"),
    ApiCase("api-n-zero", _measure(n_measurements=0), 2, "0 measurements is out of range"),
    ApiCase("api-warm-up-none", _measure(warm_up=None), 2, "warm_up " + _TYPE + " NoneType"),
    ApiCase("api-alignment-64", _measure(alignment_offset=64), 2, "alignment offset 64 is out of range"),
    ApiCase("api-aggregate-int", _measure(aggregate=5), 2, "unknown aggregate 5"),
    ApiCase("api-counters-unknown", _measure(counters="pmu"), 2, "unknown counter backend 'pmu'"),
    ApiCase("api-events-int", _measure(events=123), 2, "events must be names .* not int 123"),
    ApiCase("api-events-unknown-name", _measure(events=["bogus_ev"]), 7, "unknown event 'bogus_ev'"),
    ApiCase("api-data-str", _measure(data="str"), 2, "data must be bytes .* not str"),
    ApiCase("api-symbols-str", _measure(symbols="memcpy"), 2, "symbols must be a list of names"),
    ApiCase("api-libraries-int", _measure(libraries=5), 2, "libraries must be a list of names"),
    ApiCase("api-timeout-nan", _measure(timeout=float("nan")), 2, "timeout nan s is out of range"),
    ApiCase("api-timeout-str", _measure(timeout="10"), 2, "timeout must be a number of seconds"),
    ApiCase("api-budget-negative", _measure(budget=-1), 2, "re-run budget -1 s is out of range"),
    ApiCase("api-cpu-bool", _measure(cpu=True), 2, "cpu " + _TYPE + " bool"),
    ApiCase("api-cpu-missing", _measure(cpu=4096), 2, "CPU 4096 does not exist"),
    ApiCase("api-group-size-zero", _measure(group_size=0), 2, "group size 0 is out of range"),
    ApiCase("api-map-pages-huge", _measure(map_pages=1 << 20), 2, "page cap 1048576 is out of range"),
    ApiCase("api-r14-size-tiny", _measure(r14_size=1), 2, "r14 size 1 is out of range"),
    ApiCase("api-max-memory-tiny", _measure(max_memory=1 << 20), 2, "memory cap of 1048576 bytes"),
    ApiCase("api-flag-str", _measure(allow_syscalls="yes"), 2, "allow_syscalls must be True or False"),
    ApiCase("api-basic-mode-none", _measure(basic_mode=None), 2, "basic_mode must be True or False"),
    ApiCase("api-no-code", _bare_measure(), 2, r"measure\(\): missing a required argument: 'code'"),
    ApiCase("api-unknown-keyword", _bare_measure("nop", unrol=5), 2, "unexpected keyword argument 'unrol'"),
    ApiCase("api-positional-options", _bare_measure("nop", "mov rax, 1"), 2, "too many positional"),
    # item 12: Result.from_json
    ApiCase("result-list", _from_json("[1,2]"), 10, "not a cyclebench result"),
    ApiCase("result-events-list", _from_json(_result_doc(events=[])), 10, "field 'events' is list"),
    ApiCase("result-stability-null", _from_json(_result_doc(stability=None)), 10, "field 'stability' is null"),
    ApiCase("result-nan", _from_json(_result_doc().replace('"value": 1.0', '"value": NaN')), 10,
            "NaN is not a number in JSON"),
    ApiCase("result-deep", _from_json("[" * 100_000 + "]" * 100_000), 10, "nested too deeply"),
    ApiCase("result-event-value-str", _from_json(_result_doc().replace('"value": 1.0', '"value": "1"')), 10,
            "field 'value' is str"),
    ApiCase("result-not-text", _from_json(123), 10, "JSON text, not int"),
    ApiCase("result-bad-utf8", _from_json(b"\xff\xfe"), 10, "not valid JSON"),

    # item 7: nothing to measure
    ApiCase("api-only-a-directive", _measure(".set x, 1"), 2, "no instruction bytes: there is nothing to measure"),
    Case("asm-only-a-directive", ["asm", ".set x, 1"], 2, "no instruction bytes", r'e\.g\. cyclebench asm "nop"'),
    Case("asm-only-a-label", ["asm", "1:"], 2, "no instruction bytes"),
    # item 8: more repetitions than fit in the timeout: the hint names -n (half a second: it runs
    # alone, and 0.3 s did 1251 to 1650 of the 100000 repetitions here, so both the "done" count
    # and the timeout have room)
    Case("asm-too-many-repetitions", ["asm", "-n", "100000", "--timeout", "0.5", "add rax, rbx"], 6,
         r"did not finish within 0\.5 s: the code runs \(\d+ repetitions", r"-n \(repetitions\)", measured=True),
    # item 11: unusable cache folders and damaged history files do not stop a measurement
    Case("cache-empty-home", ["asm", FAULT], 5, "segmentation fault in 'mov rax, \\[0\\]'",
         env={**NO_CACHE_ENV, "HOME": ""}, subprocess=True),
    Case("cache-unwritable-home", ["asm", FAULT], 5, "segmentation fault", env={**NO_CACHE_ENV, "HOME": "/proc"},
         subprocess=True),
    Case("cache-home-is-a-file", ["asm", FAULT], 5, "segmentation fault",
         env={**NO_CACHE_ENV, "HOME": "{tmp}/home"}, files={"home": b"not a folder"}, intact=("home",),
         subprocess=True),
    Case("cache-path-is-a-file", ["asm", FAULT], 5, "segmentation fault", env={"CYCLEBENCH_CACHE": "{tmp}/cache"},
         files={"cache": b"not a folder"}, intact=("cache",), subprocess=True),
    Case("cache-damaged-history", ["asm", FAULT], 5, "segmentation fault", env={"CYCLEBENCH_CACHE": "{tmp}/cache"},
         setup=_bad_history, subprocess=True),
]
