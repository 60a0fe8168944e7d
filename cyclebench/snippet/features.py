"""What assembled code needs and does, decoded with iced-x86: the CPU features it needs (and which
of them this CPU lacks), the flags it reads and writes (flagchain.flag_masks), and the general
registers it uses."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass

from .. import cache
from ..machine.cpu import cpu_info
from ..machine.features import feature_names, missing
from .flagchain import flag_masks

CACHE_KIND = "decoded"
GPRS = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")


@dataclass
class Decoded:
    """One decoded instruction: offset, Intel-syntax text, the CPUID features it needs, and the
    flags it reads and writes (flagchain.flag_masks)."""
    offset: int
    text: str
    features: list[str]
    flags: tuple[int, int] = (0, 0)


def decode(code: bytes, base: int = 0) -> list[Decoded]:
    import iced_x86         # here: loading it is about 9 ms of start-up, and a remembered check needs none
    names = feature_names()
    fmt = iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL)
    out = []
    # MPX must be asked for: without it iced decodes bnd* as the hint-NOPs they are on CPUs lacking MPX.
    for ins in iced_x86.Decoder(64, code, iced_x86.DecoderOptions.MPX, ip=base):
        out.append(Decoded(ins.ip, fmt.format(ins), [names[f] for f in ins.cpuid_features()], flag_masks(ins)))
    return out


def gpr_names():
    """(iced_x86, its 64-bit general register → our name)."""
    import iced_x86 as I
    return I, {getattr(I.Register, n.upper()): n for n in GPRS}


def used_gprs(code: bytes) -> set[str]:
    """The 64-bit general registers the code reads or writes, explicitly or implicitly."""
    I, reg = gpr_names()
    f = I.InstructionInfoFactory()
    out = set()
    for ins in I.Decoder(64, code):
        info = f.info(ins)
        for u in info.used_registers():
            full = I.RegisterExt.full_register(u.register)
            if full in reg:
                out.add(reg[full])
        for m in info.used_memory():
            for r in (m.base, m.index):
                full = I.RegisterExt.full_register(r) if r else r
                if full in reg:
                    out.add(reg[full])
    return out


def load_decoder() -> None:
    """Load iced-x86 now (about 8 ms), e.g. while as runs; a failure is left for ``decode`` to raise."""
    try:
        import iced_x86  # noqa: F401
    except ImportError:
        pass


def decode_each(chunks: list[bytes]) -> list[list[Decoded]]:
    """``decode`` of each chunk, kept in the cache folder by content and iced-x86's installed
    files (its output depends on nothing else), so that a snippet measured again is checked
    without loading iced-x86."""
    key = hashlib.sha256(b"".join(len(c).to_bytes(8, "little") + c for c in chunks) + _iced_stamp()).hexdigest()
    stored = _load(cache.load_entry(CACHE_KIND, key), len(chunks))
    if stored is not None:
        return stored
    decoded = [decode(c) for c in chunks]
    cache.store_entry(CACHE_KIND, key, json.dumps([[[d.offset, d.text, d.features, *d.flags] for d in ds] for ds in decoded],
                                                  separators=(",", ":")).encode())
    return decoded


def _load(data: bytes | None, n: int) -> list[list[Decoded]] | None:
    try:
        rows = json.loads(data) if data is not None else None
        if not isinstance(rows, list) or len(rows) != n:
            return None
        out = [[Decoded(off, text, feats, (read, wrote)) for off, text, feats, read, wrote in ds] for ds in rows]
    except (ValueError, TypeError):
        return None
    ok = all(type(d.offset) is int and isinstance(d.text, str) and isinstance(d.features, list)
             and all(type(m) is int for m in d.flags)
             and all(isinstance(f, str) for f in d.features) for ds in out for d in ds)
    return out if ok else None


def _iced_stamp() -> bytes:
    """iced-x86's package files (path, size, modification time), found without importing it."""
    spec = importlib.util.find_spec("iced_x86")
    folder = os.path.dirname(spec.origin) if spec and spec.origin else None
    if folder is None:
        return b"?"
    return cache.files_stamp(os.path.join(folder, name) for name in sorted(os.listdir(folder))
                             if name.endswith((".so", ".pyd", "__init__.py")))


def check(decoded: list[Decoded]) -> tuple[list[tuple[Decoded, list[str]]], bool]:
    """(instructions with the features this CPU lacks, uses MPX without having it)."""
    lacking, mpx_nop = [], False
    for d in decoded:
        if "MPX" in d.features and not cpu_info().has_mpx:
            mpx_nop = True
            continue
        m = missing(d.features)
        if m:
            lacking.append((d, m))
    return lacking, mpx_nop
