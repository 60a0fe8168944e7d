"""Pointer chains as the field builds them, as element numbers in visiting order (numpy).

A chain walks ``n`` elements. Element ``e`` lives at the cache line ``e * stride + (e & mask)``
of the chain's region (64-byte lines), so the latency chains (stride 1, mask 0) use every line of
the region and the TLB chains (stride = lines per page, mask = lines per page - 1) one line per
page, at a line offset that changes from page to page so that the lines do not all fall into one
cache set. ``segments`` equal parts of ``order`` each close into their own cycle (several
independent chains for the MLP experiment); segment ``j`` holds the elements
``j * n/segments .. (j+1) * n/segments - 1``, and a run of chain ``j`` may start at any of them.

Layouts (``build``):

``sequential``  lines in address order: every prefetcher follows it.
``lmbench``     pages in random order; inside each page the lines in one fixed shuffled order
                (the same for every page), as lmbench's ``lat_mem_rd`` random mode lays them out.
``multichase``  lines random within groups of ``group_pages`` pages, the groups in random order
                (multichase's TLB-locality chain): few TLB misses, no stride to prefetch.
``random``      a random cyclic order of all lines: defeats prefetchers and the TLB alike.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LINE = 64
LAYOUTS = ("sequential", "lmbench", "multichase", "random")


@dataclass(frozen=True)
class Chain:
    name: str
    order: np.ndarray          # uint32 element numbers in visiting order (per segment, then closed)
    stride: int = 1            # lines between consecutive elements
    mask: int = 0              # element & mask is added to the line (stride - 1 or 0)
    segments: int = 1          # independent cycles (order is cut into this many equal parts)

    @property
    def n(self) -> int:
        return int(self.order.size)

    @property
    def seg_len(self) -> int:
        return self.n // self.segments

    def lines(self) -> np.ndarray:
        """The line index of every element in visiting order."""
        e = self.order.astype(np.int64)
        return e * self.stride + (e & self.mask)

    @property
    def span(self) -> int:
        """Bytes from the region's start to the end of its last line."""
        return int((self.n - 1) * self.stride + ((self.n - 1) & self.mask) + 1) * LINE

    def successors(self) -> dict[int, int]:
        """line -> next line, as the pointers written into memory will say (for checks)."""
        ln = self.lines().reshape(self.segments, self.seg_len)
        nxt = np.roll(ln, -1, axis=1)
        return dict(zip(ln.ravel().tolist(), nxt.ravel().tolist()))


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def build(layout: str, size: int, *, page: int = 4096, group_pages: int = 16, seed: int = 0) -> Chain:
    """A chain over every line of ``size`` bytes (a multiple of 64) in ``layout``'s order."""
    if size % LINE or size <= 0:
        raise ValueError(f"chain size {size} is not a positive multiple of {LINE}")
    n = size // LINE
    rng = _rng(seed)
    if layout == "sequential":
        order = np.arange(n, dtype=np.int64)
    elif layout == "lmbench":
        lpp = max(1, min(page // LINE, n))
        pages = -(-n // lpp)
        inpage = rng.permutation(lpp)
        order = (rng.permutation(pages)[:, None] * lpp + inpage[None, :]).ravel()
        order = order[order < n]
    elif layout == "multichase":
        glines = max(1, min(group_pages * page // LINE, n))
        groups = -(-n // glines)
        parts = []
        for g in rng.permutation(groups):
            lo, hi = g * glines, min(n, (g + 1) * glines)
            parts.append(lo + rng.permutation(hi - lo))
        order = np.concatenate(parts)
    elif layout == "random":
        order = rng.permutation(n)
    else:
        raise ValueError(f"unknown chain layout {layout!r} (one of {', '.join(LAYOUTS)})")
    return Chain(layout, order.astype(np.uint32))


def tlb(pages: int, page: int = 4096, *, dense: bool = False, seed: int = 0) -> Chain:
    """One line per page over ``pages`` pages in random page order; ``dense``: the same visiting
    order over ``pages`` consecutive lines (the cache-only twin the TLB penalty is taken against)."""
    order = _rng(seed).permutation(pages).astype(np.uint32)
    lpp = page // LINE
    if dense:
        return Chain(f"tlb-dense-{page}", order)
    return Chain(f"tlb-{page}", order, stride=lpp, mask=lpp - 1)


def parallel(size: int, k: int, *, seed: int = 0) -> Chain:
    """``k`` independent random chains, chain ``j`` over the ``j``-th k-th of ``size`` bytes."""
    n = size // LINE
    per = n // k
    if per < 2:
        raise ValueError(f"{size} bytes is too small for {k} chains")
    rng = _rng(seed)
    order = np.concatenate([j * per + rng.permutation(per) for j in range(k)])
    return Chain(f"parallel-{k}", order.astype(np.uint32), segments=k)
