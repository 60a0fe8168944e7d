"""Start-up cost of one command: only the named subcommand's module is imported, and the counter
probe's answer is kept on disk, keyed by what can change it."""
import subprocess
import sys

from cyclebench.cli import parser


def _choices(p):
    return set(next(a for a in p._actions if a.dest == "command").choices)


def test_a_named_subcommand_builds_only_its_own_parser():
    assert _choices(parser.build_parser(["asm", "nop"])) == {"asm"}
    assert _choices(parser.build_parser(["--help"])) == set(parser.SUBCOMMANDS)
    assert _choices(parser.build_parser(["nosuch"])) == set(parser.SUBCOMMANDS)


def test_a_subcommands_help_is_the_same_either_way():
    alone = parser.build_parser(["asm"])._subparsers._group_actions[0].choices["asm"]
    full = parser.build_parser([])._subparsers._group_actions[0].choices["asm"]
    assert alone.format_help() == full.format_help()


def test_asm_imports_no_other_subcommand():
    code = ("import sys\nfrom cyclebench.cli.parser import build_parser\nbuild_parser(['asm', 'nop'])\n"
            "print(' '.join(m for m in sys.modules if m.startswith(('cyclebench.cli.', 'cyclebench.study'))))")
    mods = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "cyclebench.cli.asm" in mods
    assert not {"cyclebench.cli.study", "cyclebench.cli.inst", "cyclebench.study.engine"} & set(mods)
