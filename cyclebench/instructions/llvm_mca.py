"""llvm-mca's prediction for a form: latency and reciprocal throughput from LLVM's model of a core.

Two views, both from ``llvm-mca-16 -mcpu=CPU`` (Debian package llvm-16; setup.sh installs it), where
CPU is the running core's ``-mcpu`` from the microarchitecture table (machine/uarch.py) unless given:

* **model** -- the ``-instruction-info`` table of one instance: ``Latency`` (LLVM's latency of
  the instruction's slowest definition), ``RThroughput`` and ``#uOps``.  This is what the
  scheduling model *says*.
* **simulated** -- what llvm-mca's pipeline simulation makes of the same code the timing layer
  will run (``-iterations=N``, ``Total Cycles`` / (N x copies)):
  ``throughput`` from :func:`copies.independent_copies` (8 copies, no dependencies between
  them); ``latency`` from :func:`instantiate.chain` for one latency pair (one instruction whose
  output feeds its own input next iteration), i.e. cycles per link of the dependency chain.

GNU-only pseudo-prefixes (``{load}``/``{store}``) are dropped for LLVM's assembler (they pick
between two encodings of the same operation, which LLVM models alike); a ``.byte`` fallback
instance is given to llvm-mca as its mnemonic text.  When llvm-mca is not installed,
:class:`LlvmMcaUnavailable` says so and how to install it.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from ..errors import UsageError
from ..textfile import quote
from .forms import Form
from .instantiate import Instance, LatencyPair, chain, instantiate
from .copies import independent_copies

CANDIDATES = ("llvm-mca-16", "llvm-mca")


def own_mcpu() -> str:
    """llvm's -mcpu for the running core, from the microarchitecture table (a usage error when the
    core is unknown: no other core's model is guessed)."""
    from ..machine.uarch import this_machine
    ident = this_machine()
    if ident.uarch is None:
        raise UsageError(f"this CPU is not in the microarchitecture table ({ident.name}), so its llvm "
                         "-mcpu is not known", "give one, e.g. --mcpu znver4 or --mcpu sapphirerapids")
    return ident.uarch.llvm_mcpu


class LlvmMcaUnavailable(UsageError):
    """llvm-mca was asked for but is not installed (exit code 2: a request this machine can't do)."""


class LlvmMcaFailed(UsageError):
    """llvm-mca rejected the code (an instruction LLVM's assembler or the model does not know)."""


def find_llvm_mca(path: str | None = None) -> str:
    for cand in ((path,) if path else CANDIDATES):
        found = shutil.which(cand) if cand else None
        if found:
            return found
    raise LlvmMcaUnavailable(
        "llvm-mca is not installed (looked for " + ", ".join((path,) if path else CANDIDATES) + ")",
        hint="apt-get install llvm-16 (setup.sh does this), or pass the llvm-mca path")


def check_mcpu(mcpu: str, llvm_mca: str | None = None) -> None:
    """Refuse, before anything is measured, a -mcpu llvm-mca does not know: it would predict every
    block with no model at all (each prediction failing after its measurement)."""
    exe = find_llvm_mca(llvm_mca)
    p = subprocess.run([exe, f"-mcpu={mcpu}", "-iterations=1", "-"], input=".intel_syntax noprefix\nnop\n",
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or "not a recognized processor" in p.stderr:
        raise UsageError(f"llvm-mca does not know the CPU '{quote(mcpu, 40)}'",
                         f"e.g. --mcpu znver4 or --mcpu sapphirerapids ({os.path.basename(exe)} -mcpu=help lists them)")


def llvm_text(inst: Instance) -> str:
    """The instance as LLVM's assembler accepts it."""
    text = inst.text
    if inst.via_bytes and "#" in text:
        text = text.split("#", 1)[1].strip()
        if inst.form.encoding == "EVEX" and not text.startswith("{evex}"):
            text = "{evex} " + text
    return re.sub(r"\{(load|store)\}\s*", "", text).strip()


@dataclass
class McaRun:
    iterations: int
    instructions: int
    total_cycles: int
    total_uops: int
    block_rthroughput: float | None
    table: list[tuple[int, float, float, str]]   # (#uOps, latency, rthroughput, text) per line

    @property
    def cycles_per_iteration(self) -> float:
        return self.total_cycles / self.iterations


def run(code: str, mcpu: str | None = None, iterations: int = 1000, llvm_mca: str | None = None,
        timeout: float = 60.0) -> McaRun:
    """Run llvm-mca on Intel-syntax ``code`` (newline separated) and parse its summary."""
    exe = find_llvm_mca(llvm_mca)
    mcpu = mcpu or own_mcpu()
    with tempfile.TemporaryDirectory(prefix="cb-mca-") as d:
        src = os.path.join(d, "in.s")
        with open(src, "w") as f:
            f.write(".intel_syntax noprefix\n" + code.strip() + "\n")
        p = subprocess.run([exe, f"-mcpu={mcpu}", f"-iterations={iterations}", "-instruction-info",
                            src], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0 or "error:" in p.stderr:
        first = next((ln for ln in p.stderr.splitlines() if "error" in ln), p.stderr.strip())
        raise LlvmMcaFailed(f"llvm-mca rejected the code: {first.split('error:', 1)[-1].strip()}",
                            hint=f"code was: {code.strip().splitlines()[0]}")
    return parse_output(p.stdout)


def parse_output(out: str) -> McaRun:
    def num(key, cast=int, default=None):
        m = re.search(rf"^{re.escape(key)}:\s*([0-9.]+)", out, re.M)
        return cast(m.group(1)) if m else default
    table = []
    in_table = False
    for line in out.splitlines():
        if line.startswith("[1]    [2]    [3]"):
            in_table = True
            continue
        if in_table:
            if not line.strip():
                break
            m = re.match(r"^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+(.*)$", line)
            if m:
                rest = re.sub(r"^(\s*\*|\s*U)*\s*", "", m.group(4))
                table.append((int(m.group(1)), float(m.group(2)), float(m.group(3)), rest.strip()))
    return McaRun(iterations=num("Iterations"), instructions=num("Instructions"),
                  total_cycles=num("Total Cycles"), total_uops=num("Total uOps"),
                  block_rthroughput=num("Block RThroughput", float), table=table)


@dataclass
class Prediction:
    form: str
    mcpu: str
    uops: int | None                  # model: #uOps
    latency: float | None             # model: Latency column
    rthroughput: float | None         # model: RThroughput column
    simulated_throughput: float | None   # cycles per instruction over independent copies
    simulated_latency: dict[str, float]  # pair label -> cycles per chain link


def predict(form: Form, mcpu: str | None = None, copies: int = 8, iterations: int = 1000,
            pairs: list[LatencyPair] | None = None, llvm_mca: str | None = None) -> Prediction:
    """llvm-mca's view of ``form`` (see the module docstring for what each number is).
    ``pairs``: latency pairs to simulate as chains (default: none, only the model latency)."""
    mcpu = mcpu or own_mcpu()
    one = instantiate(form)
    model = run(llvm_text(one), mcpu, iterations=100, llvm_mca=llvm_mca)
    row = model.table[0] if model.table else None
    cps = independent_copies(form, copies)
    sim = run("\n".join(llvm_text(i) for i in cps.instances), mcpu, iterations, llvm_mca)
    lat = {}
    for pair in pairs or []:
        inst = chain(form, pair)
        if inst is not None:
            r = run(llvm_text(inst), mcpu, iterations, llvm_mca)
            lat[str(pair)] = r.cycles_per_iteration
    return Prediction(form=form.name, mcpu=mcpu, uops=row[0] if row else None,
                      latency=row[1] if row else None, rthroughput=row[2] if row else None,
                      simulated_throughput=sim.total_cycles / (iterations * copies),
                      simulated_latency=lat)
