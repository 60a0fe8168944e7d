"""The chase's runs continue one walk: each run's init starts every chain at the walk's position
(advanced by B's loads per run) in its own cycle. Checked by running one_time_init and several
inits inside measure(), with ud2 on any chain register that is not the expected line's address
(a fact, not a timing)."""
import pytest

from cyclebench.errors import CycleBenchError
from cyclebench.measurement.api import measure
from cyclebench.studies.memory import chains, chase
from cyclebench.studies.memory.hugepages import MADV_NOHUGEPAGE


def _expected(c: chains.Chain, pos: int) -> list[int]:
    """Byte offsets from the region's start of every chain's start at walk position ``pos``."""
    lines = c.lines()
    return [int(lines[j * c.seg_len + pos % c.seg_len]) * chains.LINE for j in range(c.segments)]


def _program(c: chains.Chain, runs: int, advance: int, r14: int, off: int = 0) -> str:
    parts = [chase.one_time_init(c, MADV_NOHUGEPAGE)]
    for i in range(runs):
        parts.append(chase.init(c, r14, advance))
        parts += chase._base(r14, "r13", "r12")
        for j, where in enumerate(_expected(c, i * advance + off)):
            reg = chase.REGS[j]
            parts += [f"lea r12, [r13 + {where}]", f"cmp {reg}, r12", "jz 5f", "ud2", "5:"]
    return "\n".join(parts)


def _run(c: chains.Chain, code: str, r14: int):
    import numpy as np
    data = np.ascontiguousarray(c.order, dtype="<u4").tobytes()
    return measure(code, unroll=1, loop=1, n_measurements=1, warm_up=0, r14_size=r14, data=data,
                   max_memory=r14 + len(data) + (512 << 20), allow_syscalls=True, budget=0.0, paired=True,
                   cpu=0)


@pytest.mark.parametrize("chain", [chains.build("random", 64 << 10, seed=2), chains.parallel(64 << 10, 3, seed=1),
                                   chains.tlb(40, seed=4)], ids=["random", "parallel", "tlb"])
def test_runs_continue_the_walk(chain):
    r14, _ = chase.region(chain)
    advance = 2 * 7 * 3                 # wraps the 40-element TLB chain and the 341-element segments
    _run(chain, _program(chain, 12, advance, r14), r14)     # raises if any start is wrong


def test_a_wrong_start_is_caught():
    chain = chains.build("random", 64 << 10, seed=2)
    r14, _ = chase.region(chain)
    with pytest.raises(CycleBenchError):
        _run(chain, _program(chain, 3, 10, r14, off=1), r14)


def test_setup_advances_by_b_loads():
    chain = chains.build("sequential", 1 << 20)
    s = chase.setup(chain, "4k", min_loads=4096, max_loads=8192)
    assert f"lea r9, [r8 + {2 * s.unroll * s.loop}]" in s.init
    assert s.unroll * s.loop >= 8192 // chain.segments
