"""Statements that cannot be measured whatever the assembler says, refused before assembling.

The user's statements are pasted into the harness's own assembly file, so a statement must not:
- hold non-ASCII text (the assembler's messages about it are garbled, and it is never an
  instruction: usually a character pasted from a paper, such as a typographic quote or dash);
- read a file (``.include``, ``.incbin``): raw machine code has its own option;
- change how the rest of the file is assembled (``.end``, section, syntax and mode switches);
- use a name of the harness: every name it defines starts with ``cb_``; code may only read the
  public ones (the data area and the symbols' call slots) and must not define those either.
The assembler's dependency list (assemble.py) catches a file read that a macro spelled.
"""
from __future__ import annotations

import re

from ..errors import AssemblyError, UsageError
from ..textfile import MiB, quote

RESERVED_PREFIX = "cb_"
PUBLIC_NAMES = re.compile(r"cb_data_ptr|cb_data_size|cb_sym_[A-Za-z0-9_.$]+")

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?')
_DIRECTIVE = re.compile(r"(?<![\w.$])\.([A-Za-z_][\w]*)")
_NAME = re.compile(r"(?<![\w.$\\])cb_[\w.$]*")
# `name:` (a label), `name =` / `name ==`, or `.set name,` and its relatives
_DEFINED = re.compile(r"(?<![\w.$])(cb_[\w.$]*)\s*(?::(?!:)|==?)|"
                      r"\.(?:set|equ|equiv|eqv|comm|lcomm)\s+(cb_[\w.$]*)", re.IGNORECASE)

# A literal count the assembler would spend minutes and gigabytes on (as has its own caps too).
_COUNT = re.compile(r"(?<![\w.$])\.(rept|fill|skip|space|zero)\s+(0[xX][0-9a-fA-F]+|[0-9]+)",
                    re.IGNORECASE)
_COUNT_LIMITS = {"rept": 100_000, "fill": 4 * MiB, "skip": 4 * MiB, "space": 4 * MiB, "zero": 4 * MiB}

_CODE_FILE_HINT = ("a snippet cannot read files: give raw machine code with --code-file FILE "
                   "(API: pass bytes), or write the bytes as '.byte 0x90, ...'")
_LAYOUT_HINT = ("the snippet is pasted into the harness's .text; data for the code goes in the "
                "data area (--data; RIP-relative 'cb_data_ptr'), or in '.byte'/'.quad' lines "
                "jumped over inside the snippet")
_REFUSED = {
    "include": ("reads a file", _CODE_FILE_HINT),
    "incbin": ("reads a file", _CODE_FILE_HINT),
    "end": ("ends the assembly: the harness after the snippet would be lost",
            "drop '.end'; the snippet ends where its text ends"),
    **{d: ("switches to another section, out of the measured code", _LAYOUT_HINT)
       for d in ("section", "data", "bss", "pushsection", "popsection", "previous",
                 "subsection", "struct", "offset")},
    **{d: ("switches the syntax or mode for the rest of the file, harness included",
           "cyclebench assembles GNU as Intel syntax (no % prefixes) in 64-bit mode only")
       for d in ("att_syntax", "intel_syntax", "code16", "code16gcc", "code32")},
}
# What the harness is assembled with anyway: harmless, and often pasted with a snippet.
_HARMLESS = re.compile(r"\.text|\.intel_syntax(\s+noprefix)?|\.code64", re.IGNORECASE)


def check_statement(part: str, stmt: str) -> None:
    """Raise AssemblyError (exit 3) for a statement that cannot be measured (see module doc)."""
    where = f"{part}: '{quote(stmt)}'"
    bad = next((ch for ch in stmt if not ch.isascii()), None)
    if bad is not None:
        raise AssemblyError(f"non-ASCII character '{bad}' (U+{ord(bad):04X}) in {where}"
                            if bad.isprintable() else
                            f"non-ASCII character U+{ord(bad):04X} in {where}",
                            "assembly is plain ASCII: retype characters pasted from a document "
                            "(quotes, dashes, x for *, non-breaking spaces); bytes go in "
                            "'.byte 0xc3, 0xbc'")
    code = _STRING.sub('""', stmt)
    for m in _DIRECTIVE.finditer(code):
        refused = _REFUSED.get(m.group(1).lower())
        if m.group(1).lower() == "text" and not _HARMLESS.fullmatch(code[m.start():].strip()):
            refused = ("with a subsection moves code out of order", _LAYOUT_HINT)
        if refused and not _HARMLESS.fullmatch(code[m.start():].strip()):
            raise AssemblyError(f"'.{m.group(1)}' {refused[0]}, in {where}", refused[1])
    for m in _COUNT.finditer(code):
        limit = _COUNT_LIMITS[m.group(1).lower()]
        if len(m.group(2)) > 12 or _as_int(m.group(2)) > limit:
            raise UsageError(f"'.{m.group(1)} {quote(m.group(2), 20)}' is over {limit}, in {where}",
                             "the harness copies the code itself: use --unroll or --loop for more "
                             "copies")
    names = _NAME.findall(code)
    defined = {a or b for a, b in _DEFINED.findall(code)}
    for name in names:
        if not PUBLIC_NAMES.fullmatch(name) or name in defined:
            raise AssemblyError(f"'{quote(name, 40)}' is a name of the measurement harness, in {where}",
                                "names starting with cb_ belong to the harness: rename yours; code "
                                "may only read cb_data_ptr, cb_data_size and cb_sym_NAME")


def _as_int(text: str) -> int:
    """GNU as integer literal: 0x hex, leading-0 octal, else decimal (-1 when malformed: as says)."""
    try:
        if text[:2].lower() == "0x":
            return int(text, 16)
        return int(text, 8) if text.startswith("0") else int(text)
    except ValueError:
        return -1
