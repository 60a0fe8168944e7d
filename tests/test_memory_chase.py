"""The chase's runs continue one walk: each run's init starts every chain at the walk's position
(advanced by B's loads plus a pseudo-random part of A's per run) in its own cycle. Checked by running one_time_init and several
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


def _program(c: chains.Chain, runs: int, advance: int, jitter: int, r14: int, off: int = 0) -> str:
    parts = [chase.one_time_init(c, MADV_NOHUGEPAGE)]
    pos = 0
    for _ in range(runs):
        parts.append(chase.init(c, r14, advance, jitter))
        parts += chase._base(r14, "r13", "r12")
        for j, where in enumerate(_expected(c, pos + off)):
            reg = chase.REGS[j]
            parts += [f"lea r12, [r13 + {where}]", f"cmp {reg}, r12", "jz 5f", "ud2", "5:"]
        pos = chase.next_position(pos, advance, jitter)
    return "\n".join(parts)


def _run(c: chains.Chain, code: str, r14: int):
    import numpy as np
    data = np.ascontiguousarray(c.order, dtype="<u4").tobytes()
    # the code checks each start itself (ud2 where one is wrong); nothing is timed, so a stated
    # clock spares the calibration, whose check a burst on a noisy host can fail
    return measure(code, unroll=1, loop=1, n_measurements=1, warm_up=0, r14_size=r14, data=data,
                   max_memory=r14 + len(data) + (512 << 20), allow_syscalls=True, budget=0.0, paired=True,
                   cpu=0, clock_mhz=1000)


@pytest.mark.parametrize("chain", [chains.build("random", 64 << 10, seed=2), chains.parallel(64 << 10, 3, seed=1),
                                   chains.tlb(40, seed=4)], ids=["random", "parallel", "tlb"])
def test_runs_continue_the_walk(chain):
    r14, _ = chase.region(chain)
    advance, jitter = 2 * 7 * 3, 7 * 3   # wraps the 40-element TLB chain and the 341-element segments
    _run(chain, _program(chain, 12, advance, jitter, r14), r14)     # raises if any start is wrong


def test_a_wrong_start_is_caught():
    chain = chains.build("random", 64 << 10, seed=2)
    r14, _ = chase.region(chain)
    with pytest.raises(CycleBenchError):
        _run(chain, _program(chain, 3, 10, 5, r14, off=1), r14)


def test_setup_advances_past_b_and_by_a_part_of_a():
    chain = chains.build("sequential", 1 << 20)
    s = chase.setup(chain, "4k", min_loads=4096, max_loads=8192)
    n = s.unroll * s.loop
    assert f"lea r9, [r8 + rdx + {2 * n}]" in s.init and f"mov r9, {n}" in s.init
    assert n >= 8192 // chain.segments
    moves = [chase.next_position(p, 2 * n, n) - p for p in range(0, 10 ** 6, 9973)]
    assert min(moves) >= 2 * n and max(moves) < 3 * n and len(set(m % n for m in moves)) > len(moves) // 2
