import fcntl
import os
import sys
import tempfile
from pathlib import Path

import pytest

from cyclebench.cli.main import main
from cyclebench.measurement import api, attempts
from cyclebench.measurement.result import Result

STORED_RESULT = Path(__file__).parent / "data" / "reports" / "result.json"


def pytest_configure(config):
    """Tests get a cache folder of their own (kept between runs, so built runners and routines are
    reused): the clock and contention history that tests record must never become the reference
    of the user's real measurements, nor the user's history that of the tests."""
    if "CYCLEBENCH_CACHE" not in os.environ:
        home = os.path.expanduser("~")
        base = os.path.join(home, ".cache") if home.startswith("/") and home != "/" else tempfile.gettempdir()
        os.environ["CYCLEBENCH_CACHE"] = os.path.join(base, "cyclebench-tests")


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """pytest rewrites each test module's asserts when it imports it, and keeps the rewritten code
    only where bytecode may be written. Where PYTHONDONTWRITEBYTECODE is set (setup.sh compiles the
    package ahead of time for such hosts), each worker rewrote every test module on every run:
    collecting took 3.9 s, 1.6 s with the rewritten code kept. The tests' bytecode is the suite's
    own cache (tests/__pycache__, ignored by git), so collection writes it (the first run on a
    checkout pays the rewrite); the tests themselves run with the host's setting."""
    host = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    yield
    sys.dont_write_bytecode = host


@pytest.fixture(scope="session")
def catalogue():
    """The instruction catalogue, loaded once for the tests that read forms from it."""
    from cyclebench.instructions.catalogue import Catalogue
    return Catalogue.load()


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process: returns (exit code, stdout, stderr)."""
    def run(*argv):
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


@pytest.fixture
def stored_result(monkeypatch):
    """measure() returns a stored result (tests/data/reports/result.json) without measuring: for
    tests about how a result is printed or saved, not about what it holds."""
    result = Result.from_json(STORED_RESULT.read_text())
    monkeypatch.setattr(api, "measure", lambda *args, **kwargs: result)
    return result


def _measured(item) -> bool:
    return item.get_closest_marker("measured") is not None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """A `measured` test is re-run up to twice: a fact that holds fails all three runs, a run
    disturbed by a burst of other work on the host does not fail CI.

    The measured tests run last, one after another (in their collection order): each one alone
    first waits for the test the other worker is in, so spread over the suite they cost that wait
    every time, and together once (pytest_runtest_protocol keeps the lock between them)."""
    for item in items:
        if _measured(item):
            item.add_marker(pytest.mark.flaky(reruns=2))
    items.sort(key=_measured)


@pytest.fixture(autouse=True)
def _few_attempts(request, monkeypatch):
    """measure() re-runs an unstable measurement up to 40 times within its budget, and on our noisy
    hosts nearly every measurement is flagged unstable (clock drift, a busy SMT sibling), so the
    suite's time followed the host's noise. A test that is not `measured` asserts nothing a timing
    decides: one attempt serves it. A `measured` test keeps the best of 10 attempts; a burst that
    spoils all ten is what its re-runs (pytest_collection_modifyitems) are for."""
    monkeypatch.setattr(attempts, "MAX_ATTEMPTS", 10 if _measured(request.node) else 1)


class _Alone:
    """A `measured` test runs alone; the others may share the machine with each other.

    pytest-xdist runs the suite on two workers (pyproject's addopts), and two timing runs on a
    2-CPU machine disturb each other. A reader-writer lock in the tests' cache folder does it:
    measured tests take it exclusively, the others shared. The turnstile lets a waiting measured
    test in before the next shared taker, so it cannot starve. Two suites run at once on one
    machine share the same lock, which is what their measured tests need too."""

    def __init__(self):
        self.lock = None            # the open lock file while this worker holds it

    def take(self, exclusive: bool) -> None:
        if self.lock is not None:   # kept, exclusive, by the measured test before this one
            return
        base = os.environ["CYCLEBENCH_CACHE"]
        os.makedirs(base, exist_ok=True)
        lock = open(os.path.join(base, "tests-alone.lock"), "a")
        with open(os.path.join(base, "tests-turnstile.lock"), "a") as turn:
            fcntl.flock(turn, fcntl.LOCK_EX)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            except BaseException:
                lock.close()
                raise
            finally:
                fcntl.flock(turn, fcntl.LOCK_UN)
        self.lock = lock

    def give(self) -> None:
        if self.lock is not None:
            fcntl.flock(self.lock, fcntl.LOCK_UN)
            self.lock.close()
            self.lock = None


_ALONE = _Alone()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Setup, call, teardown and re-runs of one test, under _Alone: module fixtures that measure
    are set up inside the first test that uses them, so they are covered too. A measured test
    followed by another on this worker keeps the lock for it."""
    _ALONE.take(exclusive=_measured(item))
    yield
    if not (_measured(item) and nextitem is not None and _measured(nextitem)):
        _ALONE.give()


@pytest.fixture
def fresh_assembler(monkeypatch, tmp_path):
    """A cache folder of its own, the in-process memory of assembled objects forgotten (as in a new
    process), and the list of as runs made: (as runs, cache folder)."""
    import importlib
    from cyclebench import cache
    asm = importlib.import_module("cyclebench.snippet.assemble")   # the package exports the function
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_fallback", None)
    monkeypatch.setattr(asm, "_ASSEMBLED", type(asm._ASSEMBLED)())
    calls = []
    real = asm.run_as
    monkeypatch.setattr(asm, "run_as", lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls, tmp_path
