"""Mapping an offset in the generated code back to the user's statement."""
from __future__ import annotations

from ..snippet.parse import CodePart

FUNCTIONS = ("one_time", "run_a", "run_b", "calib_a", "calib_b")


def locate(offset: int, symbols: dict[str, int], parts: list[CodePart]) -> tuple[str, str] | None:
    """(part name, user statement) at ``offset``, or None if it is in the harness itself."""
    starts = [(symbols[f"cb_{fn}"], fn) for fn in FUNCTIONS if f"cb_{fn}" in symbols]
    inside = [fn for start, fn in sorted(starts) if start <= offset]
    if not inside:
        return None
    fn = inside[-1]
    body, end = symbols.get(f"cb_{fn}_body"), symbols.get(f"cb_{fn}_body_end")
    if body is not None and end is not None and body <= offset < end:
        copy2 = symbols.get(f"cb_{fn}_copy2")
        if copy2 and copy2 > body:
            offset = body + (offset - body) % (copy2 - body)
    for part, src, lo, hi in statement_ranges(symbols, fn, parts):
        if lo <= offset < hi:
            return part.name, src
    return None


def statement_ranges(symbols: dict[str, int], fn: str, parts: list[CodePart]):
    """(part, user statement, start, end) of each labelled statement of function ``fn``."""
    for part in parts:
        for i, src in enumerate(part.sources()):
            lo = symbols.get(f"cb_{fn}_{part.name}_{i}")
            hi = symbols.get(f"cb_{fn}_{part.name}_{i + 1}", symbols.get(f"cb_{fn}_{part.name}_end"))
            if lo is not None and hi is not None and lo < hi:
                yield part, src, lo, hi
