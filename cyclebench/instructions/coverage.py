"""Which catalogue form measures a published uops.info form, and why some cannot be measured.

uops.info names its forms after XED's iforms (XED-to-XML); the catalogue names them after iced-x86's
codes in the same notation. Where the two spell one form differently, :func:`spellings` gives the
catalogue's spellings of a published name, each rule about notation, never about one instruction:

* ``R8l`` is the catalogue's ``R8`` (a low byte with no high byte beside it);
* ``_EVEX`` / ``_VEX`` mark an encoding where the mnemonic has another one (uops.info's
  ``{evex}``/``{vex}`` specifier); the catalogue adds ``_EVEX`` only where names collide, so the
  suffix is dropped and the form must have that encoding;
* XED's iform tails: an opcode ``_0F28`` (the catalogue's ``_28``), an operand class repeated in
  the name (``SHLD_CL``, ``MOV_CR``), ``_IMMB``; XED's iclass tails ``_XMM`` (``MOVSD_XMM``, the SSE
  move beside the string ``MOVSD``), ``_SSE4``, ``_NEAR``;
* ``SEG`` is the catalogue's ``SREG``, ``MOFFS8`` its ``M8`` (an absolute address);
* XED's iclass tail ``_W`` (``LEAVE_W``, ``ENTER_W``) is the 16-bit operand size of a form whose
  plain name is the mode's default size: the one catalogue form of that name with a 16-bit
  operand size;
* a memory operand's width where the two disagree (a cache-line operation: uops.info writes the
  line, ``CLFLUSH (M512)``; an XSAVE area ``M4608``; a mask-register pair as ``R64``), and then a
  source register's width (``LSL (R64, R32)``): accepted only when exactly one catalogue form
  of that name differs in nothing else; one name for two encodings of a register move (XED gives
  ``VMOVAPD_EVEX (XMM, XMM)`` one iform) is the lower opcode.

:func:`find` applies them; :func:`missing_reason` says why a published name has no catalogue form
at all, and :func:`summary` counts every published form by status and reason for the agreement
report (``cyclebench inst --all --compare``).
"""
from __future__ import annotations

import re
import weakref
from collections import Counter, defaultdict

import iced_x86

from .catalogue import normalize_name

NO_FORM = "no catalogue form of this name"
_HEX_OPCODE = re.compile(r"_0F([0-9A-F]{2})(?=[_ ]|$)")
_ICLASS_TAILS = ("_XMM", "_SSE4", "_NEAR")
_ICLASSES = {"PREFETCH_EXCLUSIVE": "PREFETCH"}     # XED iclass -> iced mnemonic, where they differ
_MEM = re.compile(r"^(M\d*|MOFFS\d+)$")


def _split(name: str) -> tuple[str, list[str]]:
    stem, _, rest = name.partition(" (")
    return stem, [o for o in rest.rstrip(")").split(", ") if o] if rest else []


def _join(stem: str, ops: list[str]) -> str:
    return f"{stem} ({', '.join(ops)})" if ops else stem


def spellings(name: str) -> list[tuple[str, str | None]]:
    """(catalogue spelling, required encoding or None) of a published name, the name itself first."""
    name = normalize_name(name)
    stem, ops = _split(name)
    if "R8H" not in ops:
        ops = ["R8" if o == "R8L" else o for o in ops]
    ops = ["SREG" if o == "SEG" else re.sub(r"^MOFFS(\d+)$", r"M\1", o) for o in ops]
    encoding = None
    for tag in ("_EVEX", "_VEX"):
        if tag + "_" in stem + "_":
            stem = stem.replace(tag, "", 1)
            encoding = tag[1:]
    stem = _ICLASSES.get(stem, stem)
    stem = _HEX_OPCODE.sub(r"_\1", stem)
    for tail in _ICLASS_TAILS:
        stem = stem.replace(tail + "_", "_") if tail + "_" in stem else stem.removesuffix(tail)
    stem = re.sub(r"_IMMB\b", "", stem)
    parts = stem.split("_")
    stem = "_".join([parts[0]] + [p for p in parts[1:] if p not in ops])   # SHLD_CL (.., CL)
    out = [(name, None)]
    alias = _join(stem, ops)
    if alias != name or encoding:
        out.append((alias, encoding))
    return out


_OPCODE_TAG = re.compile(r"_(?:[0-9A-F]{2}|EVEX|VEX)(?=_|$)")   # the encoding is checked apart


def _untagged(name: str) -> str:
    stem, ops = _split(name)
    return _join(_OPCODE_TAG.sub("", stem), ops)


_GPR = re.compile(r"^(R(16|32|64)|K\|R64)$")


def _source_width_key(name: str) -> tuple[str, tuple[str, ...]]:
    """The loose key with the width of general registers after the first left out too
    (uops.info writes LSL's source as R32 beside an R64 destination)."""
    stem, ops = _wider_key(name)
    return stem, ops[:1] + tuple("R" if _GPR.match(o) else o for o in ops[1:])


def _wider_key(name: str) -> tuple[str, tuple[str, ...]]:
    """A name with its memory widths, mask-pair spelling, opcode and encoding tags left out: the
    loose match."""
    stem, ops = _split(name)
    return _OPCODE_TAG.sub("", stem), tuple("M" if _MEM.match(o) and "_1TO" not in o else
                       "K|R64" if o in ("K", "R64") else o for o in ops)


class Index:
    """Lookups over one catalogue: exact names, names before disambiguation, the loose key."""

    def __init__(self, catalogue):
        self.catalogue = catalogue
        self.by_base: dict[str, list] = defaultdict(list)
        self.loose: dict[tuple, list] = defaultdict(list)
        self.looser: dict[tuple, list] = defaultdict(list)
        for f in catalogue:
            if getattr(f, "base_name", ""):
                self.by_base[normalize_name(f.base_name)].append(f)
            self.loose[_wider_key(normalize_name(f.name))].append(f)
            self.looser[_source_width_key(normalize_name(f.name))].append(f)
        self.mnemonics: dict[str, list] = defaultdict(list)
        for f in catalogue:
            self.mnemonics[_split(normalize_name(f.name))[0].split("_")[0]].append(f)

    def find(self, name: str):
        """(catalogue form, how it was matched) of a published name; (None, '') when none."""
        for spelling, encoding in spellings(name):
            form = self.catalogue.get(spelling)
            if form is None and self.by_base.get(spelling):
                cands = self.by_base[spelling]
                form = next((f for f in cands if f.offered), cands[0])
            if form is not None and encoding in (None, getattr(form, "encoding", encoding)):
                return form, "name" if spelling == normalize_name(name) else "spelling"
        word = self._word(name)
        if word is not None:
            return word, "spelling"
        for spelling, encoding in spellings(name)[-1:]:
            cands = [f for f in self.loose.get(_wider_key(spelling), [])
                     if encoding in (None, getattr(f, "encoding", encoding))]
            if len(cands) == 1:
                return cands[0], "operand width"
            if cands and len({_untagged(normalize_name(f.name)) for f in cands}) == 1:
                # one published name for both directions of a register move (XED gives them one
                # iform): the first encoding, as uops.info's list keeps the first
                return min(cands, key=lambda f: f.name), "one of two encodings"
            cands = self.looser.get(_source_width_key(spelling), [])
            if len(cands) == 1 and encoding in (None, getattr(cands[0], "encoding", encoding)):
                return cands[0], "source register width"
        return None, ""

    def _word(self, name: str):
        """The 16-bit operand-size form a ``_W`` name stands for, or None."""
        stem, ops = _split(normalize_name(name))
        if not stem.endswith("_W"):
            return None
        cands = [f for f in self.by_base.get(_join(stem[:-2], ops), [])
                 if iced_x86.OpCodeInfo(f.code).operand_size == 16]
        return cands[0] if len(cands) == 1 else None

    def missing_reason(self, name: str) -> tuple[str, str]:
        """(category, reason) of a published name with no catalogue form."""
        spelling = spellings(name)[-1][0]
        stem, _ = _split(spelling)
        mnemonic = stem.split("_")[0]
        if stem.endswith("_REX64"):
            return ("redundant REX.W",
                    "redundant REX.W: uops.info's _REX64 prefix on a form without 64-bit operands "
                    "is not enumerated")
        if "_REPNE" in stem:
            return ("REPNE without a comparison",
                    "REPNE without a comparison: F2 is defined for CMPS and SCAS only, the manuals "
                    "leave it undefined on other string instructions")
        if re.search(r"_(R|B|I|IS|D8|D32)$", stem) and mnemonic != "LEA":
            return ("MPX addressing modes",
                    "MPX addressing modes: addressing modes are enumerated for LEA only; MPX bound "
                    "instructions run as hint NOPs on CPUs without MPX")
        forms = self.mnemonics.get(mnemonic, [])
        reasons = {f.reason for f in forms}
        if forms and None not in reasons and len(reasons) == 1:
            why = reasons.pop()
            return (category(why), f"{why} (every {mnemonic} form; this variant is not enumerated)")
        return NO_FORM, NO_FORM


_INDEXES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def index_of(catalogue) -> Index:
    """The catalogue's Index, built once per catalogue object: a Catalogue's forms and lookups are
    fixed when it is made, and an Index of the 18169 forms here takes 0.46 s to build."""
    try:
        index = _INDEXES.get(catalogue)
        if index is None:
            index = _INDEXES[catalogue] = Index(catalogue)
        return index
    except TypeError:           # an object weakref cannot key (a stand-in catalogue): built anew
        return Index(catalogue)


def category(reason: str) -> str:
    """A reason's category: the text before its first colon (``privileged: ring 0 only``)."""
    return (reason or "?").split(":")[0]


def summary(tgts) -> dict:
    """Counts of the published forms by status, and of those not measured here by reason."""
    status = Counter(t.status for t in tgts)
    reasons: dict[str, Counter] = defaultdict(Counter)
    for t in tgts:
        if t.status != "runnable":
            reasons[t.status][category(t.why)] += 1
    return {"forms": len(tgts), "status": dict(status),
            "reasons": {s: dict(c.most_common()) for s, c in reasons.items()}}


def summary_lines(s: dict) -> list[str]:
    """The coverage part of the agreement report: one line per status that is not measured."""
    lines = []
    for st, counts in s["reasons"].items():
        total = sum(counts.values())
        lines.append(f"{st}: {total} of {s['forms']} published forms; by reason: " +
                     "; ".join(f"{k} {v}" for k, v in counts.items()))
    return lines
