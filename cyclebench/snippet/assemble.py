"""Assembling generated code with GNU binutils (as, then readelf) into a flat blob.

``run_as`` (GNU as under a memory cap and a timeout), ``binutil`` and ``run_tool`` are the one way
the package runs binutils; instructions/gas.py builds on them. The caller of ``assemble`` gives the
full source as lines plus, for lines that came from the user, the user's
statement, so an assembler message can name it. The blob is the .text section as raw bytes; it
must be position independent (RIP-relative only), so relocations are rejected with a hint.
"""
from __future__ import annotations

import collections
import copy
import functools
import hashlib
import json
import re
import shutil
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import cache
from ..errors import AssemblyError, UsageError
from ..textfile import quote

AS_MESSAGE = re.compile(r"^[^:]*:(?:(\d+):)? (Error|Warning): (.*)$")
_RELOC_SECTION = re.compile(r"^Relocation section '\.rela?([^']*)'")
_LISTING = re.compile(r"^\s*(\d+) ([0-9a-f]{4,}) [0-9A-F]")
_OUT_OF_MEMORY = re.compile(r"memory exhausted|out of memory|Cannot allocate", re.IGNORECASE)
MAX_BLOB = 256 << 20            # above any harness the measurement layer builds (64 MiB of copies)
AS_TIMEOUT = 120                # seconds of work; 100k statements per part assemble in a few seconds
AS_IDLE = 2.0                   # seconds asleep with no CPU used: as is waiting for input (a FIFO, a terminal)
AS_MEMORY_KB = 2 << 20          # 2 GiB of address space for as
_EXPANSION_HINT = ("the code expands too much: lower the counts of .rept, .fill or n*|x|, and use "
                   "--unroll or --loop for more copies")


@dataclass
class AssembledObject:
    """An assembled .text: its bytes, its symbols' offsets and as's warnings."""
    blob: bytes
    symbols: dict[str, int]     # label -> offset in blob
    warnings: list[str]


def binutil(name: str) -> str:
    """The path of a GNU binutils program; a missing one is an AssemblyError with the fix."""
    path = shutil.which(name)
    if not path:
        raise AssemblyError(f"GNU binutils' '{name}' was not found",
                            "install binutils (bash setup.sh does it: apt-get install binutils)")
    return path


# Assembled objects by source text: the output is a function of the text and the binutils that
# made it (a source that reads a file is refused), and re-runs, the suite and studies assemble the
# same text again. Kept in memory, and in the cache folder for the next process: a snippet
# measured again starts without running as and readelf twice (about 20 ms).
_ASSEMBLED: collections.OrderedDict[bytes, AssembledObject] = collections.OrderedDict()
_REMEMBERED = 64
CACHE_KIND = "assembled"


def assemble(lines: list[str], origin: dict[int, tuple[str, str]] | None = None,
             max_bytes: int = MAX_BLOB, kind: str = CACHE_KIND, while_running=None) -> AssembledObject:
    """Assemble ``lines``; ``origin`` maps 1-based line numbers to (part name, user statement).

    A .text larger than ``max_bytes`` is refused before its bytes are read. ``kind`` names the
    cache folder the object is kept in. ``while_running()``, when as runs (the object is not
    kept), is called once as has started and again once readelf has: the caller's own work then
    overlaps theirs, and must not raise."""
    key = hashlib.sha256("\n".join(lines).encode("utf-8", "backslashreplace") + _toolchain_stamp()).digest()
    known = _ASSEMBLED.get(key)
    if known is None:
        known = _load(kind, key.hex())
    if known is not None and len(known.blob) <= max_bytes:
        _remember(key, known)
        return copy.deepcopy(known)
    obj = _assemble(lines, origin or {}, max_bytes, while_running)
    _remember(key, obj)
    cache.store_entry(kind, key.hex(), json.dumps({"symbols": obj.symbols, "warnings": obj.warnings},
                                                        separators=(",", ":")).encode() + b"\n" + obj.blob)
    return obj


def _remember(key: bytes, obj: AssembledObject) -> None:
    _ASSEMBLED[key] = copy.deepcopy(obj)
    _ASSEMBLED.move_to_end(key)
    while len(_ASSEMBLED) > _REMEMBERED:
        _ASSEMBLED.popitem(last=False)


def _load(kind: str, key: str) -> AssembledObject | None:
    """The object stored under ``key`` in the cache folder; None when absent or not ours."""
    data = cache.load_entry(kind, key)
    if data is None:
        return None
    head, _, blob = data.partition(b"\n")
    try:
        meta = json.loads(head)
        symbols, warnings = meta["symbols"], meta["warnings"]
    except (ValueError, KeyError, TypeError):
        return None
    if (not isinstance(symbols, dict) or not all(isinstance(k, str) and type(v) is int for k, v in symbols.items())
            or not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings)):
        return None
    return AssembledObject(blob, symbols, warnings)


@functools.lru_cache(maxsize=1)
def _toolchain_stamp() -> bytes:
    """What an object depends on besides its source: as and readelf (path, size and
    modification time: an upgrade changes them) and this module, which reads their output."""
    return cache.files_stamp((*(shutil.which(t) or t for t in ("as", "readelf")), __file__))


def _assemble(lines: list[str], origin: dict[int, tuple[str, str]], max_bytes: int,
              while_running=None) -> AssembledObject:
    with tempfile.TemporaryDirectory(prefix="cyclebench-") as tmp:
        src, obj, deps = Path(tmp, "code.s"), Path(tmp, "code.o"), Path(tmp, "code.d")
        src.write_text("\n".join(lines) + "\n", encoding="ascii", errors="backslashreplace")
        proc = run_as(src, obj, "--MD", str(deps), while_running=while_running)
        errors, warnings, first_error = _messages(proc.stderr, origin)
        if proc.returncode != 0:
            raise _assembly_error(errors, first_error, proc.stderr)
        _check_dependencies(deps, src)
        symbols, undefined, relocs, (kind, text_at, text_size) = _parse_readelf(
            run_tool([binutil("readelf"), "-sSWr", str(obj)], while_running=while_running))
        _refuse(undefined, relocs, text_size, max_bytes, src, origin, tmp)
        # .text's bytes, read where readelf says they are in the file: what objcopy -O binary -j .text
        # writes, without starting it (about 2 ms, more when it starts beside readelf)
        want = text_size if kind != "NOBITS" else 0      # a user's '.section .text,"ax",@nobits': no bytes
        with open(obj, "rb") as f:
            f.seek(text_at)
            blob = f.read(want)
        if len(blob) != want:
            raise AssemblyError(f"the assembler's object holds {len(blob)} of the {text_size} bytes of .text",
                                "check the binutils installation (bash setup.sh)")
    return AssembledObject(blob, symbols, warnings)


def _refuse(undefined: list[str], relocs: list[tuple], text_size: int, max_bytes: int,
            src: Path, origin: dict[int, tuple[str, str]], tmp: str) -> None:
    """An error for an object that cannot be loaded as it is, or is larger than ``max_bytes``."""
    if undefined:
        name = undefined[0]
        users = [f"{part}: '{quote(stmt)}'" for part, stmt in origin.values()
                 if re.search(rf"(?<![\w.$]){re.escape(name)}(?![\w.$])", stmt)]
        where = f" in {users[0]}" if users else ""
        raise AssemblyError(f"the code refers to undefined symbol '{quote(name, 40)}'{where}",
                            "a misspelt register reads as a symbol; measured code is loaded without linking, so "
                            "use labels inside the snippet, or symbols=[...] for a call slot")
    if relocs:
        raise _relocation_error(relocs[0], src, origin, tmp)
    if text_size > max_bytes:
        raise UsageError(f"the code assembles to {text_size >> 20} MiB, over {max_bytes >> 20} MiB",
                         "lower --unroll, use --loop, or shorten .rept/.fill in the code")


def run_as(src: Path, obj: Path, *extra: str, while_running=None) -> subprocess.CompletedProcess:
    """GNU as under a memory cap, a CPU-time cap and a watch for waiting: '.rept 100000000' must
    fail, not eat the machine, and '.incbin' of a FIFO or a terminal (a macro can spell it where
    checks.py cannot see it) must fail within seconds, not hang. as runs with standard input closed,
    in a session of its own (no controlling terminal, so /dev/tty cannot be opened)."""
    cmd = ["/bin/sh", "-c", 'ulimit -v "$0" && ulimit -t "$1" && shift && exec "$@" <&-', str(AS_MEMORY_KB), str(AS_TIMEOUT),
           binutil("as"), "--64", *extra, "-o", str(obj), str(src)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        if while_running is not None:
            while_running()
        stdout, stderr = _watch(proc)
    finally:
        if proc.poll() is None:         # an error or Ctrl-C here: as, in its own session, did not get it
            proc.kill()
            proc.communicate()
    # the temporary folder means nothing to the user: messages name the code, not /tmp/cyclebench-.../code.s
    stderr = stderr.replace(f"{src.parent}{os.sep}", "")
    proc = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    if proc.returncode != 0 and _OUT_OF_MEMORY.search(proc.stderr):
        raise AssemblyError(f"the assembler ran out of memory ({AS_MEMORY_KB >> 20} GiB)",
                            _EXPANSION_HINT)
    return proc


def _watch(proc: subprocess.Popen) -> tuple[str, str]:
    """as's output once it ends; an AssemblyError if it sleeps AS_IDLE seconds without using CPU
    time (blocked on a read that nothing answers) or runs past AS_TIMEOUT."""
    start = last_active = time.monotonic()
    last_cpu = None
    while True:
        try:
            return proc.communicate(timeout=0.1)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        state, cpu = _proc_state(proc.pid)
        if state != "S" or cpu != last_cpu:
            last_cpu, last_active = cpu, now
        if now - last_active > AS_IDLE:
            raise AssemblyError(f"the assembler waited {AS_IDLE:g} s for input that never came: the code makes "
                                "it read a FIFO, a terminal or a device (.incbin or .include, perhaps through a "
                                "macro)", "a snippet cannot read files: give raw machine code with --code-file "
                                "FILE (API: pass bytes)")
        if now - start > AS_TIMEOUT:
            raise AssemblyError(f"the assembler did not finish within {AS_TIMEOUT} s", _EXPANSION_HINT)


def _proc_state(pid: int) -> tuple[str | None, int | None]:
    """(state letter, user + system clock ticks) of a process from /proc; (None, None) where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None, None


def run_tool(cmd: list[str], while_running=None) -> str:
    """A binutils program's standard output; a failure is an AssemblyError. ``while_running()`` is
    called once it has started."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, errors="replace")
    try:
        if while_running is not None:
            while_running()
        stdout, stderr = proc.communicate(timeout=AS_TIMEOUT)
    except BaseException:               # a timeout or Ctrl-C: the program must not outlive the call
        proc.kill()
        proc.communicate()
        raise
    if proc.returncode != 0:
        raise AssemblyError(f"{Path(proc.args[0]).name} failed: {quote(stderr.strip())}",
                            "check the binutils installation (bash setup.sh)")
    return stdout


def _messages(stderr: str, origin: dict) -> tuple[list[str], list[str], tuple | None]:
    """(errors, warnings, (message, part, statement) of the first error) from as's stderr."""
    errors, warnings, first = [], [], None
    for raw in stderr.splitlines():
        m = AS_MESSAGE.match(raw)
        if not m:
            continue
        line, kind, msg = int(m.group(1) or 0), m.group(2), m.group(3)
        where = origin.get(line)
        text = f"{where[0]}: '{quote(where[1])}': {quote(msg, 200)}" if where else quote(msg, 200)
        if kind == "Error" and first is None:
            first = (msg, *where) if where else (msg, None, None)
        (errors if kind == "Error" else warnings).append(text)
    return errors, warnings, first


def _assembly_error(errors: list[str], first: tuple | None, stderr: str) -> AssemblyError:
    if not errors:
        tail = stderr.strip().splitlines()
        errors = [quote(tail[-1], 200) if tail else "the assembler failed without a message"]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    msg, part, stmt = first or ("", None, None)
    defined = re.search(r"symbol `(.*)' is already defined", msg)
    if defined and part:
        return AssemblyError(f"the label '{quote(defined.group(1), 40)}' is defined more than once, "
                             f"in {part}: '{quote(stmt)}'",
                             "the code is unrolled (copied many times, in both runs A and B), so a "
                             "named label is defined once per copy; use numeric labels: '1:' with "
                             "'jmp 1b' (backward) or 'jmp 1f' (forward)", errors=errors)
    if re.search(r"local label .* is not defined", msg):
        return AssemblyError(f"assembler error: {errors[0]}{more}",
                             "a numeric label reference '1f' needs a '1:' after it, and '1b' one "
                             "before it, in the same code part", errors=errors)
    return AssemblyError(f"assembler error in {errors[0]}{more}",
                         "statements use GNU as Intel syntax without % prefixes, "
                         "separated by ';' or newlines, e.g. \"add rax, rbx; imul rcx, rcx\"",
                         errors=errors)


def _check_dependencies(deps: Path, src: Path) -> None:
    """as --MD lists every file it read: a macro can spell '.incbin' where checks.py cannot see it."""
    try:
        listed = deps.read_text(errors="replace").replace("\\\n", " ").split(":", 1)[1].split()
    except (OSError, IndexError):
        return
    read = [f for f in listed if f != str(src)]
    if read:
        raise AssemblyError(f"the code reads the file '{quote(read[0], 120)}' through the assembler",
                            "a snippet cannot read files: give raw machine code with --code-file FILE "
                            "(API: pass bytes)")


def _relocation_error(reloc: tuple[str, int, str, str], src: Path, origin: dict, tmp: str) -> AssemblyError:
    section, offset, kind, target = reloc
    where = ""
    if section == ".text":
        line = _line_at(src, offset, tmp)
        if line in origin:
            part, stmt = origin[line]
            where = f" in {part}: '{quote(stmt)}'"
    return AssemblyError(f"the code needs a relocation ({kind} against {quote(target, 40)}){where}",
                         "measured code is loaded at an address chosen at run time: jump to labels "
                         "in the snippet ('1:' ... 'jmp 1b'), address them RIP-relative ('lea rax, "
                         "[rip + 1f]', not 'offset 1f'), and call functions through a call slot "
                         "(API: symbols=['NAME'], then 'call [rip + cb_sym_NAME]')")


def _line_at(src: Path, offset: int, tmp: str) -> int | None:
    """The source line whose bytes hold .text ``offset``, from an assembler listing."""
    listing = Path(tmp, "code.lst")
    run_as(src, Path(tmp, "listing.o"), f"-aln={listing}")
    best = None
    try:
        rows = listing.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for row in rows:
        m = _LISTING.match(row)
        if m and int(m.group(2), 16) <= offset:
            best = int(m.group(1))
    return best


# "  [ 1] .text  PROGBITS  0000000000000000 000040 000018 ...": name, type, address, then file offset and size
_SECTION_HEADER = re.compile(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+\S+\s+([0-9a-fA-F]+)\s+([0-9a-fA-F]+)\b")


def _parse_readelf(listing: str) -> tuple[dict[str, int], list[str], list[tuple], tuple[str, int, int]]:
    """(symbols, undefined names, relocations as (section, offset, type, target), .text's (type,
    file offset, size))."""
    symbols: dict[str, int] = {}
    undefined: list[str] = []
    relocs: list[tuple[str, int, str, str]] = []
    text = ("", 0, 0)
    section = None
    for line in listing.splitlines():
        header = _RELOC_SECTION.match(line)
        if header:
            section = header.group(1)
            continue
        if line.startswith("Symbol table"):
            section = None
            continue
        parts = line.split()
        if section is not None and len(parts) >= 3 and parts[2].startswith("R_X86_64"):
            # With no symbol (an absolute target: 'jmp 0x1234') readelf prints 4 fields.
            target = " ".join(parts[4:]) if len(parts) >= 5 else "an absolute address"
            relocs.append((section, int(parts[0], 16), parts[2], target))
        elif section is None and len(parts) >= 8 and parts[0].endswith(":") and parts[7:]:
            name, ndx = parts[7], parts[6]
            if ndx == "UND":
                if name:
                    undefined.append(name)
            elif parts[3] in ("NOTYPE", "FUNC", "OBJECT"):
                symbols[name] = int(parts[1], 16)
        elif section is None and (sect := _SECTION_HEADER.match(line)) and sect.group(1) == ".text":
            text = (sect.group(2), int(sect.group(3), 16), int(sect.group(4), 16))
    return symbols, undefined, relocs, text
