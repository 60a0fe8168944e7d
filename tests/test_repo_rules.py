"""Rules of the repository that hold for every file: imports point down the layers of
docs/ARCHITECTURE.md, every module says what it is and stays short, and nothing reads data from
outside the repo (the shared reference folder or a machine path)."""
import ast
import functools
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cyclebench"

# docs/ARCHITECTURE.md: runner <- snippet/machine/counters <- harness <- measurement <-
# instructions/blocks/routines/reports/study/studies <- results <- cli; the package's top-level modules
# (errors, cache, textfile, toolchain) sit below everything, and its front doors (__init__: the
# public measure() API; __main__: the CLI) above everything.
LAYERS = {"runner": 1, "snippet": 2, "machine": 2, "counters": 2, "harness": 3, "measurement": 4,
          "instructions": 5, "blocks": 5, "routines": 5, "reports": 5, "study": 5, "studies": 5, "results": 6, "cli": 7}


FRONT = 99


def _layer(parts: list[str]) -> tuple[str, int]:
    """(place, layer) of a module path inside cyclebench ([] or a top-level module: layer 0)."""
    if parts and parts[0] in LAYERS:
        return parts[0], LAYERS[parts[0]]
    return "cyclebench", 0


def _own_layer(path: Path) -> tuple[str, int]:
    rel = path.relative_to(PACKAGE)
    if len(rel.parts) == 1 and rel.stem in ("__init__", "__main__"):
        return "cyclebench front door", FRONT
    return _layer(list(rel.parts[:-1]))


@functools.cache
def _parsed(path: Path) -> tuple[str, ast.Module]:
    """A module's text and syntax tree, parsed once for the rules that read both (about 0.6 s for
    the package)."""
    text = path.read_text()
    return text, ast.parse(text, str(path))


def _imports(path: Path):
    """Every cyclebench module a file imports (at any depth, lazily too), as dotted parts."""
    rel = path.relative_to(PACKAGE).with_suffix("").parts
    package = list(rel[:-1]) if rel[-1] != "__init__" else list(rel[:-1])
    tree = _parsed(path)[1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "cyclebench":
                    yield node.lineno, a.name.split(".")[1:]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] if node.level > 1 else package
                yield node.lineno, base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "cyclebench":
                yield node.lineno, node.module.split(".")[1:]


def test_no_module_imports_a_layer_above_its_own():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        place, own = _own_layer(path)
        for line, target in _imports(path):
            other, theirs = _layer(target)
            if theirs > own:
                bad.append(f"{path.relative_to(ROOT)}:{line} ({place}) imports {'.'.join(target)} ({other})")
    assert not bad, "imports up the layers of docs/ARCHITECTURE.md:\n" + "\n".join(bad)


def test_the_layer_table_names_every_place():
    places = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert places == set(LAYERS)


MODULE_LINES = 450      # a module longer than this holds more than one concern


def test_every_module_has_a_docstring_and_stays_short():
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text, tree = _parsed(path)
        lines = len(text.splitlines())
        if lines > MODULE_LINES:
            bad.append(f"{path.relative_to(ROOT)}: {lines} lines")
        if path.name != "__init__.py" and ast.get_docstring(tree) is None:
            bad.append(f"{path.relative_to(ROOT)}: no docstring")
    assert not bad, "modules to split or describe:\n" + "\n".join(bad)


SHARED = re.compile(r"/work/shared|\.\./shared")


def _tracked_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [ROOT / f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are not known")


def test_no_file_names_the_shared_folder():
    bad = []
    for path in _tracked_files():
        if path.suffix in (".csv", ".png", ".jsonl") or not path.is_file() or path == Path(__file__):
            continue
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        bad += [f"{path.relative_to(ROOT)}:{n}" for n, line in enumerate(text.splitlines(), 1) if SHARED.search(line)]
    assert not bad, "files that name a folder outside the repo (copy the data in, with its source):\n" + \
        "\n".join(bad)
