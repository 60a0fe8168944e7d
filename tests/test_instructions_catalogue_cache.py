"""The catalogue's disk copy: named by what the build depends on, refused when torn or foreign."""
import os
import pickle

from cyclebench.instructions import Catalogue, catalogue_cache
from cyclebench.instructions.forms import Form
from cyclebench.machine.features import CpuFeatures


def test_the_name_follows_the_cpu_features_and_is_stable(tmp_path, monkeypatch):
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    a, b = CpuFeatures(frozenset({"sse2", "avx2"})), CpuFeatures(frozenset({"avx2", "sse2"}))
    assert catalogue_cache.path_for(a) == catalogue_cache.path_for(b)        # not the set's order
    assert catalogue_cache.path_for(a) != catalogue_cache.path_for(CpuFeatures(frozenset({"sse2"})))
    assert catalogue_cache.path_for(a).parent == tmp_path / "catalogue"


def test_a_stored_copy_reads_back_and_a_bad_one_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    forms = Catalogue.load().forms[:20]
    path = catalogue_cache.path_for(CpuFeatures(frozenset({"sse2"})))
    assert catalogue_cache.load(path, Form) is None                          # none yet
    catalogue_cache.store(path, forms)
    back = catalogue_cache.load(path, Form)
    assert [f.name for f in back] == [f.name for f in forms]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])                                  # torn
    assert catalogue_cache.load(path, Form) is None
    path.write_bytes(pickle.dumps({"not": "forms"}))                         # foreign
    assert catalogue_cache.load(path, Form) is None
    path.write_bytes(b"\x80\x05garbage")
    assert catalogue_cache.load(path, Form) is None


def test_storing_keeps_only_the_most_recently_used_copies(tmp_path, monkeypatch):
    # loaded first: a worker's first Catalogue.load() stores this CPU's copy into the cache
    # directory, which under the test's directory would be a third copy and evict the first
    forms = Catalogue.load().forms[:3]
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(catalogue_cache, "COPIES_KEPT", 2)
    a, b, c = (catalogue_cache.path_for(CpuFeatures(frozenset({f}))) for f in ("sse2", "avx", "avx2"))
    for i, path in enumerate((a, b)):
        catalogue_cache.store(path, forms)
        os.utime(path, (1000 + i, 1000 + i))                                 # the file clock is coarse
    assert catalogue_cache.load(a, Form) is not None                         # used: now the newer
    catalogue_cache.store(c, forms)
    assert a.exists() and not b.exists() and c.exists()
    assert not list(c.parent.glob(".catalogue-*"))                          # no temporary left
