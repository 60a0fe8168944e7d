"""llvm-mca predictions: parsing, error when missing, and (if installed) a run on real forms."""
import shutil

import pytest

from cyclebench.instructions.catalogue import Catalogue
from cyclebench.instructions.instantiate import instantiate, latency_pairs
from cyclebench.instructions.llvm_mca import (LlvmMcaUnavailable, find_llvm_mca, llvm_text,
                                              parse_output, predict)

HAVE_MCA = any(shutil.which(c) for c in ("llvm-mca-16", "llvm-mca"))

OUT = """Iterations:        100
Instructions:      100
Total Cycles:      303
Total uOps:        100

Dispatch Width:    6
uOps Per Cycle:    0.33
IPC:               0.33
Block RThroughput: 1.0


Instruction Info:
[1]: #uOps
[2]: Latency
[3]: RThroughput
[4]: MayLoad
[5]: MayStore
[6]: HasSideEffects (U)

[1]    [2]    [3]    [4]    [5]    [6]    Instructions:
 1      3     1.00                        imul	rbx, rcx
 1      8     0.50    *                   vpaddq	zmm1, zmm2, zmmword ptr [r14 + 64]
"""


def test_parse_output():
    r = parse_output(OUT)
    assert (r.iterations, r.total_cycles, r.block_rthroughput) == (100, 303, 1.0)
    assert r.table[0][:3] == (1, 3.0, 1.0) and r.table[0][3].startswith("imul")
    assert r.table[1][:3] == (1, 8.0, 0.5) and r.table[1][3].startswith("vpaddq")
    assert r.cycles_per_iteration == 3.03


def test_missing_llvm_mca_is_a_clear_error():
    with pytest.raises(LlvmMcaUnavailable) as e:
        find_llvm_mca("/nonexistent/llvm-mca-99")
    assert "llvm-16" in e.value.hint


def test_llvm_text_drops_gnu_only_prefixes():
    cat = Catalogue.load()
    assert llvm_text(instantiate(cat.get("IMUL (R64, R64)"))) == "imul rbx, rcx"


@pytest.mark.skipif(not HAVE_MCA, reason="llvm-mca not installed")
def test_predict_real_forms():
    cat = Catalogue.load()
    f = cat.get("IMUL (R64, R64)")
    pairs = [p for p in latency_pairs(f) if p.same_register]
    p = predict(f, pairs=pairs, iterations=200)
    assert p.latency >= 1 and p.rthroughput > 0 and p.uops >= 1
    assert p.simulated_throughput > 0
    assert all(v >= 1 for v in p.simulated_latency.values())
