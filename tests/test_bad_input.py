"""Runs the bad-input table (tests/bad_input/): one `error:` line, one `hint:` line, the documented
exit code, no traceback, no hang, and the case's files intact."""
from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys

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
    argv = [a.replace("{tmp}", tmp) for a in case.argv]
    env = {k: v.replace("{tmp}", tmp) for k, v in case.env.items()}
    if case.subprocess:
        proc = subprocess.run([sys.executable, "-m", "cyclebench", *argv], capture_output=True,
                              text=True, errors="replace", timeout=case.timeout,
                              env={**os.environ, **env}, stdin=subprocess.DEVNULL)
        code, err = proc.returncode, proc.stderr
    else:
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


@pytest.mark.parametrize("case", [_param(c) for c in API_CASES])
def test_api_bad_input(case: ApiCase):
    with pytest.raises(CycleBenchError) as info:
        case.call()
    assert info.value.exit_code == case.exit_code
    assert info.value.hint
    assert re.search(case.error, str(info.value)), str(info.value)
