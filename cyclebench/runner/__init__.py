"""The C runner ``cb-runner`` and everything that touches it directly: its source
(``cb_runner.c``), its build into the cache (``build``), its control-block layout (``layout``),
its line protocol (``protocol``) and starting it (``process``).

The lowest layer of the package: it imports nothing of cyclebench but ``errors``, ``cache`` and
``toolchain``, so the harness, the counter backends and the measurement layer all build on it.
"""
from .build import runner_path
from .process import run, write_temp
from .protocol import PROTOCOL, RunnerOutput, RunnerProtocolError, parse_output

__all__ = ["PROTOCOL", "RunnerOutput", "RunnerProtocolError", "parse_output", "run", "runner_path",
           "write_temp"]
