"""The disk copy of a loaded results file (ports/load_cache.py): read back in place of loading,
named by the file's bytes, made again when torn, and never holding the catalogue."""
from __future__ import annotations

import pytest

from cyclebench.cache import cache_dir
from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.ports import load_cache
from cyclebench.instructions.ports.ensemble import one
from cyclebench.instructions.ports.predict import load

from test_ports_ensemble import _file

BLOCK = "imul rax, rbx; imul rcx, rbx; add rdx, rbx"


@pytest.fixture
def built(tmp_path, monkeypatch):
    """predict.load, counting its calls, with a cache of the test's own."""
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path / "cache"))
    calls = []

    def build(path):
        calls.append(path)
        return load(path)
    return build, calls


def test_a_loaded_file_is_read_back_from_its_copy(tmp_path, built):
    build, calls = built
    a = _file(tmp_path / "a.jsonl", 2.0)
    first = load_cache.cached(a, build)
    again = load_cache.cached(a, build)
    assert len(calls) == 1                                   # the second came from the copy
    assert one(BLOCK, again).cycles == one(BLOCK, first).cycles == pytest.approx(4.0)
    copy = cache_dir(load_cache.CACHE_KIND) / load_cache.key(a.read_bytes())
    assert copy.is_file() and copy.stat().st_size < 200_000  # no catalogue in it


def test_a_changed_file_is_loaded_again(tmp_path, built):
    build, calls = built
    a = _file(tmp_path / "a.jsonl", 2.0)
    load_cache.cached(a, build)
    a.write_bytes(_file(tmp_path / "b.jsonl", 1.0).read_bytes())
    assert one(BLOCK, load_cache.cached(a, build)).cycles == pytest.approx(2.0)
    assert len(calls) == 2


def test_a_torn_copy_is_made_again(tmp_path, built):
    build, calls = built
    a = _file(tmp_path / "a.jsonl", 2.0)
    load_cache.cached(a, build)
    copy = cache_dir(load_cache.CACHE_KIND) / load_cache.key(a.read_bytes())
    copy.write_bytes(copy.read_bytes()[:100])
    assert one(BLOCK, load_cache.cached(a, build)).cycles == pytest.approx(4.0)
    assert len(calls) == 2 and copy.stat().st_size > 100


def test_the_catalogue_is_named_in_a_copy_and_read_back_as_this_process_s():
    holder = {"catalogue": Catalogue.load(), "figure": 1.5}
    data = load_cache.dumps(holder)
    assert len(data) < 1000
    back = load_cache.loads(data)
    assert back["catalogue"] is Catalogue.load() and back["figure"] == 1.5


def test_a_result_that_does_not_pickle_is_given_and_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path / "cache"))
    a = _file(tmp_path / "a.jsonl", 2.0)
    calls = []

    def build(path):
        calls.append(path)
        return {"f": lambda: 1}
    assert load_cache.cached(a, build)["f"]() == 1 and load_cache.cached(a, build)["f"]() == 1
    assert len(calls) == 2 and not (cache_dir(load_cache.CACHE_KIND) / load_cache.key(a.read_bytes())).exists()
