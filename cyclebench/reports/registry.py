"""The output formats by name: one Reporter class per format."""
from __future__ import annotations

from ..errors import UsageError
from .base import Reporter
from .fmt_csv import CsvReporter
from .fmt_html import HtmlReporter
from .fmt_json import JsonReporter
from .fmt_markdown import MarkdownReporter
from .fmt_plot import PngReporter, SvgReporter
from .fmt_text import TextReporter

FORMATS: dict[str, type[Reporter]] = {c.name: c for c in (
    TextReporter, JsonReporter, MarkdownReporter, CsvReporter, PngReporter, SvgReporter, HtmlReporter)}


def get_reporter(name: str, **kwargs) -> Reporter:
    """The reporter for a format; keyword options (width, color, verbose) apply to text only."""
    if name not in FORMATS:
        raise UsageError(f"unknown output format '{name}'", "use one of " + ", ".join(FORMATS))
    return FORMATS[name](**kwargs) if name == "text" else FORMATS[name]()
