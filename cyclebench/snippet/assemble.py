"""Assembling generated code with GNU binutils (as, readelf, objcopy) into a flat blob.

The caller gives the full source as lines plus, for lines that came from the user, the user's
statement, so an assembler message can name it. The blob is the .text section as raw bytes; it
must be position independent (RIP-relative only), so relocations are rejected with a hint.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import AssemblyError

_MSG = re.compile(r"^[^:]*:(\d+): (Error|Warning): (.*)$")


@dataclass
class AssembledObject:
    blob: bytes
    symbols: dict[str, int]     # label -> offset in blob
    warnings: list[str]


def _tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        raise AssemblyError(f"GNU binutils' '{name}' was not found",
                            "install binutils (bash setup.sh does it: apt-get install binutils)")
    return path


def assemble(lines: list[str], origin: dict[int, tuple[str, str]] | None = None) -> AssembledObject:
    """Assemble ``lines``; ``origin`` maps 1-based line numbers to (part name, user statement)."""
    origin = origin or {}
    with tempfile.TemporaryDirectory(prefix="cyclebench-") as tmp:
        src, obj, binf = Path(tmp, "code.s"), Path(tmp, "code.o"), Path(tmp, "code.bin")
        src.write_text("\n".join(lines) + "\n")
        proc = subprocess.run([_tool("as"), "--64", "-o", str(obj), str(src)],
                              capture_output=True, text=True)
        errors, warnings = [], []
        for raw in proc.stderr.splitlines():
            m = _MSG.match(raw)
            if not m:
                continue
            line, kind, msg = int(m.group(1)), m.group(2), m.group(3)
            where = origin.get(line)
            text = f"{where[0]}: '{where[1]}': {msg}" if where else msg
            (errors if kind == "Error" else warnings).append(text)
        if proc.returncode != 0:
            first = errors[0] if errors else proc.stderr.strip().splitlines()[-1]
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise AssemblyError(f"assembler error in {first}{more}",
                                "statements use GNU as Intel syntax without % prefixes, "
                                "separated by ';' or newlines, e.g. \"add rax, rbx; imul rcx, rcx\"",
                                errors=errors)
        elf = subprocess.run([_tool("readelf"), "-sWr", str(obj)], capture_output=True, text=True, check=True).stdout
        symbols, undefined, relocs = _parse_readelf(elf)
        if undefined:
            name = undefined[0]
            users = [f"{part}: '{stmt}'" for part, stmt in origin.values() if re.search(rf"\b{re.escape(name)}\b", stmt)]
            where = f" in {users[0]}" if users else ""
            raise AssemblyError(f"the code refers to undefined symbol '{name}'{where}",
                                "a misspelt register reads as a symbol; measured code is loaded without linking, so "
                                "use labels inside the snippet, or symbols=[...] for a call slot")
        if relocs:
            raise AssemblyError(f"the code needs a relocation ({relocs[0]})",
                                "measured code must be position independent: address labels "
                                "RIP-relative, e.g. 'lea rax, [rip + 1f]' instead of 'mov rax, offset 1f'")
        subprocess.run([_tool("objcopy"), "-O", "binary", "-j", ".text", str(obj), str(binf)],
                       capture_output=True, check=True)
        blob = binf.read_bytes() if binf.exists() else b""
    return AssembledObject(blob, symbols, warnings)


def _parse_readelf(text: str) -> tuple[dict[str, int], list[str], list[str]]:
    symbols: dict[str, int] = {}
    undefined: list[str] = []
    relocs: list[str] = []
    in_relocs = False
    for line in text.splitlines():
        if line.startswith("Relocation section"):
            in_relocs = True
            continue
        if line.startswith("Symbol table"):
            in_relocs = False
            continue
        parts = line.split()
        if in_relocs and len(parts) >= 5 and parts[2].startswith("R_X86_64"):
            relocs.append(f"{parts[2]} against {parts[4]}")
        elif not in_relocs and len(parts) >= 8 and parts[0].endswith(":") and parts[7:]:
            name, ndx = parts[7], parts[6]
            if ndx == "UND":
                if name:
                    undefined.append(name)
            elif parts[3] in ("NOTYPE", "FUNC", "OBJECT"):
                symbols[name] = int(parts[1], 16)
    return symbols, undefined, relocs
