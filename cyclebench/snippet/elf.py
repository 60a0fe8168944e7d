"""Reading the assembler's ELF64 object in Python: its .text bytes and, when nothing in it needs
binutils' own words (no undefined symbol, no relocation), its symbols.

One process fewer per assembly each (objcopy, readelf); assemble.py still asks readelf whenever an
object has an undefined symbol or a relocation, so those messages stay readelf's.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import AssemblyError

SHT_SYMTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 2, 4, 8, 9
_PLAIN_TYPES = (0, 1, 2)        # NOTYPE, OBJECT, FUNC: the symbols a label or .set makes
_SHN_UNDEF = 0


@dataclass
class ElfFacts:
    text: bytes
    symbols: dict[str, int]     # defined NOTYPE/OBJECT/FUNC symbols -> value, in table order
    needs_binutils: bool        # an undefined symbol or a relocation: ask readelf for the details


def _name(data: bytes, table: int, offset: int) -> str:
    start = table + offset
    return data[start:data.index(b"\0", start)].decode("utf-8", "backslashreplace")


def read(data: bytes) -> ElfFacts:
    """The facts of one relocatable little-endian ELF64 object; an AssemblyError if it is not one."""
    try:
        if data[:5] != b"\x7fELF\x02" or data[5] != 1:
            raise ValueError("not a little-endian ELF64 object")
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        # name, type, flags, addr, offset, size, link, info, addralign, entsize
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        names = sections[shstrndx][4]
        text, symbols, needs = b"", {}, False
        for sec in sections:
            name, kind, offset, size, link, entsize = sec[0], sec[1], sec[4], sec[5], sec[6], sec[9]
            if _name(data, names, name) == ".text":
                text = bytes(size) if kind == SHT_NOBITS else data[offset:offset + size]
            elif kind in (SHT_RELA, SHT_REL) and size:
                needs = True
            elif kind == SHT_SYMTAB:
                strtab = sections[link][4]
                for at in range(offset + entsize, offset + size, entsize):      # entry 0 is the null symbol
                    st_name, info, _other, shndx, value = struct.unpack_from("<IBBHQ", data, at)
                    sym = _name(data, strtab, st_name)
                    if not sym:
                        continue
                    if shndx == _SHN_UNDEF:
                        needs = True
                    elif info & 0xF in _PLAIN_TYPES:
                        symbols[sym] = value
        return ElfFacts(text, symbols, needs)
    except (ValueError, struct.error, IndexError) as e:
        raise AssemblyError(f"cannot read the assembler's output: {e}",
                            "check the binutils installation (bash setup.sh)") from None


def text_section(data: bytes) -> bytes:
    """The .text bytes (what 'objcopy -O binary -j .text' writes)."""
    return read(data).text
