"""Runs the bad-input table (tests/bad_input/): one `error:` line, one `hint:` line, the documented
exit code, no traceback, no hang, and the case's files intact."""
from __future__ import annotations

import fcntl
import importlib
import os
import pkgutil
import pty
import re
import signal
import subprocess
import sys
import termios
import time
import tty

import pytest

import bad_input
from bad_input import ApiCase, Case
from cyclebench.errors import EXIT_CODES, CycleBenchError


def _load():
    cases, api = [], []
    for mod in pkgutil.iter_modules(bad_input.__path__):
        m = importlib.import_module(f"bad_input.{mod.name}")
        for c in getattr(m, "CASES", []):
            (api if isinstance(c, ApiCase) else cases).append(c)
    return cases, api


CASES, API_CASES = _load()


def _param(c):
    marks = [pytest.mark.measured] if getattr(c, "measured", False) else []
    return pytest.param(c, id=c.id, marks=marks)


def test_ids_are_unique():
    ids = [c.id for c in CASES + API_CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_cli_bad_input(case: Case, tmp_path, capsys, monkeypatch):
    tmp = str(tmp_path)
    for name, data in case.files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    if case.setup:
        case.setup(tmp)
    before = {n: (tmp_path / n).read_bytes() for n in case.intact}
    env = {k: v.replace("{tmp}", tmp) for k, v in case.env.items()}
    if case.signal:
        return _signalled(case, tmp_path, [_arg(a, tmp) for a in case.argv], env)
    if case.tty:
        code, err = _in_a_terminal(case, tmp, env)
    elif case.subprocess:
        argv = [_arg(a, tmp) for a in case.argv]
        proc = subprocess.run([sys.executable, "-m", "cyclebench", *argv], capture_output=True,
                              text=True, errors="replace", timeout=case.timeout,
                              env={**os.environ, **env}, stdin=subprocess.DEVNULL)
        code, err = proc.returncode, proc.stderr
    else:
        argv = [_arg(a, tmp) for a in case.argv]
        from cyclebench.cli.main import main
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        code = main(argv)
        err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert code == case.exit_code, f"exit {code}, expected {case.exit_code}:\n{err}"
    assert code in EXIT_CODES and code != 1
    errors = [ln[len("error: "):] for ln in err.splitlines() if ln.startswith("error: ")]
    hints = [ln[len("hint: "):] for ln in err.splitlines() if ln.startswith("hint: ")]
    assert len(errors) == 1 and len(hints) == 1, err
    assert re.search(case.error, errors[0]), errors[0]
    assert re.search(case.hint, hints[0]), hints[0]
    assert len(err) < 20_000, "error output must be short"
    for n, data in before.items():
        assert (tmp_path / n).read_bytes() == data, f"{n} was changed"
    if case.after:
        case.after(tmp)


def _arg(a, tmp: str, tty_path: str = "") -> str:
    """An argument: "{tmp}" and "{tty}" replaced, or a function of (tmp, tty) for one that encodes them."""
    return a(tmp, tty_path) if callable(a) else a.replace("{tmp}", tmp).replace("{tty}", tty_path)


def _in_a_terminal(case: Case, tmp: str, env: dict) -> tuple[int, str]:
    """Run the case with a fresh pty as controlling terminal and standard input; assert that no
    byte was pushed into the terminal's input queue (TIOCSTI) by the time it ends."""
    master, slave = pty.openpty()
    try:
        tty.setraw(slave)                  # raw: anything queued is readable at once, line or not
        argv = [_arg(a, tmp, os.ttyname(slave)) for a in case.argv]

        def take_the_terminal():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        proc = subprocess.run([sys.executable, "-m", "cyclebench", *argv], stdin=slave, capture_output=True,
                              text=True, errors="replace", timeout=case.timeout, env={**os.environ, **env},
                              preexec_fn=take_the_terminal)
        os.set_blocking(slave, False)
        try:
            pushed = os.read(slave, 4096)
        except BlockingIOError:
            pushed = b""
        assert pushed == b"", f"text reached the terminal: {pushed!r}"
    finally:
        os.close(slave)
        os.close(master)
    return proc.returncode, proc.stderr


def _signalled(case: Case, tmp_path, argv: list[str], env: dict) -> None:
    """Send the case's signal once its file shows up; the run must end with that signal's exit code
    (130 for SIGINT, 143 for SIGTERM), no traceback and no temporary file left. The run starts with
    Ctrl-C's default action, as a command in a terminal's foreground does: a suite started as a
    shell's background job has SIGINT ignored, and its children would inherit that."""
    proc = subprocess.Popen([sys.executable, "-m", "cyclebench", *argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env, "TMPDIR": str(tmp_path)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + case.timeout
        while not list(tmp_path.glob(case.signal_when)) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert proc.poll() is None, f"ended before the signal: {proc.communicate()[1]}"
        assert list(tmp_path.glob(case.signal_when)), f"{case.signal_when} never appeared"
        time.sleep(0.2)
        proc.send_signal(case.signal)
        err = proc.communicate(timeout=case.timeout)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err, err
    assert proc.returncode == case.exit_code and proc.returncode in EXIT_CODES, err
    assert re.search(case.error, err), err
    assert not list(tmp_path.glob("cyclebench-*")), list(tmp_path.iterdir())


@pytest.mark.parametrize("case", [_param(c) for c in API_CASES])
def test_api_bad_input(case: ApiCase):
    with pytest.raises(CycleBenchError) as info:
        case.call()
    assert info.value.exit_code == case.exit_code
    assert info.value.hint
    assert re.search(case.error, str(info.value)), str(info.value)
