"""Start-up cost of one command: only the named subcommand's module is imported, and the counter
probe's answer is kept on disk, keyed by what can change it."""
import os
import subprocess
import sys

from cyclebench.cli import parser


def _choices(p):
    return set(next(a for a in p._actions if a.dest == "command").choices)


def test_a_named_subcommand_builds_only_its_own_parser():
    assert _choices(parser.build_parser(["asm", "nop"])) == {"asm"}
    assert _choices(parser.build_parser(["--help"])) == set(parser.SUBCOMMANDS)
    assert _choices(parser.build_parser(["nosuch"])) == set(parser.SUBCOMMANDS)


def test_a_subcommands_help_is_the_same_either_way():
    alone = parser.build_parser(["asm"])._subparsers._group_actions[0].choices["asm"]
    full = parser.build_parser([])._subparsers._group_actions[0].choices["asm"]
    assert alone.format_help() == full.format_help()


def test_asm_imports_no_other_subcommand():
    code = ("import sys\nfrom cyclebench.cli.parser import build_parser\nbuild_parser(['asm', 'nop'])\n"
            "print(' '.join(m for m in sys.modules if m.startswith(('cyclebench.cli.', 'cyclebench.study'))))")
    mods = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "cyclebench.cli.asm" in mods
    assert not {"cyclebench.cli.study", "cyclebench.cli.inst", "cyclebench.study.engine"} & set(mods)


def test_the_measurement_api_loads_no_event_tables_until_events_are_named():
    """A plain measurement names no events and meets no refused system call: the event tables
    (counters.events/resolve) and libseccomp's ctypes binding stay unloaded until one does."""
    code = ("import sys\nimport cyclebench.measurement.api\n"
            "print(' '.join(m for m in sys.modules if m.startswith('cyclebench.')))")
    mods = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert "cyclebench.measurement.api" in mods
    assert not {"cyclebench.counters.events", "cyclebench.counters.resolve", "cyclebench.machine.syscalls"} & mods
    # nor the microarchitecture table: a result's metadata loads it while the harness is assembled
    assert not {"cyclebench.machine.uarch", "cyclebench.machine.metadata"} & mods


def test_events_given_as_a_list_are_still_checked_when_loaded_late():
    from cyclebench.counters.events import EventSpec
    from cyclebench.errors import UsageError
    from cyclebench.measurement.params import check
    check(events=["task-clock", EventSpec("task-clock", 1, 1)])
    with pytest.raises(UsageError, match="events must be names"):
        check(events=["task-clock", 3])


import pytest

from cyclebench import cache
from cyclebench.counters import backends, probe_cache
from cyclebench.runner.protocol import RunnerOutput

ARGS = ("--event", "0:0x0:0x0:0x0:0:1", "--event", "1:0x2:0x0:0x0:0:1")


@pytest.fixture
def probes(monkeypatch, tmp_path):
    """A cache folder of its own, a fake runner that counts its starts, and a fixed environment key."""
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_fallback", None)
    monkeypatch.setattr(backends.runner, "runner_path", lambda: tmp_path / "cb-runner-x")
    starts = []

    def fake_run(args, timeout):
        starts.append(args)
        return RunnerOutput(probes=[(0, False, "ENOENT 2"), (1, True, "rdpmc=0")])

    monkeypatch.setattr(backends.runner, "run", fake_run)
    key = {"k": "boot-1"}
    monkeypatch.setattr(probe_cache, "environment_key", lambda runner: key["k"])
    backends._probe_cached.cache_clear()
    yield starts, key, tmp_path / probe_cache.FILE
    backends._probe_cached.cache_clear()


def _probe():
    backends._probe_cached.cache_clear()        # a new process: only the disk remembers
    return backends._probe_cached(ARGS)


def test_the_probe_runs_once_and_its_answer_is_kept(probes):
    starts, _, _ = probes
    first = _probe()
    assert first == (backends.ProbeResult(False, "ENOENT"), backends.ProbeResult(True, rdpmc=0))
    assert _probe() == first and len(starts) == 1


def test_a_changed_key_probes_again(probes):
    starts, key, _ = probes
    _probe()
    key["k"] = "boot-2"                 # e.g. a reboot, or perf_event_paranoid changed
    _probe()
    assert len(starts) == 2
    assert _probe() and len(starts) == 2


@pytest.mark.parametrize("content", ["not json", "[]", '{"version": 1, "key": "boot-1", "probes": {"x": 1}}',
                                     '{"version": 1, "key": "boot-1", "probes": {"--event\\u00000:0x0:0x0:0x0:0:1'
                                     '\\u0000--event\\u00001:0x2:0x0:0x0:0:1": [[true, "", 0]]}}',
                                     '{"version": 0, "key": "boot-1", "probes": {}}'])
def test_a_foreign_or_damaged_file_is_ignored_and_rewritten(probes, content):
    starts, _, path = probes
    path.write_text(content)
    assert _probe()[0].errno == "ENOENT" and len(starts) == 1
    assert probe_cache.lookup("boot-1", ARGS) == [[False, "ENOENT", 0], [True, "", 0]]


def test_the_key_follows_the_runner_binary(tmp_path):
    exe = tmp_path / "cb-runner-a"
    exe.write_bytes(b"1")
    k1 = probe_cache.environment_key(exe)
    assert probe_cache.environment_key(exe) == k1
    os.utime(exe, ns=(1, 1))           # a use refreshes the time (runner/build.py): same binary, same key
    assert probe_cache.environment_key(exe) == k1
    new = tmp_path / "new"
    new.write_bytes(b"22")
    os.replace(new, exe)                # a rebuild replaces the file
    assert probe_cache.environment_key(exe) != k1
    assert probe_cache.environment_key(tmp_path / "cb-runner-b") != k1


def test_a_use_of_the_runner_keeps_the_probe_answer():
    """Each use refreshes the runner's modification time; the stored probe answer must survive it,
    or every command starts the runner once more to probe."""
    from cyclebench.runner import build
    exe = build.runner_path()
    k1 = probe_cache.environment_key(exe)
    assert build.runner_path() == exe
    assert probe_cache.environment_key(exe) == k1


@pytest.mark.parametrize("source", probe_cache._SOURCES)
def test_the_key_follows_boot_and_kernel_settings(monkeypatch, tmp_path, source):
    exe = tmp_path / "cb-runner-a"
    exe.write_bytes(b"1")
    before = probe_cache.environment_key(exe)
    real = probe_cache._read
    monkeypatch.setattr(probe_cache, "_read", lambda p: "changed" if p == source else real(p))
    assert probe_cache.environment_key(exe) != before


def test_a_measurements_text_is_the_text_format_without_the_report_model(cli, stored_result):
    """`cyclebench asm` prints its result as the text format does, without loading the report
    model and the other formats (a few ms of every command)."""
    from pathlib import Path
    from cyclebench.reports import get_reporter
    rc, out, _ = cli("asm", "nop")
    assert rc == 0 and out == get_reporter("text").render([stored_result])
    stored = Path(__file__).parent / "data" / "reports" / "result.json"
    code = ("import sys\nfrom pathlib import Path\nfrom cyclebench.measurement import api\n"
            "from cyclebench.measurement.result import Result\n"
            f"r = Result.from_json(Path({str(stored)!r}).read_text())\n"
            "api.measure = lambda *a, **k: r\n"
            "from cyclebench.cli.main import main\nmain(['asm', 'nop'])\n"
            "print(' '.join(m for m in sys.modules if m.startswith('cyclebench.reports')), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == out
    mods = set(proc.stderr.split())
    assert "cyclebench.reports.measurement_text" in mods
    assert not {"cyclebench.reports.model", "cyclebench.reports.registry"} & mods
