import os
import shutil
import tempfile

import pytest

from cyclebench.cli.main import main


def pytest_configure(config):
    """Tests get their own cache folder: the clock and contention history they record (some from
    fabricated runner output) must never become the reference of the user's real measurements."""
    if "CYCLEBENCH_CACHE" not in os.environ:
        config._cyclebench_cache = tempfile.mkdtemp(prefix="cyclebench-test-cache-")
        os.environ["CYCLEBENCH_CACHE"] = config._cyclebench_cache


def pytest_unconfigure(config):
    cache = getattr(config, "_cyclebench_cache", None)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)


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
