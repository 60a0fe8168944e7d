"""The cache folder (cyclebench/cache.py): where it is, and that an unusable one never stops a
measurement nor creates /.cache."""
import os
import subprocess
import sys

import pytest

from cyclebench import cache


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(cache, "_fallback", None)
    for var in ("CYCLEBENCH_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_the_configured_folder_in_order(fresh, tmp_path):
    fresh.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "cyclebench"
    fresh.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir("routines") == tmp_path / "xdg" / "cyclebench" / "routines"
    fresh.setenv("CYCLEBENCH_CACHE", str(tmp_path / "cb"))
    assert cache.cache_dir() == tmp_path / "cb" and cache.is_persistent(tmp_path / "cb")


@pytest.mark.parametrize("home", ["", "/", "//", "relative/home"])
def test_a_home_that_would_mean_slash_dot_cache_gives_a_temporary_folder(fresh, home):
    fresh.setenv("HOME", home)
    path = cache.cache_dir()
    assert path.is_dir() and not cache.is_persistent(path) and not str(path).startswith("/.cache")


def test_a_cache_path_that_is_a_file_or_under_a_file_gives_a_temporary_folder(fresh, tmp_path):
    (tmp_path / "file").write_text("x")
    for configured in (tmp_path / "file", tmp_path / "file" / "below"):
        fresh.setattr(cache, "_fallback", None)
        fresh.setenv("CYCLEBENCH_CACHE", str(configured))
        path = cache.cache_dir("routines")
        assert path.is_dir() and not cache.is_persistent(path) and path.name == "routines"
    assert (tmp_path / "file").read_text() == "x"


def _run(env, tmp_path):
    """A real run through the CLI with the given environment (HOME, the cache variables)."""
    full = {k: v for k, v in os.environ.items() if k not in ("CYCLEBENCH_CACHE", "XDG_CACHE_HOME")}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "cyclebench", "asm", "-n", "3", "--budget", "0", "nop"],
                          capture_output=True, text=True, timeout=120, env=full, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)


def test_an_empty_home_measures_and_creates_no_slash_dot_cache(tmp_path):
    existed = os.path.exists("/.cache/cyclebench")
    proc = _run({"HOME": ""}, tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "cycles" in proc.stdout
    assert existed or not os.path.exists("/.cache/cyclebench")


def test_damaged_history_files_do_not_stop_a_measurement(tmp_path, monkeypatch):
    from cyclebench.measurement import clock_history
    cache_path = tmp_path / "cache"
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(cache_path))
    for kind, content in (("clock", "[1e999]"), ("contention", '{"a": null}')):
        clock_history._path(clock_history.machine_key(), kind).write_text(content)
    proc = _run({"CYCLEBENCH_CACHE": str(cache_path)}, tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
