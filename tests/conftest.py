import os
import tempfile

import pytest

from cyclebench.cli.main import main


def pytest_configure(config):
    """Tests get a cache folder of their own (kept between runs, so built runners and routines are
    reused): the clock and contention history that tests record must never become the reference
    of the user's real measurements, nor the user's history that of the tests."""
    if "CYCLEBENCH_CACHE" not in os.environ:
        home = os.path.expanduser("~")
        base = os.path.join(home, ".cache") if home.startswith("/") and home != "/" else tempfile.gettempdir()
        os.environ["CYCLEBENCH_CACHE"] = os.path.join(base, "cyclebench-tests")


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process: returns (exit code, stdout, stderr)."""
    def run(*argv):
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


def pytest_collection_modifyitems(items):
    """A `measured` test is re-run up to twice: a fact that holds fails all three runs, a run
    disturbed by a burst of other work on the host does not fail CI."""
    for item in items:
        if item.get_closest_marker("measured"):
            item.add_marker(pytest.mark.flaky(reruns=2))
