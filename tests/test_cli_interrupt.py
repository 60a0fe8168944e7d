"""Ctrl-C at any moment of a run: the "interrupted" line and exit code 130 (or a clean finish
when the run was too quick to interrupt), never a traceback.

The signal goes to the whole process group, as a terminal's Ctrl-C does (the runner too). Runs
use ``python3 -S`` with the source tree on PYTHONPATH: without -S the interpreter spends its first
~40 ms in site's .pth files (the editable-install finder), where a Ctrl-C is a KeyboardInterrupt
before any cyclebench code exists to catch it; that part is checked separately below.
"""
import os
import re
import signal
import site
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[1])
INTERRUPTED = "interrupted: results saved so far are kept"
ENTRIES = {
    "python -m cyclebench": ["-m", "cyclebench"],
    # what the console script `cyclebench` runs
    "console script": ["-c", "import sys; from cyclebench.cli.main import main; sys.exit(main())"],
}


def interrupt(python_args: list[str], delay: float, with_site: bool = False) -> tuple[int, str]:
    # -S skips site (and its .pth files); the installed packages are reached through PYTHONPATH
    path = [ROOT, *site.getsitepackages(), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    cmd = [sys.executable, *([] if with_site else ["-S"]), *python_args, "asm", "-n", "3", "--budget", "0", "nop"]
    # Ctrl-C's default action, as in a terminal's foreground (a background job's children ignore it)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                         stdin=subprocess.DEVNULL, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(delay)
    try:
        os.killpg(p.pid, signal.SIGINT)
    except ProcessLookupError:        # already finished
        pass
    _, err = p.communicate(timeout=60)
    return p.returncode, err


# The modules the console script's import line runs before main() exists to catch anything
IMPORT_CHAIN = ("/cyclebench/__init__.py", "/cyclebench/cli/__init__.py", "/cyclebench/cli/main.py")


def interpreter_startup(err: str) -> bool:
    """A traceback from before main() could catch it: the interpreter's own start (runpy for -m),
    or the console script's import line, while it runs the module bodies of the import chain
    (with fast start-up a 5 ms Ctrl-C lands there). A frame anywhere else in cyclebench, or in a
    function of those modules, is not this."""
    frames = re.findall(r'File "([^"]+)", line \d+, in (\S+)', err)
    return bool(frames) and all("/cyclebench/" not in f or (fn == "<module>" and f.endswith(IMPORT_CHAIN))
                                for f, fn in frames)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("delay_ms", [0, 5, 20, 50, 150, 400])
def test_an_interrupt_at_any_moment_says_so_and_exits_130(entry, delay_ms):
    code, err = interrupt(ENTRIES[entry], delay_ms / 1000)
    if interpreter_startup(err):
        return                        # before cyclebench's code existed: no program can catch that
    assert "Traceback" not in err, err
    if code == -signal.SIGINT:
        pass   # before the interpreter installed its handler, or after it removed it at exit: the shell shows 130
    elif code == 130:
        assert err.rstrip().endswith(INTERRUPTED) and err.count(INTERRUPTED) == 1, err
    else:
        assert code == 0, f"exit {code}:\n{err}"        # finished before the signal


def test_an_interrupt_during_startup_never_shows_cyclebench_code_in_a_traceback():
    for delay_ms in (10, 20, 30, 45, 60, 100):
        code, err = interrupt(ENTRIES["python -m cyclebench"], delay_ms / 1000, with_site=True)
        frames = re.findall(r'File "([^"]+)"', err)
        assert not [f for f in frames if "/cyclebench/" in f], err
        assert code in (130, 0, 1, -signal.SIGINT), err       # 1: site's own KeyboardInterrupt


def test_an_in_process_interrupt_returns_130_and_leaves_the_handler_alone(monkeypatch, capsys):
    from cyclebench.cli import main as cli_main

    def ctrl_c(argv):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli_main, "_dispatch", ctrl_c)
    before = signal.getsignal(signal.SIGINT)
    assert cli_main.main(["asm", "nop"]) == 130
    assert capsys.readouterr().err == INTERRUPTED + "\n"
    assert signal.getsignal(signal.SIGINT) is before


def test_an_interrupt_that_python_rewraps_is_still_an_interrupt(monkeypatch, capsys):
    # a Ctrl-C landing while a class is created (a module imported at its first use) comes out
    # as "RuntimeError: Error calling __set_name__ ..." with the KeyboardInterrupt as its cause
    from cyclebench.cli import main as cli_main
    from cyclebench.cli import parser

    def build_parser(argv=None):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as k:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from k

    monkeypatch.setattr(parser, "build_parser", build_parser)
    assert cli_main.main(["asm", "nop"]) == 130
    assert capsys.readouterr().err.strip() == cli_main.INTERRUPTED
