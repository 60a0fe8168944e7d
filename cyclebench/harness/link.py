"""Assembling a harness with its calibration functions assembled once and spliced in.

The calibration, its check and the contention gauge are the same thousands of instructions in
every measurement (about two thirds of the assembler's time on a new snippet). ``generate`` puts
them on a page of their own just before the control block, and they address nothing but that
block, RIP-relative: their bytes are then the same whatever precedes them. So they are assembled
on their own (kept in the cache folder like any object, keyed by their source and the binutils),
the snippet's harness is assembled with that many bytes reserved in their place, and the two are
joined: the same blob and symbols as assembling the whole source (tests/test_harness_link.py).
"""
from __future__ import annotations

from ..snippet.assemble import AssembledObject, assemble
from .codegen import CALIBRATION_LABEL, HarnessSpec, calibration_span, generate_calibration

CACHE_KIND = "calibration"      # not a snippet's: a new snippet finds it made, like the runner


def assemble_harness(spec: HarnessSpec, lines: list[str], origin: dict[int, tuple[str, str]],
                     while_running=None) -> AssembledObject:
    """``assemble(lines, origin)`` for ``lines, origin = generate(spec)`` (``while_running`` as
    there: it may be called more than once)."""
    if not spec.calibration:
        return assemble(lines, origin, while_running=while_running)
    fixed = assemble(generate_calibration(spec), kind=CACHE_KIND, while_running=while_running)
    size = fixed.symbols["cb_data_pages"]          # the functions and their padding to the next page
    first, end = calibration_span(lines)
    # origin numbers only the user's lines, which all come before the calibration
    own = assemble(lines[:first] + [f".skip {size}"] + lines[end:], origin, while_running=while_running)
    at = own.symbols[CALIBRATION_LABEL]
    symbols = {**own.symbols, **{name: at + off for name, off in fixed.symbols.items() if off < size}}
    return AssembledObject(own.blob[:at] + fixed.blob[:size] + own.blob[at + size:], symbols,
                           own.warnings + fixed.warnings)
