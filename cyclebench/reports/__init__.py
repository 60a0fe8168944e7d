"""Reporters: one interface (base.Reporter) over a Report model (model.py); one module per format
(fmt_text, fmt_markdown, fmt_csv, fmt_json, fmt_plot); tables.py builds the instruction and
sequence tables."""
from __future__ import annotations

import importlib

# Loaded when first named: a measurement's text (measurement_text.py) needs none of them, and the
# model's dataclasses and the formats cost a few ms of every `cyclebench asm`.
_EXPORTS = {"Reporter": "base", "get_reporter": "registry", "FORMATS": "registry", "Report": "model",
            "Table": "model", "Column": "model", "Figure": "model", "Panel": "model", "Series": "model",
            "as_report": "model"}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
