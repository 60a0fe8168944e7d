"""What CPU features assembled code needs (iced-x86), and which of them this CPU lacks."""
from __future__ import annotations

from dataclasses import dataclass

from ..machine.cpu import cpu_info
from ..machine.features import feature_names, missing


@dataclass
class Decoded:
    offset: int
    text: str
    features: list[str]


def decode(code: bytes, base: int = 0) -> list[Decoded]:
    import iced_x86
    names = feature_names()
    fmt = iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL)
    out = []
    # MPX must be asked for: without it iced decodes bnd* as the hint-NOPs they are on CPUs lacking MPX.
    for ins in iced_x86.Decoder(64, code, iced_x86.DecoderOptions.MPX, ip=base):
        out.append(Decoded(ins.ip, fmt.format(ins), [names[f] for f in ins.cpuid_features()]))
    return out


def check(code: bytes) -> tuple[list[tuple[Decoded, list[str]]], bool]:
    """(instructions with the features this CPU lacks, uses MPX without having it)."""
    lacking, mpx_nop = [], False
    for d in decode(code):
        if "MPX" in d.features and not cpu_info().has_mpx:
            mpx_nop = True
            continue
        m = missing(d.features)
        if m:
            lacking.append((d, m))
    return lacking, mpx_nop
