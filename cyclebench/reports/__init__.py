"""Reporters: every output format implements Reporter.render(results) -> str."""
from __future__ import annotations

from .base import Reporter, get_reporter, FORMATS

__all__ = ["Reporter", "get_reporter", "FORMATS"]
