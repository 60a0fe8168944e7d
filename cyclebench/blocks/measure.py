"""One basic block measured: its own loop around unrolled copies, run through ``measure()`` with
every page it touches mapped onto one shared page, as a versioned result document.

The measured code is ``mov C, L; (nops to 64); top: K copies of the block; dec C; jnz top``
(for a block that carries a chain through the flags, an end that writes none: harness/loopend.py)
with C a general register the block does not use (R15 first), K = min(100, 1024 / block bytes)
and L chosen so that one run executes about TARGET_INSTRUCTIONS instructions. ``measure()`` runs
it once in A and twice in B (unroll 1, no harness loop, so R15 stays the block's), so B - A is
one whole loop: cycles per iteration = (B - A) / (K L), in steady state (warm-up runs first; the
runner maps pages during them and says how many it mapped later).
"""
from __future__ import annotations

import math
import time

from ..errors import CycleBenchError
from ..harness.loopend import flag_counter, loop_close_bytes
from ..measurement.api import measure
from ..snippet.features import GPRS, used_gprs
from ..snippet.flagchain import flag_chain
from .code import Block, NotABlock, block as check_block
from .memory import FILL, MXCSR, accesses, flags

SCHEMA = "cyclebench.block"
SCHEMA_VERSION = 1
TARGET_INSTRUCTIONS = 100_000
MAX_PAGES = 16384            # fault-mapped pages per run; a block past it is reported, not retried
WALK_PAGES = 64              # more pages than this: the block walks memory (TLB misses likely)
COUNTER_ORDER = ("r15", "r14", "r13", "r12", "r11", "r10", "r9", "r8",
                 "rbx", "rbp", "rsi", "rdi", "rdx", "rcx", "rax")
BLOCK_MEASUREMENTS = 10

_REFUSED = {"cap": "it touched more than {cap} pages",
            "address": "it accessed an address outside the user address space (at or above 2**47, e.g. a negative one), "
                       "which cannot be mapped",
            "kernel": "the kernel refused to map a page it touched (below vm.mmap_min_addr, which only a "
                      "privileged user may map?)"}


def _reg_num(name: str) -> int:
    return GPRS.index(name)


def loop_code(body: bytes, counter: str, copies: int, iterations: int, keep_flags: bool = False) -> bytes:
    """mov C32, L; nop padding so the loop top is 64-byte aligned; copies; dec C; jnz top; padding.
    ``keep_flags``: the loop ends without writing the flags instead (harness/loopend.py), for a
    block that carries a chain through them from copy to copy."""
    r = _reg_num(counter)
    mov = (b"\x41" if r >= 8 else b"") + bytes([0xB8 + (r & 7)]) + iterations.to_bytes(4, "little")
    pad = _nops(64 - len(mov))
    loop = body * copies
    if keep_flags:
        end = loop_close_bytes(r, len(loop))
    else:
        dec = bytes([0x49 if r >= 8 else 0x48, 0xFF, 0xC8 | (r & 7)])
        rel = -(len(loop) + len(dec) + 6)
        end = dec + b"\x0f\x85" + rel.to_bytes(4, "little", signed=True)
    code = mov + pad + loop + end
    return code + _nops(-len(code) % 64)


def _nops(n: int) -> bytes:
    """n bytes of the recommended multi-byte NOPs (at most 9 bytes each)."""
    table = [b"", b"\x90", b"\x66\x90", b"\x0f\x1f\x00", b"\x0f\x1f\x40\x00", b"\x0f\x1f\x44\x00\x00",
             b"\x66\x0f\x1f\x44\x00\x00", b"\x0f\x1f\x80\x00\x00\x00\x00", b"\x0f\x1f\x84\x00\x00\x00\x00\x00",
             b"\x66\x0f\x1f\x84\x00\x00\x00\x00\x00"]
    out = b""
    while n > 0:
        k = min(n, 9)
        out += table[k]
        n -= k
    return out


def start_state(counter: str, avx: bool) -> str:
    """The init code: MXCSR, vector registers zero, every GPR but the counter := FILL (RSP last)."""
    lines = [f"push {MXCSR}", "ldmxcsr dword ptr [rsp]", "add rsp, 8"]
    lines += ["vzeroall"] if avx else [f"xorps xmm{i}, xmm{i}" for i in range(16)]
    lines += [f"mov {r}, {FILL:#x}" for r in GPRS if r not in (counter, "rsp")]
    if counter != "rsp":
        lines.append(f"mov rsp, {FILL:#x}")
    return "; ".join(lines)


def plan(blk: Block) -> tuple[str, int, int, bool]:
    """(counter register, copies per iteration, loop iterations, whether the loop's end must keep
    the flags). The counter is the first register of COUNTER_ORDER the block leaves free; RCX,
    where free, for an end that keeps the flags (harness/loopend.flag_counter)."""
    used = used_gprs(blk.code)
    counter = next((r for r in COUNTER_ORDER if r not in used), None)
    if counter is None:
        raise NotABlock("the block uses every general register: none is left for the loop counter",
                        "such blocks are not measured")
    keep = flag_chain(blk.code)
    if keep:
        counter = flag_counter(used, counter)
    copies = max(1, min(100, 1024 // len(blk.code)))
    iterations = max(1, math.ceil(TARGET_INSTRUCTIONS / (copies * len(blk.instructions))))
    return counter, copies, iterations, keep


def base_doc(code: bytes, **extra) -> dict:
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "hex": code.hex(), **extra}


def measure_block(code: bytes, *, cpu=None, n_measurements=BLOCK_MEASUREMENTS, timeout=10.0,
                  budget=2.0, max_pages=MAX_PAGES, **extra) -> dict:
    """Measure one block (its bytes, final branch included if it has one); never raises for a
    block that cannot be measured: the document's status is "refused" (not run) or "failed"
    (ran and faulted, timed out ...) with the reason. ``extra`` (application, weight) is kept."""
    t0 = time.monotonic()
    doc = base_doc(code, **extra)
    try:
        blk = check_block(code)
        counter, copies, iterations, keep_flags = plan(blk)
    except CycleBenchError as e:
        return {**doc, "status": "refused", "reason": e.cause, "exit_code": e.exit_code,
                "elapsed_s": round(time.monotonic() - t0, 4)}
    start = {r: FILL for r in GPRS if r != counter}
    mem = flags(accesses(blk.code, start))
    doc.update(instructions=len(blk.instructions), text=blk.text, notes=list(blk.notes),
               dropped_branch=blk.dropped.text if blk.dropped else None, counter=counter,
               copies=copies, iterations=iterations, keeps_flags=keep_flags, memory=mem)
    from ..machine.cpu import cpu_info
    try:
        r = measure(loop_code(blk.code, counter, copies, iterations, keep_flags),
                    init=start_state(counter, "avx" in cpu_info().flags), unroll=1, loop=0,
                    n_measurements=n_measurements, cpu=cpu, timeout=timeout, budget=budget,
                    map_pages=max_pages, map_fill=FILL)
    except CycleBenchError as e:
        info = e.details.get("runner_info") or {}
        why = (info.get("map_refused") or [None])[0]
        reason = e.cause
        if why in _REFUSED:
            reason = f"{_REFUSED[why].format(cap=max_pages)}: {e.cause}"
        if e.exit_code == 5 and why is None and " at address 0x0" in e.cause:
            reason = ("a general-protection fault (a non-canonical address, e.g. one the block's own registers "
                      f"grow copy after copy, or a misaligned aligned access): {e.cause}")
        pages = info.get("mapped_pages")
        hint = e.hint if e.exit_code not in (4, 5) or "CPUID" in (e.hint or "") else \
            f"registers and memory start at {FILL:#x} (docs/block.md): this block cannot run from that state"
        return {**doc, "status": "failed", "reason": reason, "hint": hint, "exit_code": e.exit_code,
                "pages_mapped": int(pages[0]) if pages else None, "elapsed_s": round(time.monotonic() - t0, 4)}
    return _result(doc, r, copies * iterations, max_pages, time.monotonic() - t0)


def _result(doc: dict, r, per: int, max_pages: int, elapsed: float) -> dict:
    c = r.events["cycles"]
    raw = r.raw["attempts"][r.raw["chosen"]]
    info = raw.get("runner_info", {})
    pages, late = (int(x) for x in info.get("mapped_pages", ["0", "0"]))
    mem = doc["memory"]
    depends = []
    if pages > 1:
        depends.append(f"{pages} virtual pages share one physical page: stores through one are seen by loads "
                       "through the others")
    if mem["page_crossing"]:
        depends.append(f"{len(mem['page_crossing'])} accesses cross a page boundary")
    if mem["aliasing_4k"]:
        depends.append(f"{len(mem['aliasing_4k'])} load/store pairs are 4K-aliased")
    if mem["registers_meet"]:
        depends.append(f"{len(mem['registers_meet'])} access pairs through different registers meet at one "
                       "address (all registers start equal)")
    if pages > WALK_PAGES:
        depends.append(f"the block walks memory ({pages} pages): TLB misses are likely part of the figure")
    bound = c.upper_bound
    warnings = list(r.warnings)
    if late:
        warnings.append(f"{late} pages were first mapped during the measured repetitions")
    return {**doc, "status": "ok",
            "cycles": None if bound is not None else c.value / per,
            "upper_bound": None if bound is None else bound / per,
            "uncertainty": c.uncertainty / per if c.uncertainty is not None else None,
            "min": c.min / per, "median": c.median / per, "max": c.max / per,
            "samples": [v / per for v in c.samples], "label": c.label,
            "stable": bool(r.stable), "warnings": warnings,
            # the faster and slower level, where the repetitions read two (measurement/stability.two_modes)
            "modes": [v / per for v in r.stability["modes"]["cycles"]] if r.stability.get("modes") else None,
            "pages_mapped": pages, "late_pages": late, "mapped_at": info.get("mapped_at", [])[:8],
            "aliased": pages > 1, "mapping_dependent": bool(depends), "mapping_notes": depends,
            "max_pages": max_pages, "calibrated_ghz": r.backend.get("calibrated_ghz"), "backend": r.backend,
            "options": {"n_measurements": r.parameters.get("n_measurements")},
            "cpu": r.parameters.get("cpu"), "elapsed_s": round(elapsed, 4)}


def clean(doc: dict) -> bool:
    """Measured cleanly: a figure (not a bound), stable, and no page mapped while timing."""
    return (doc.get("status") == "ok" and doc.get("cycles") is not None and doc.get("stable", False)
            and not doc.get("late_pages"))


def why_not_clean(doc: dict) -> str | None:
    if doc.get("status") != "ok":
        return doc.get("reason") or doc.get("status")
    if doc.get("cycles") is None:
        return "below the resolution"
    if not doc.get("stable", False):
        return "unstable (noisy host)"
    if doc.get("late_pages"):
        return "pages mapped while timing"
    return None

