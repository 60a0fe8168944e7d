"""The argument parser: subcommands register themselves here."""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from .. import __version__
from ..errors import EXIT_CODES, UsageError

# Subcommand modules (cyclebench.cli.<name>), each with add_parser(subparsers) and run(args). When the
# command line names one, only that one is imported (start-up is part of every measurement's wall
# time); otherwise (--help, a mistyped command) all are, so the listing and the error stay complete.
# Each imports the measuring machinery inside run().
SUBCOMMANDS = ["asm", "nanobench", "inst", "seq", "block", "study", "report", "compare", "ports", "predict"]


def exit_code_help() -> str:
    return "exit codes:\n" + "\n".join(f"  {k:3d}  {v}" for k, v in EXIT_CODES.items())


def _path(text: str) -> Path:
    """What ``type=Path`` means in every cyclebench parser: an empty (or blank) string is refused,
    where Path("") would quietly be the current folder (an unset shell variable, "$OUT")."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return Path(text)


class Parser(argparse.ArgumentParser):
    """argparse's errors as cyclebench's: one `error:` line, one `hint:` line, exit 2 (not a usage dump)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("type", Path, _path)

    def error(self, message):
        raise UsageError(message, f"see '{self.prog} --help'")

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but an unknown option's hint names the subcommand's own --help."""
        ns, extra = self.parse_known_args(args, namespace)
        if extra:
            from ..textfile import quote
            where = f"{self.prog} {ns.command}" if getattr(ns, "command", None) else self.prog
            raise UsageError(f"unrecognized arguments: {quote(' '.join(extra), 200)}", f"see '{where} --help'")
        return ns


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv`` (None: this process's arguments): with only the subcommand it names,
    if its first word is one, else with all of them."""
    argv = sys.argv[1:] if argv is None else argv
    names = argv[:1] if argv and argv[0] in SUBCOMMANDS else SUBCOMMANDS
    p = Parser(
        prog="cyclebench", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="What x86-64 machine code costs in CPU cycles, with or without a hardware PMU.",
        epilog=exit_code_help())
    p.add_argument("--version", action="version", version=f"cyclebench {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name in names:
        try:
            mod = importlib.import_module(f".{name}", __package__)
        except ModuleNotFoundError as e:
            if e.name and e.name.endswith(f"cli.{name}"):
                continue            # not built yet
            raise
        mod.add_parser(sub)
    return p


def subparser(sub, name: str, help: str, description: str | None = None) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=description or help, epilog=exit_code_help(),
                          formatter_class=argparse.RawDescriptionHelpFormatter)
