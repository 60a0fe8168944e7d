"""The one exporter interface: every output format (text, Markdown, CSV, JSON, PNG, SVG) is a
Reporter that renders a Report (reports/model.py), as hyperfine's exporters and Google Benchmark's
reporters do. Formats are listed in reports/registry.py."""
from __future__ import annotations

from pathlib import Path

from ..errors import ResultFileError
from .model import Report, as_report


class Reporter:
    name = ""          # the format's name (--format)
    suffix = ""        # the file name suffix it writes
    binary = False     # render() returns bytes

    def render(self, report) -> str | bytes:
        """The whole output for a Report (or a list of Tables, a list of Results, a Figure)."""
        return self.export(as_report(report))

    def export(self, report: Report) -> str | bytes:
        raise NotImplementedError

    def write(self, report, path) -> Path:
        """Render into a file; a file that cannot be written is a ResultFileError (exit 10)."""
        path = Path(path)
        data = self.render(report)
        try:
            if self.binary:
                path.write_bytes(data)
            else:
                path.write_text(data)
        except OSError as e:
            raise ResultFileError(f"cannot write {path}: {e.strerror}",
                                  "check the path, its permissions and the free space") from None
        return path
