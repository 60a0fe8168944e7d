"""Throughput predictors for a block, behind one interface.

A predictor has a ``name`` and ``predict(code) -> float`` (cycles per iteration of the block's
bytes, final branch already dropped) and raises ``PredictionFailed`` with the reason when it has
none. ``PREDICTORS`` maps a command-line name to a factory; adding one (``cyclebench predict``'s
resource model) is one line there.

``predict``: ``cyclebench predict``'s figure (a scheduling simulation over the model that
``cyclebench ports`` inferred, never below its resource and dependency-chain bounds;
``--ports-model FILE``, optionally ``--latencies FILE``).

``llvm-mca``: the bytes are disassembled by LLVM itself (``llvm-mc --disassemble``, Intel syntax)
so that LLVM's assembler reads back what its disassembler wrote, then ``llvm-mca -mcpu=CPU``
simulates ITERATIONS iterations; the prediction is Total Cycles / iterations. CPU is this core's
from the microarchitecture table (llvm_mca.own_mcpu, as ``cyclebench inst`` and the benches name
it), unless given.
"""
from __future__ import annotations

import shutil
import subprocess
from typing import Callable, Protocol

from ..errors import UsageError
from ..instructions import llvm_mca

ITERATIONS = 200
MC_CANDIDATES = ("llvm-mc-16", "llvm-mc")


class PredictionFailed(Exception):
    """The predictor has no figure for this block (the message says why)."""


class Predictor(Protocol):
    name: str

    def predict(self, code: bytes) -> float: ...


class LlvmMca:
    def __init__(self, mcpu: str | None = None, iterations: int = ITERATIONS):
        self.exe = llvm_mca.find_llvm_mca()
        mc = next((shutil.which(c) for c in MC_CANDIDATES if shutil.which(c)), None)
        if not mc:
            raise llvm_mca.LlvmMcaUnavailable("llvm-mc (LLVM's disassembler) is not installed",
                                              "apt-get install llvm-16 (setup.sh does this)")
        self.mc = mc
        if mcpu:
            llvm_mca.check_mcpu(mcpu, self.exe)         # before any block is measured
        self.mcpu = mcpu or llvm_mca.own_mcpu()
        self.iterations = iterations
        self.name = f"llvm-mca-16 ({self.mcpu})" if "16" in self.exe else f"llvm-mca ({self.mcpu})"

    def text(self, code: bytes) -> str:
        p = subprocess.run([self.mc, "--disassemble", "-triple=x86_64", "--output-asm-variant=1"],
                           input=" ".join(f"0x{b:02x}" for b in code), capture_output=True, text=True, timeout=30)
        lines = [ln.strip() for ln in p.stdout.splitlines() if ln.strip() and not ln.strip().startswith(".")]
        if p.returncode != 0 or "invalid instruction" in p.stderr or not lines:
            raise PredictionFailed("LLVM cannot disassemble the block")
        return "\n".join(lines)

    def predict(self, code: bytes) -> float:
        try:
            run = llvm_mca.run(self.text(code), self.mcpu, iterations=self.iterations, llvm_mca=self.exe)
        except UsageError as e:
            raise PredictionFailed(e.cause) from None
        except subprocess.TimeoutExpired:
            raise PredictionFailed("llvm-mca did not finish") from None
        if not run.iterations or run.total_cycles is None:
            raise PredictionFailed("llvm-mca printed no summary")
        return run.cycles_per_iteration


class ResourceModel:
    """``cyclebench predict``: the resource model ``cyclebench ports`` inferred (its results file,
    or several of one CPU: the mean of their figures, ensemble.py), with latencies from a uops.info
    CSV or an inst results file (else 1 cycle each)."""

    def __init__(self, model=None, latencies: str | None = None):
        from pathlib import Path
        from ..instructions.catalogue import Catalogue
        from ..instructions.ports.ensemble import Models
        from ..instructions.ports.latency import from_file
        if not model:
            raise UsageError("the predictor 'predict' needs the resource model",
                             "give --ports-model FILE (the results file of cyclebench ports)")
        self.models = Models.load([model] if isinstance(model, (str, Path)) else model)
        self.catalogue = Catalogue.load()
        self.latencies, self.label = from_file(Path(latencies), self.catalogue) if latencies else (None, "")
        self.name = "cyclebench predict"
        if self.models.of_this_cpu() is False:     # a figure of another core beside this one's measurement
            from ..machine.metadata import cpu_text
            self.name += f" (a model of another CPU: {cpu_text(self.models.machine)})"

    def predict(self, code: bytes) -> float:
        try:       # each file's own probe records: the upper-state factor, the in-flight limit, ...
            p = self.models.predict(code, self.catalogue, self.latencies, self.label)
        except UsageError as e:
            raise PredictionFailed(e.cause) from None
        if p.unknown:           # its figure would be a lower bound beside measurements: none is given
            from ..instructions.ports.ensemble import lacking
            raise PredictionFailed(f"the model lacks {lacking(p)}")
        return p.cycles


PREDICTORS: dict[str, Callable[..., Predictor]] = {
    "llvm-mca": LlvmMca,
    "predict": ResourceModel,
}


def make(name: str, **kw) -> Predictor:
    if name not in PREDICTORS:
        raise UsageError(f"unknown predictor {name!r}", "one of: " + ", ".join(PREDICTORS))
    return PREDICTORS[name](**kw)


def predict_all(predictor: Predictor, docs: list[dict]) -> dict[str, float | str]:
    """hex -> predicted cycles per iteration, or the reason there is none (blocks that were
    measured, with their final branch dropped as in the measurement)."""
    from .code import block
    out: dict[str, float | str] = {}
    for d in docs:
        if d.get("status") != "ok" or d["hex"] in out:
            continue
        try:
            out[d["hex"]] = predictor.predict(block(bytes.fromhex(d["hex"])).code)
        except PredictionFailed as e:
            out[d["hex"]] = str(e)
    return out
