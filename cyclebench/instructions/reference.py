"""uops.info's instruction tables shipped with cyclebench (``data/uops-info/CODE.csv``, see the
README there) and which one describes this CPU.

``auto`` means the detected CPU's own column from the microarchitecture table (machine/uarch.py):
uops.info's column for its core, or the nearest one, labelled "nearest", where uops.info has none
(ADL-P for Sapphire, Emerald and Granite Rapids, ZEN4 for Zen 5). An unknown CPU has no column:
``auto`` is then a usage error that asks for one by name.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..machine.uarch import Identity, this_machine

DATA = Path(__file__).with_name("data") / "uops-info"
AUTO = "auto"


@dataclass(frozen=True)
class Column:
    code: str            # uops.info's code, e.g. ADL-P
    nearest: bool        # only the nearest column to the CPU it stands for
    path: Path
    label: str           # "uops.info ADL-P (nearest to Sapphire Rapids (Golden Cove))"


def codes() -> list[str]:
    """The uops.info codes shipped, e.g. ['ADL-E', 'ADL-P', ..., 'ZEN4']."""
    return sorted(p.stem for p in DATA.glob("*.csv"))


def column(code: str) -> Column:
    """The shipped table for a uops.info code (any case)."""
    match = next((c for c in codes() if c.lower() == code.strip().lower()), None)    # ' zen4' too
    if match is None:
        raise UsageError(f"no shipped uops.info table for '{code}'",
                         f"give one of {', '.join(codes())}, or a CSV file")
    return Column(match, False, DATA / f"{match}.csv", f"uops.info {match}")


def own_column(ident: Identity | None = None) -> Column:
    """This CPU's own column (or the nearest, labelled so); a usage error on an unknown CPU."""
    ident = this_machine() if ident is None else ident
    code, nearest = ident.reference
    if code is None:
        raise UsageError(f"this CPU is not in the microarchitecture table ({ident.name}), so no "
                         "published column is known for it",
                         f"name one: --arch CODE with one of {', '.join(codes())}")
    c = column(code)
    if nearest:
        return Column(c.code, True, c.path, f"{c.label} (nearest to {ident.uarch.label})")
    return c


def resolve_arch(arch: str | None, ident: Identity | None = None) -> Column:
    """``--arch``: ``auto`` (this CPU's column, or ``ident``'s: the CPU a file was measured on)
    or a uops.info code."""
    return own_column(ident) if not arch or arch.lower() == AUTO else column(arch)


def resolve_source(value: str, arch: Column | None) -> tuple[Path, str]:
    """``--compare`` / ``--evidence``: (file to read, its label). ``auto`` is ``arch``'s shipped table;
    a uops.info code that is not an existing file names its shipped table; else a file path."""
    if value.lower() == AUTO:
        arch = arch or own_column()
        return arch.path, arch.label
    path = Path(value)
    if not path.exists() and value.strip().lower() in {c.lower() for c in codes()}:
        c = column(value)
        return c.path, c.label
    return path, path.name
