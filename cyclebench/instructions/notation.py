"""Parse what a user types into catalogue forms.

Accepted, tried in this order by :func:`resolve`:

1. uops.info notation: ``IMUL (R64, R64)``, ``VPADDQ_Z (ZMM, K, ZMM, ZMM)``, ``CPUID``
   (case and spacing free; uops.info's own spellings too: ``ADC_R4 (R8l, I8)``,
   ``VADDPS_EVEX (XMM, XMM, M32_1to4)``, coverage.spellings);
2. Intel operand-class notation: ``vpermd zmm, zmm, zmm``, ``add r64, imm32``, ``mov r64, m64``,
   ``vaddpd zmm {k}{z}, zmm, m64bcst`` (``r/m64`` means either);
3. a concrete instruction: ``imul rax, rbx``, ``add rax, 5``, ``vpaddq zmm1{k1}, zmm2, [rax]``:
   assembled with GNU as and decoded with iced-x86, so the form is exactly the encoding the
   assembler picks.

:func:`by_mnemonic` (``--mnemonic imul``) and :func:`by_extension` (``--extension AVX512F``) select
groups.  Anything unknown raises :class:`cyclebench.errors.UsageError` with a one-line cause and a
hint listing close matches.
"""
from __future__ import annotations

import difflib
import re

import iced_x86

from ..errors import UsageError
from ..snippet.checks import check_statement
from .catalogue import Catalogue, Form, normalize_name, xed_mnemonic
from .coverage import spellings
from .gas import assemble_lines, split_slot

_GPR_RE = re.compile(r"^(r([0-9]+)(b|w|d|l)?|[re]?[abcd]x|[abcd][lh]|[re]?(si|di|sp|bp)|"
                     r"(si|di|sp|bp)l)$")


def _cat(catalogue: Catalogue | None) -> Catalogue:
    return catalogue or Catalogue.load()


def _close(catalogue: Catalogue, text: str, n: int = 5) -> list[str]:
    key = normalize_name(text)
    mn = key.split(" ")[0].split("_")[0]
    pool = [f.name for f in catalogue.by_mnemonic.get(xed_mnemonic(mn), [])] or \
        [f.name for f in catalogue.forms]
    return difflib.get_close_matches(key, pool, n=n, cutoff=0.0 if len(pool) < 200 else 0.5)


def _fail(catalogue: Catalogue, text: str, cause: str) -> UsageError:
    close = _close(catalogue, text)
    hint = ("close matches: " + "; ".join(close)) if close else \
        "use uops.info notation like 'IMUL (R64, R64)' or Intel notation like 'imul r64, r64'"
    return UsageError(cause, hint=hint)


def split_operands(text: str) -> tuple[str, list[str]]:
    """``'vaddpd zmm1 {k1}{z}, zmm2, [rax]'`` -> ``('vaddpd', ['zmm1{k1}{z}', 'zmm2', '[rax]'])``."""
    text = " ".join(text.strip().split())
    if " " not in text:
        return text, []
    head, _, rest = text.partition(" ")
    # prefixes that belong to the mnemonic
    if head.lower() in ("lock", "{evex}", "{vex}", "{vex3}", "{load}", "{store}"):
        mn, ops = split_operands(rest)
        return f"{head} {mn}", ops
    ops, depth, cur = [], 0, ""
    for ch in rest:
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
            continue
        depth += ch in "[(" 
        depth -= ch in "])"
        cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return head, [o.replace(" {", "{").replace("} ", "}") for o in ops]


# ------------------------------------------------------------------------- operand-class notation

_CLASS_TOKEN = re.compile(
    r"^(?P<base>r8|r16|r32|r64|r/m8|r/m16|r/m32|r/m64|rm8|rm16|rm32|rm64|xmm|ymm|zmm|"
    r"xmm/m\d+|ymm/m\d+|zmm/m\d+|mm|mm/m64|k|m|mem|m\d+|m\d+bcst|m\d+_1to\d+|"
    r"imm8|imm16|imm32|imm64|i8|i16|i32|i64|ib|iw|id|iq|st|st\(i\)|st\(0\)|"
    r"al|ax|eax|rax|cl|dx|1|sreg)(?P<deco>(\{[^}]*\})*)$")


def _token_matches(tok: str, op, form: Form) -> bool:
    """Does an operand-class token (``r64``, ``m64``, ``imm8``, ``xmm/m128``, ``k``) match ``op``?"""
    tok = tok.lower()
    alts = tok.split("/") if "/" in tok and not tok.startswith(("r/m", "st(")) else [tok]
    if tok.startswith("r/m") or tok.startswith("rm"):
        bits = tok.lstrip("r/m")
        alts = [f"r{bits}", f"m{bits}"]
    return any(_one(a, op, form) for a in alts)


def _one(t: str, op, form: Form) -> bool:
    n = op.notation.upper()
    t = t.upper()
    if t in ("M", "MEM"):
        return op.kind in ("mem", "agen") and not form.broadcast
    if t.endswith("BCST"):
        return form.broadcast and op.kind == "mem" and n.startswith(t[:-4] + "_1TO")
    if t in ("IMM8", "IB"):
        t = "I8"
    elif t in ("IMM16", "IW"):
        t = "I16"
    elif t in ("IMM32", "ID"):
        t = "I32"
    elif t in ("IMM64", "IQ"):
        t = "I64"
    elif t in ("ST", "ST(0)"):
        return n == "ST(0)"       # Intel's "st" is st(0); "st(i)" is any stack register
    elif t == "MM" and n == "MM":
        return True
    if op.fixed and t == op.fixed.upper():
        return True
    return n == t


def parse_class_notation(text: str, catalogue: Catalogue | None = None) -> list[Form]:
    """Forms matching Intel operand-class notation (``add r64, imm32``); [] when nothing matches."""
    cat = _cat(catalogue)
    mn, toks = split_operands(text)
    prefixes = mn.lower().split()
    mn = prefixes[-1]
    lock = "lock" in prefixes
    cands = cat.by_mnemonic.get(xed_mnemonic(mn.upper()), [])
    out = []
    for form in cands:
        if form.lock != lock:
            continue
        ops = [op for op in form.operands
               if op.kind != "implicit_mem" and not (op.kind == "agen" and form.lea_mode) and not op.is_mask]
        want_zero = any("{z}" in t.lower() for t in toks)
        want_mask = any(re.search(r"\{k\d?\}", t.lower()) for t in toks)
        if bool(form.mask) != want_mask or (form.mask == "zero") != want_zero:
            continue
        if len(ops) != len(toks):
            continue
        ok = True
        for t, op in zip(toks, ops):
            base = re.sub(r"\{[^}]*\}", "", t).strip()
            if not _CLASS_TOKEN.match(base.lower()) or not _token_matches(base, op, form):
                ok = False
                break
        if ok:
            out.append(form)
    return out


# ---------------------------------------------------------------------------- concrete instructions

def _looks_concrete(toks: list[str]) -> bool:
    for t in toks:
        b = re.sub(r"\{[^}]*\}", "", t).strip().lower()
        if "[" in b or re.match(r"^-?(0x[0-9a-f]+|\d+)$", b) and b != "1":
            return True
        if re.match(r"^([xyz]mm\d+|k\d|mm\d|st\(\d\))$", b) or _GPR_RE.match(b):
            return True
    return False


def parse_concrete(text: str, catalogue: Catalogue | None = None) -> list[Form]:
    """The form GNU as + iced-x86 make of one concrete instruction (``imul rax, rbx``)."""
    cat = _cat(catalogue)
    check_statement("the instruction", text)     # pasted typography, file reads: before GNU as guesses
    a = assemble_lines([text])[0]
    if a.error:
        raise _fail(cat, text, f"cannot assemble '{text}': {a.error}")
    ins, alone = split_slot(a.data)
    if not alone:
        raise UsageError(f"'{text}' is more than one instruction",
                         hint="give one instruction at a time")
    rm_mem = any(ins.op_kind(i) == iced_x86.OpKind.MEMORY for i in range(ins.op_count))
    out = []
    for form in cat.by_code.get(ins.code, []):
        mask = None if ins.op_mask == iced_x86.Register.NONE else \
            ("zero" if ins.zeroing_masking else "merge")
        if form.mask != mask or form.broadcast != ins.is_broadcast or form.lock != ins.has_lock_prefix:
            continue
        if form.rm is not None and (form.rm == "mem") != rm_mem:
            continue
        if form.lea_mode and form.lea_mode != lea_mode(ins):
            continue
        if form.rep != ("REPE" if ins.has_rep_prefix else "REPNE" if ins.has_repne_prefix else None):
            continue
        if form.rounding != _rounding(ins) or form.high8 != _high8(ins):
            continue
        if form.rm_group is not None and form.rm_group != _rm_group(ins.op0_register):
            continue
        out.append(form)
    if any(f.imm_zero for f in out):       # SHL (R64, I8) and its SHL (R64, 0) twin: the value decides
        zero = ins.immediate8 == 0
        out = [f for f in out if f.imm_zero == zero]
    return out


def lea_mode(ins: iced_x86.Instruction) -> str:
    """The catalogue's name of an LEA's addressing: base B (R for RIP), index I (IS when scaled),
    displacement D8 or D32, joined by '_' (``B_IS_D8``)."""
    base = ins.memory_base
    parts = [] if base == iced_x86.Register.NONE else ["R" if base == iced_x86.Register.RIP else "B"]
    if ins.memory_index != iced_x86.Register.NONE:
        parts.append("IS" if ins.memory_index_scale > 1 else "I")
    if base in (iced_x86.Register.NONE, iced_x86.Register.RIP):
        parts.append("D32")                  # no base register: always a 32-bit displacement
    elif ins.memory_displacement:
        parts.append("D8" if ins.memory_displ_size == 1 else "D32")
    return "_".join(parts)


_BYTE_REGS = [iced_x86.Register.AL + i for i in range(20)]   # AL..BL, AH..BH, SPL..DIL, R8L..R15L


def _rm_group(reg: int) -> int | None:
    """A byte register's number (AH..BH aside) masked to its ModRM.rm group: 0 or 4."""
    i = _BYTE_REGS.index(reg) if reg in _BYTE_REGS else None
    return None if i is None else (i if i < 4 else i - 4) & 4


def _rounding(ins: iced_x86.Instruction) -> str | None:
    if ins.rounding_control != iced_x86.RoundingControl.NONE:
        return "ER"
    return "SAE" if ins.suppress_all_exceptions else None


def _high8(ins: iced_x86.Instruction) -> tuple[int, ...]:
    """iced operand indices that are AH..BH (the catalogue's Form.high8)."""
    return tuple(i for i in range(ins.op_count) if ins.op_kind(i) == iced_x86.OpKind.REGISTER
                 and iced_x86.Register.AH <= ins.op_register(i) <= iced_x86.Register.BH)


# ------------------------------------------------------------------------------------ entry points

def resolve(text: str, catalogue: Catalogue | None = None) -> list[Form]:
    """All forms ``text`` denotes (usually one).  Raises UsageError when there are none.
    Knights Corner (MVEX) twins are dropped when other forms match too."""
    forms = _resolve(text, catalogue)
    non_mvex = [f for f in forms if f.encoding != "MVEX"]
    return non_mvex or forms


def _resolve(text: str, catalogue: Catalogue | None = None) -> list[Form]:
    cat = _cat(catalogue)
    if not text or not text.strip():
        raise UsageError("empty instruction", hint="e.g. 'IMUL (R64, R64)' or 'imul r64, r64'")
    f = cat.get(text)
    if f is not None:
        return [f]
    for spelling, encoding in spellings(text)[1:]:      # uops.info's spelling of a catalogue name
        f = cat.get(spelling)
        if f is not None and encoding in (None, f.encoding):
            return [f]
    if "(" in text and ")" in text.strip()[-1:] and not text.lower().lstrip().startswith("st("):
        head = text.split("(")[0].strip()
        if head and " " not in head:
            raise _fail(cat, text, f"no instruction form '{normalize_name(text)}'")
    mn, toks = split_operands(text)
    if not toks and " " not in text.strip():
        forms = [f for f in cat.by_mnemonic.get(xed_mnemonic(text.strip().upper()), [])
                 if not _notation_ops(f)]
        if forms:
            return forms
    forms = parse_class_notation(text, cat)
    if forms:
        return forms
    if _looks_concrete(toks) or mn.lower() in ("rep", "repe", "repz", "repne", "repnz"):
        forms = parse_concrete(text, cat)
        if forms:
            return forms
    raise _fail(cat, text, f"no instruction form matches '{text.strip()}'")


def resolve_one(text: str, catalogue: Catalogue | None = None) -> Form:
    """Exactly one form; more than one raises UsageError listing them."""
    forms = resolve(text, catalogue)
    if len(forms) > 1:
        raise UsageError(f"'{text.strip()}' matches {len(forms)} forms",
                         hint="pick one: " + "; ".join(f.name for f in forms[:8]))
    return forms[0]


def _notation_ops(f: Form) -> list:
    return [op for op in f.operands if op.kind != "implicit_mem" and not (op.kind == "agen" and f.lea_mode)]


def by_mnemonic(mnemonic: str, catalogue: Catalogue | None = None) -> list[Form]:
    """All forms of a mnemonic (``imul``; iced or XED spelling: ``cmovne`` = ``cmovnz``)."""
    cat = _cat(catalogue)
    key = xed_mnemonic(mnemonic.strip().upper())
    forms = cat.by_mnemonic.get(key, [])
    if not forms:
        close = difflib.get_close_matches(key, list(cat.by_mnemonic), n=5)
        raise UsageError(f"unknown mnemonic '{mnemonic}'",
                         hint=("close matches: " + ", ".join(close)) if close else
                         "mnemonics are Intel's, e.g. imul, vpermd, cmovnz")
    return forms


def by_extension(extension: str, catalogue: Catalogue | None = None) -> list[Form]:
    """All forms whose CPUID features include ``extension`` (``AVX512F``, ``avx512_vbmi2``)."""
    cat = _cat(catalogue)
    forms = cat.with_extension(extension)
    if not forms:
        close = difflib.get_close_matches(extension.upper(), sorted(cat.extensions()), n=5)
        raise UsageError(f"unknown extension '{extension}'",
                         hint=("close matches: " + ", ".join(close)) if close else
                         "extensions are CPUID feature names, e.g. AVX2, AVX512F, BMI2")
    return forms
