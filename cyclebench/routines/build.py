"""Building routines into shared objects, and resolving a routine to (shared object, symbol).

A routine is a global function in a shared object. ``build_shared`` compiles assembly (``.S`` goes
through the C preprocessor, ``.s`` does not) and C sources with the user's compiler and flags
(default ``gcc -O2``) into one ``.so``. Each build is kept in a cache directory under a name keyed by
a hash of everything that affects it: the compiler (path and version), the flags, and the contents of
the sources and of every file they ``#include`` (from ``cc -M``; ``.include`` in plain ``.s`` files is
not followed). Building the same thing again returns the cached file without running the compiler.

The cache is ``$CYCLEBENCH_CACHE/routines``, else ``$XDG_CACHE_HOME/cyclebench/routines``, else
``~/.cache/cyclebench/routines``. Deleting it is always safe.

``resolve("libc:memset")``, ``resolve("path/to/lib.so:symbol")`` or ``resolve("symbol",
library=built.path)`` name a routine. Symbols are looked up in the ELF dynamic symbol table without
loading the object, so nothing of the routine runs in this process: it runs only in the checker's
and the runner's child processes.
"""
from __future__ import annotations

import difflib
import functools
import hashlib
import os
import re
import shlex
import shutil
import stat
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..cache import cache_dir as shared_cache_dir
from ..toolchain import compile_cached, tool_version
from typing import Iterable, Sequence

from cyclebench.errors import AssemblyError, UsageError

DEFAULT_CC = "gcc"
DEFAULT_CFLAGS: tuple[str, ...] = ("-O2",)
# Always added: position-independent shared code, and no executable stack from .s files that lack
# a .note.GNU-stack section.
_SHARED_FLAGS = ("-fPIC", "-shared", "-Wa,--noexecstack", "-Wl,-z,noexecstack")
_SOURCE_SUFFIXES = {".s", ".S", ".sx", ".asm", ".c"}


def cache_dir() -> Path:
    """The directory holding built shared objects and helper programs (created on demand)."""
    return shared_cache_dir("routines")


@dataclass(frozen=True)
class Built:
    """A built shared object (or helper executable) in the cache."""

    path: Path
    key: str
    sources: tuple[Path, ...]
    command: tuple[str, ...]
    cached: bool  # True when it came from the cache without compiling


def _split_flags(flags: str | Sequence[str] | None, default: Sequence[str]) -> tuple[str, ...]:
    if flags is None:
        return tuple(default)
    if isinstance(flags, str):
        return tuple(shlex.split(flags))
    return tuple(flags)


@functools.lru_cache(maxsize=None)
def _compiler_identity(cc: str) -> str:
    exe = shutil.which(cc)
    if exe is None:
        raise UsageError(
            f"compiler {cc!r} not found",
            hint="install it (setup.sh installs gcc) or pass another compiler with cc= / $CC",
        )
    return f"{os.path.realpath(exe)}|{tool_version(exe) or ''}"


def compiler_version(cc: str) -> str:
    """What a record says built it: the first line of ``cc --version``."""
    v = tool_version(cc)
    return "not installed" if v is None else (v or "unknown")


def _stat(p: Path) -> tuple[int, int] | None:
    try:
        st = p.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


# (cc, flags, source) -> (stats of the source and its dependencies, dependencies): a study or the
# test suite builds the same sources many times, and each `cc -M` costs a compiler start.
_DEPENDENCIES: dict[tuple, tuple[tuple, list[Path]]] = {}


def _dependencies(cc: str, flags: tuple[str, ...], src: Path) -> list[Path]:
    """Files a preprocessed source includes (best effort: on failure only the source counts);
    asked of the compiler again when the source or one of them changed."""
    if src.suffix not in (".S", ".sx", ".c"):
        return []
    key = (cc, flags, src)
    known = _DEPENDENCIES.get(key)
    if known and known[0] == tuple(_stat(p) for p in (src, *known[1])):
        return known[1]
    deps = _ask_dependencies(cc, flags, src)
    _DEPENDENCIES[key] = (tuple(_stat(p) for p in (src, *deps)), deps)
    return deps


def _ask_dependencies(cc: str, flags: tuple[str, ...], src: Path) -> list[Path]:
    try:
        out = subprocess.run([cc, *flags, "-M", "-MG", str(src)], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []  # the real compile reports the error
    text = out.stdout.replace("\\\n", " ")
    _, _, deps = text.partition(":")
    paths = []
    for d in deps.split():
        p = Path(d)
        if p.is_file() and p.resolve() != src.resolve():
            paths.append(p)
    return paths


def _hash_inputs(kind: str, cc: str, flags: tuple[str, ...], link: tuple[str, ...],
                 sources: tuple[Path, ...]) -> str:
    h = hashlib.sha256()

    def add(tag: str, data: bytes) -> None:
        h.update(tag.encode() + b"\0" + len(data).to_bytes(8, "little") + data)

    add("kind", kind.encode())
    add("cc", _compiler_identity(cc).encode())
    add("flags", "\0".join(flags).encode())
    add("link", "\0".join(link).encode())
    for src in sources:
        add("source", src.name.encode())
        add("content", src.read_bytes())
        for dep in sorted(set(_dependencies(cc, flags, src))):
            add("dep", str(dep).encode())
            add("content", dep.read_bytes())
    return h.hexdigest()


_ERROR_RE = re.compile(r"\b(?:fatal error|error|Error)\b")


def _first_error_line(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for ln in lines:
        if _ERROR_RE.search(ln) and "Assembler messages" not in ln:
            return ln
    return lines[0] if lines else "(no compiler output)"


def _hint_for(output: str, sources: tuple[Path, ...], log: Path) -> str:
    low = output.lower()
    asm_sources = [s for s in sources if s.suffix in (".s", ".S", ".sx", ".asm")]
    lacks_intel = [s for s in asm_sources if ".intel_syntax" not in s.read_text(errors="replace")]
    syntax_markers = ("no such instruction", "too many memory references", "junk `",
                      "invalid instruction suffix", "bad register name", "invalid char",
                      "operand size mismatch", "ambiguous operand size", "operand type mismatch")
    if lacks_intel and any(k in low for k in syntax_markers):
        return (f"GNU as reads AT&T syntax unless told otherwise: if {lacks_intel[0].name} is Intel "
                f"syntax, put `.intel_syntax noprefix` at its top")
    if "ambiguous operand size" in low or "operand size mismatch" in low:
        return "give the memory operand a size: byte/word/dword/qword/xmmword ptr [...]"
    if any(k in low for k in syntax_markers):
        return ("the line is not valid GNU as Intel syntax (`objdump -d -M intel` shows the accepted "
                "spelling); in .S files `#` starts a preprocessor directive, so comment with /* */")
    if "recompile with -fpic" in low or "relocation r_x86_64" in low:
        return ("a shared object cannot use absolute or preemptible-symbol relocations: reach data "
                "through a local label ([rip + .Lname]) or the GOT ([rip + name@GOTPCREL])")
    if "undefined reference" in low:
        return "the symbol is defined in none of the sources: add the file that defines it, or a -l flag"
    if "unrecognized command-line option" in low or "unrecognized command line option" in low:
        return "a flag in cflags is not known to this compiler"
    if "no such file or directory" in low:
        return "an #include or .include file was not found: check the -I flags"
    return f"the full compiler output is in {log}"


def _build(kind: str, sources: Iterable[str | os.PathLike], *, cc: str | None,
           cflags: str | Sequence[str] | None, defines: dict[str, object] | None,
           ldflags: str | Sequence[str] | None, name: str | None) -> Built:
    srcs = tuple(Path(s).resolve() for s in sources)
    if not srcs:
        raise UsageError("no sources to build", hint="pass at least one .S, .s or .c file")
    for s in srcs:
        if not s.is_file():
            raise UsageError(f"source file not found: {s}", hint="check the path")
        if s.suffix not in _SOURCE_SUFFIXES:
            raise UsageError(f"cannot build {s.name}: unknown source type {s.suffix!r}",
                             hint="use .S (assembly through cpp), .s (plain assembly) or .c")
    cc = cc or os.environ.get("CC") or DEFAULT_CC
    flags = _split_flags(cflags, DEFAULT_CFLAGS)
    flags += tuple(f"-D{k}" if v is None else f"-D{k}={v}" for k, v in sorted((defines or {}).items()))
    link = _split_flags(ldflags, ())
    key = _hash_inputs(kind, cc, flags, link, srcs)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name or srcs[0].stem)
    suffix = ".so" if kind == "shared" else ""
    out = cache_dir() / f"{stem}-{key[:16]}{suffix}"
    extra = _SHARED_FLAGS if kind == "shared" else ()
    command = (cc, *flags, *extra, "-o", str(out), *map(str, srcs), *link)
    proc = compile_cached(out, cc, (*flags, *extra), (*map(str, srcs), *link))
    if proc is not None and proc.returncode != 0:
        output = (proc.stderr or "") + (proc.stdout or "")
        log = out.with_suffix(".log")
        log.write_text(" ".join(shlex.quote(c) for c in command) + "\n\n" + output)
        raise AssemblyError(
            f"building {stem} failed: {_first_error_line(output)}",
            hint=_hint_for(output, srcs, log),
            command=command, output=output, log=str(log),
        )
    return Built(out, key, srcs, command, cached=proc is None)


def build_shared(sources: Iterable[str | os.PathLike], *, cc: str | None = None,
                 cflags: str | Sequence[str] | None = None, defines: dict[str, object] | None = None,
                 ldflags: str | Sequence[str] | None = None, name: str | None = None) -> Built:
    """Build sources into one shared object in the cache; returns the cached one if up to date.

    cc defaults to $CC, else gcc; cflags (a string or a list) default to -O2; defines become -D
    flags (so ``defines={"CB_STOSB_THRESHOLD": 1024}`` builds another variant of a .S file).
    Raises AssemblyError (exit 3) with the compiler's first error line and a hint on failure.
    """
    return _build("shared", sources, cc=cc, cflags=cflags, defines=defines, ldflags=ldflags,
                  name=name)


def build_executable(sources: Iterable[str | os.PathLike], *, cc: str | None = None,
                     cflags: str | Sequence[str] | None = None,
                     ldflags: str | Sequence[str] | None = None, name: str | None = None) -> Built:
    """Build a helper program (the correctness checker) into the cache, like build_shared."""
    return _build("exe", sources, cc=cc, cflags=cflags, defines=None, ldflags=ldflags, name=name)


# ---------------------------------------------------------------------------------------------
# ELF dynamic symbols (x86-64, little-endian ELF64)

STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_GNU_IFUNC = 0, 1, 2, 10


@dataclass(frozen=True)
class DynamicSymbol:
    name: str
    value: int   # st_value: offset from the load base
    size: int
    type: int    # STT_*

    @property
    def is_code(self) -> bool:
        """A function, an IFUNC, or an untyped label (hand-written assembly often omits .type)."""
        return self.type in (STT_NOTYPE, STT_FUNC, STT_GNU_IFUNC)


@functools.lru_cache(maxsize=64)
def _dynamic_symbols_cached(path: str, mtime_ns: int, size: int) -> dict[str, DynamicSymbol]:
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF":
        raise AssemblyError(f"{path} is not an ELF file", hint="pass a shared object (.so)")
    if data[4] != 2 or data[5] != 1:
        raise AssemblyError(f"{path} is not a little-endian 64-bit ELF file",
                            hint="cyclebench runs x86-64 code only")
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        sh_name, sh_type, _flags, _addr, sh_offset, sh_size, sh_link, _info, _align, sh_entsize = \
            struct.unpack_from("<IIQQQQIIQQ", data, off)
        sections.append((sh_type, sh_offset, sh_size, sh_link, sh_entsize))
    symbols: dict[str, DynamicSymbol] = {}
    for sh_type, sh_offset, sh_size, sh_link, sh_entsize in sections:
        if sh_type != 11:  # SHT_DYNSYM
            continue
        _, str_off, str_size, _, _ = sections[sh_link]
        strtab = data[str_off:str_off + str_size]
        entsize = sh_entsize or 24
        for j in range(1, sh_size // entsize):
            st_name, st_info, _other, st_shndx, st_value, st_size = struct.unpack_from(
                "<IBBHQQ", data, sh_offset + j * entsize)
            if st_shndx == 0:  # undefined: imported, not provided
                continue
            end = strtab.index(b"\0", st_name)
            name = strtab[st_name:end].decode(errors="replace")
            if name:
                symbols[name] = DynamicSymbol(name, st_value, st_size, st_info & 0xF)
    return symbols


def dynamic_symbols(path: str | os.PathLike) -> dict[str, DynamicSymbol]:
    """The defined symbols a shared object exports (its .dynsym), without loading it."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise UsageError(f"shared object not found: {p}", hint="check the path") from None
    if not stat.S_ISREG(st.st_mode):          # a folder cannot be read, a FIFO would be waited on
        raise UsageError(f"{p} is not a regular file", hint="pass a shared object (.so)")
    try:
        return _dynamic_symbols_cached(str(p.resolve()), st.st_mtime_ns, st.st_size)
    except OSError as e:
        raise UsageError(f"cannot read the shared object {p}: {e.strerror}", hint="check the path and permissions") \
            from None
    except (struct.error, ValueError, IndexError):
        raise AssemblyError(f"cannot read the symbol table of {p}",
                            hint="is it a complete x86-64 shared object?") from None


@functools.lru_cache(maxsize=1)
def libc_path() -> str:
    """Path of the C library this process uses (the baseline for `libc:` routines)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split()
                if len(parts) >= 6 and re.fullmatch(r"libc(?:\.so\.\d+|-[\d.]+\.so)",
                                                    os.path.basename(parts[5])):
                    return parts[5]
    except OSError:
        pass
    for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"):
        p = Path(d) / "libc.so.6"
        if p.exists():
            return str(p)
    raise UsageError("cannot find the C library", hint="name the shared object explicitly: path.so:symbol")


@dataclass(frozen=True)
class Routine:
    """A callable routine: a function symbol in a shared object.

    ``library`` is an absolute path the runner and the checker can dlopen; ``symbol`` the dynamic
    symbol (an IFUNC, such as glibc's memset, is resolved by the dynamic loader at load time).
    """

    library: str
    symbol: str
    name: str = ""
    offset: int = field(default=0, compare=False)  # st_value, for reporting

    def __post_init__(self):
        if not self.name:
            object.__setattr__(self, "name", self.symbol)

    @property
    def spec(self) -> str:
        return f"{self.library}:{self.symbol}"


def resolve(spec: "str | Routine", *, library: str | os.PathLike | None = None,
            name: str | None = None) -> Routine:
    """Resolve ``libc:SYMBOL``, ``PATH.so:SYMBOL``, or ``SYMBOL`` with ``library=`` to a Routine.

    Raises UsageError for a missing shared object, AssemblyError (exit 3, "cannot be loaded") for a
    symbol that is not defined there or is not a function.
    """
    if isinstance(spec, Routine):
        return spec
    if library is not None:
        lib, sym = str(library), spec
    elif ":" in spec:
        lib, _, sym = spec.rpartition(":")
    else:
        raise UsageError(f"cannot tell where routine {spec!r} lives",
                         hint="write libc:SYMBOL or PATH.so:SYMBOL")
    display = name or spec
    if lib == "libc":
        lib = libc_path()
    else:
        lib = str(Path(lib).resolve())
    if not sym:
        raise UsageError(f"no symbol in routine spec {spec!r}", hint="write PATH.so:SYMBOL")
    symbols = dynamic_symbols(lib)
    s = symbols.get(sym)
    if s is None:
        close = difflib.get_close_matches(sym, [k for k, v in symbols.items() if v.is_code], n=3)
        hint = f"did you mean {', '.join(close)}?" if close else \
            "the symbol must be a global (.globl) function exported by the shared object"
        raise AssemblyError(f"{Path(lib).name} does not define {sym!r}", hint=hint)
    if not s.is_code:
        raise AssemblyError(f"{sym!r} in {Path(lib).name} is data, not a function",
                            hint="mark the routine with `.type NAME, @function`")
    return Routine(library=lib, symbol=sym, name=display, offset=s.value)


EMPTY_ROUTINE_SOURCE = Path(__file__).with_name("native") / "empty.S"


def empty_routine() -> Routine:
    """cb_routine_empty: memset's signature, writes nothing, returns dst. A pass over a stream
    calling it is the baseline subtracted from a pass calling the routine under test."""
    lib = build_shared([EMPTY_ROUTINE_SOURCE], name="cb_routine_empty").path
    return resolve("cb_routine_empty", library=lib, name="empty")
