"""Reporters: one interface (base.Reporter) over a Report model (model.py); one module per format
(fmt_text, fmt_markdown, fmt_csv, fmt_json, fmt_plot); tables.py builds the instruction and
sequence tables."""
from __future__ import annotations

from .base import Reporter
from .model import Column, Figure, Panel, Report, Series, Table, as_report
from .registry import FORMATS, get_reporter

__all__ = ["Reporter", "get_reporter", "FORMATS", "Report", "Table", "Column", "Figure", "Panel",
           "Series", "as_report"]
