"""No-memory mode (nanoBench's -no_mem): the pause/resume magic byte sequences and the registers
that hold the counter readings while the code runs.

nanoBench replaces the 8-byte sequences 0xF0B513B1C2813F04 (pause counting) and
0xE0B513B1C2813F04 (resume counting), as little-endian qwords in the benchmark code, with code
that stops and restarts the counters; only with -no_mem. Here they may be written as a statement
of their own (``.quad 0xF0B513B1C2813F04``, as nanoBench's own tools emit them) or appear anywhere
in raw machine code (-code files). They become PAUSE_MARK/RESUME_MARK statements, which the
harness expands into counters/reads.py's pause/resume sequences.
"""
from __future__ import annotations

from ..errors import UsageError
from ..snippet.parse import CodePart, Statement
from .codegen import PAUSE_MARK, RESUME_MARK

PAUSE_VALUE = 0xF0B513B1C2813F04
RESUME_VALUE = 0xE0B513B1C2813F04
PAUSE = PAUSE_VALUE.to_bytes(8, "little")
RESUME = RESUME_VALUE.to_bytes(8, "little")


def _positions(code: bytes) -> list[tuple[int, str]]:
    out = []
    for magic, kind in ((PAUSE, "pause"), (RESUME, "resume")):
        i = code.find(magic)
        while i >= 0:
            out.append((i, kind))
            i = code.find(magic, i + 1)
    return sorted(out)


def _statement_ranges(symbols: dict, part: CodePart) -> list[tuple[int, int]]:
    n = len(part.lines())
    starts = [symbols[f"cb_check_{part.name}_{i}"] for i in range(n)]
    return list(zip(starts, starts[1:] + [symbols[f"cb_check_{part.name}_end"]]))


def apply_magic(parts: dict[str, CodePart], blob: bytes, symbols: dict, no_mem: bool) -> dict[str, CodePart]:
    """Find the magic sequences in the once-assembled parts (generate_check) and return the parts
    with each sequence replaced by a pause/resume mark; errors for every misuse."""
    out = dict(parts)
    for name, part in parts.items():
        if part.empty:
            continue
        ranges = _statement_ranges(symbols, part)
        lo, hi = ranges[0][0], ranges[-1][1]
        found = _positions(blob[lo:hi])
        if not found:
            continue
        where = "measured code" if name == "code" else f"{name.replace('_', '-')} code"
        if not no_mem:
            raise UsageError(f"the {where} contains nanoBench's {found[0][1]} magic bytes "
                             f"({PAUSE_VALUE if found[0][1] == 'pause' else RESUME_VALUE:#x}), which only work with --no-mem",
                             "add --no-mem (counter readings then stay in registers R8-R13), or remove them")
        if name != "code":
            raise UsageError(f"the {where} contains nanoBench's {found[0][1]} magic bytes: pausing works only "
                             "inside the measured code", "move the pause/resume sequences into the code")
        kinds = [k for _, k in found]
        if len(kinds) % 2 or any(k != ("pause" if i % 2 == 0 else "resume") for i, k in enumerate(kinds)):
            raise UsageError(f"the pause/resume magic bytes in the code come as {', '.join(kinds)}: each copy of the "
                             "code must pause and then resume, in pairs",
                             "write .quad 0xF0B513B1C2813F04 (pause) ... .quad 0xE0B513B1C2813F04 (resume)")
        out[name] = _raw_with_marks(part, found) if part.raw is not None else \
            _text_with_marks(part, [(p + lo, k) for p, k in found], ranges)
    return out


def _text_with_marks(part: CodePart, found, ranges) -> CodePart:
    marks = {}
    for pos, kind in found:
        i = next((i for i, (a, b) in enumerate(ranges) if a == pos and b - a == 8), None)
        if i is None:
            src = next((s for (a, b), s in zip(ranges, part.sources()) if a <= pos < b), "?")
            raise UsageError(f"nanoBench's {kind} magic bytes must be a statement of their own, not part of '{src}'",
                             f"write .quad {PAUSE_VALUE if kind == 'pause' else RESUME_VALUE:#X} as its own statement")
        marks[i] = PAUSE_MARK if kind == "pause" else RESUME_MARK
    stmts = [Statement(marks[i], s.source) if i in marks else s for i, s in enumerate(part.statements)]
    return CodePart(part.name, stmts)


def _raw_with_marks(part: CodePart, found) -> CodePart:
    raw, stmts, pos = part.raw, [], 0

    def chunk(a, b):
        for i in range(a, b, 32):
            j = min(i + 32, b)
            stmts.append(Statement(".byte " + ",".join(f"0x{x:02x}" for x in raw[i:j]),
                                   f"<raw machine code, bytes {i}..{j - 1}>"))
    for p, kind in found:
        chunk(pos, p)
        stmts.append(Statement(PAUSE_MARK if kind == "pause" else RESUME_MARK,
                               f"<{kind} magic bytes at byte {p}>"))
        pos = p + 8
    chunk(pos, len(raw))
    return CodePart(part.name, stmts)


def check_reserved_registers(parts: dict[str, CodePart], blob: bytes, symbols: dict, reserved: tuple[str, ...]):
    """With --no-mem the start readings live in ``reserved`` registers until the end reading: the
    late-init code and the measured code must not write them."""
    import iced_x86
    want = {getattr(iced_x86.Register, r.upper()): r.upper() for r in reserved}
    writes = (iced_x86.OpAccess.WRITE, iced_x86.OpAccess.READ_WRITE, iced_x86.OpAccess.COND_WRITE,
              iced_x86.OpAccess.READ_COND_WRITE)
    factory = iced_x86.InstructionInfoFactory()
    for name in ("late_init", "code"):
        part = parts.get(name)
        if part is None or part.empty:
            continue
        ranges = _statement_ranges(symbols, part)
        spans = zip(ranges, part.sources()) if part.raw is None else \
            [((ranges[0][0], ranges[-1][1]), "<raw machine code>")]
        for (a, b), src in spans:
            if b - a == 8 and blob[a:b] in (PAUSE, RESUME):
                continue
            for ins in iced_x86.Decoder(64, blob[a:b]):
                for used in factory.info(ins).used_registers():
                    full = iced_x86.RegisterExt.full_register(used.register)
                    if full in want and used.access in writes:
                        regs = ", ".join(r.upper() for r in reserved)
                        verb = "holds the TSC reading" if len(reserved) == 1 else "hold the counter readings"
                        raise UsageError(
                            f"with --no-mem, {regs} {verb} while the code runs, but "
                            f"'{src}' ({name.replace('_', '-')}) writes {want[full]}",
                            "use other registers (RAX, RCX and RDX are also changed by the readings), or drop --no-mem")
