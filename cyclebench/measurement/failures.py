"""Runner failures as user-facing errors: faults, timeouts and sandbox refusals mapped back to the
user's statement, with a hint."""
from __future__ import annotations

from ..errors import (AssemblyError, CounterUnavailable, SnippetFault, SnippetTimeout,
                      UnsupportedInstruction, UsageError)
from ..harness.locate import locate
from ..textfile import quote
from ..snippet.features import decode

AREA_NAMES = ("R14", "RDI", "RSI", "RBP", "RSP", "data")


ALLOWED_EXAMPLES = "getpid, gettid, clock_gettime, sched_yield, ..."
# refused even with --allow-syscalls (cyclebench/runner/cb_runner.c, refused_calls and the argument rules)
ALWAYS_REFUSED = ("process creation and exec, signals to other processes, ptrace, sockets, opening files for "
                  "writing and other file-system changes, io_uring and AIO, ioctl, writing to the runner's "
                  "output, and machine-wide settings (docs/safety.md)")


def raise_for(out, obj, parts, timeout, allow_syscalls=False):
    """Raise the user-facing error for a runner that failed; return if it finished."""
    err = out.error or {}
    kind = out.error_kind
    if out.stray and kind != "syscall":
        raise _stray_output(out.stray)
    if out.returncode == 0 and out.done:
        return
    where = None
    if "rip_off" in err:
        where = locate(int(err["rip_off"], 16), obj.symbols, parts)
    stmt = f"'{quote(where[1])}' ({where[0].replace('_', '-')})" if where else "the generated harness code"
    if kind == "syscall":
        raise _sandbox_refusal(err, stmt, allow_syscalls)
    if kind == "memory":
        raise UsageError(f"the runner needs {int(err.get('need', 0)) >> 20} MiB before the code runs, more than "
                         f"the address-space cap of {int(err.get('max', 0)) >> 20} MiB",
                         "raise --max-memory (bytes, e.g. 8G), or use smaller --r14-size / data")
    if kind == "sandbox":
        raise UsageError(f"the sandbox could not be installed: {err.get('message', '')}",
                         "the kernel needs seccomp filters (CONFIG_SECCOMP_FILTER); rebuild the runner: bash setup.sh")
    if kind == "signal":
        sig = err.get("sig")
        if sig == "ILL":
            off = int(err.get("rip_off", "0x0"), 16)
            decoded = decode(obj.blob[off:off + 15], off)[:1] if "rip_off" in err else []
            if decoded and decoded[0].text.split()[0] in ("ud0", "ud1", "ud2"):
                raise UnsupportedInstruction(f"{stmt} raised SIGILL: {decoded[0].text.split()[0]} is undefined on purpose",
                                             "remove it from the measured code")
            feats = ", ".join(decoded[0].features) if decoded else "unknown"
            raise UnsupportedInstruction(f"instruction not supported by this CPU: {stmt} raised SIGILL (#UD)",
                                         f"it needs CPUID features {feats}; the CPU or the hypervisor does not offer it")
        if sig == "FPE":
            _fpe(err, stmt)
        if sig == "SEGV" and "rip_off" in err and _privileged(obj.blob, int(err["rip_off"], 16)):
            name = _privileged(obj.blob, int(err["rip_off"], 16))
            raise SnippetFault(f"privileged instruction in {stmt}: {name} runs only in the kernel (or needs I/O "
                               "privilege), and user code gets a general-protection fault",
                               "remove it from the measured code; it cannot be timed from user space")
        if sig in ("SEGV", "BUS"):
            raise SnippetFault(f"{'segmentation fault' if sig == 'SEGV' else 'bus error'} in {stmt} "
                               f"at address {int(err.get('addr', '0x0'), 16):#x}", memory_hint(err, out.areas))
        if sig == "TRAP":
            raise SnippetFault(f"breakpoint or trap (SIGTRAP) in {stmt}", "remove int3 / the trap flag from the code")
        raise SnippetFault(f"the measured code raised SIG{sig} in {stmt}", "check the code's memory accesses")
    if kind == "timeout":
        # repetitions already printed: the code does finish, their number times the loop is the cause
        done = len(out.samples.get("b", []))
        if done:
            loop = f" at loop {out.info['loop'][0]}" if out.info.get("loop") else ""
            raise SnippetTimeout(f"the measurement did not finish within {timeout:g} s: the code runs ({done} "
                                 f"repetitions{loop} were done), but -n repetitions of it take longer",
                                 "-n (repetitions) x the loop is too much work for --timeout: lower -n, --loop "
                                 "or --unroll, or raise --timeout")
        raise SnippetTimeout(f"the measured code did not finish within {timeout:g} s (it was in {stmt})",
                             "an infinite loop? If it is just slow, raise --timeout, or lower -n (repetitions), "
                             "--loop or --unroll")
    if kind == "counter":
        raise CounterUnavailable(f"counter error in the runner: {err.get('message', '')}",
                                 "try --counters tsc, or check perf_event_paranoid")
    if kind in ("load", "symbol"):
        raise AssemblyError(f"cannot load the code: {err.get('message', '')}",
                            "check --symbol / --library names and that the shared object exists")
    if kind == "usage":
        raise UsageError(f"runner rejected the parameters: {err.get('message', '')}", "see cyclebench asm --help")
    if out.returncode == -9 and out.elapsed >= timeout > 0:
        # the runner's timer signals were blocked by the code: its CPU-time limit killed it
        raise SnippetTimeout(f"the measured code did not finish within {timeout:g} s and was killed at its "
                             "CPU-time limit (it had blocked the timer signals)",
                             "an infinite loop? Code that blocks signals cannot be stopped gently; if it is "
                             "just slow, raise --timeout")
    if out.returncode < 0:
        raise SnippetFault(f"the runner was killed by signal {-out.returncode}",
                           "the code may have used too much memory, or something killed the process")
    raise SnippetFault(f"the measured code ended the runner process (exit status {out.returncode}) "
                       "before the measurement finished",
                       "measured code must not call exit/exec or close the runner's files")


def _privileged(blob: bytes, off: int) -> str | None:
    """The mnemonic of the instruction at ``off`` if it needs ring 0 (hlt, rdmsr) or may need I/O
    privilege (cli, in, out), else None."""
    import iced_x86
    ins = next(iter(iced_x86.Decoder(64, blob[off:off + 15])), None)
    if ins is None or ins.code == iced_x86.Code.INVALID:
        return None
    op = ins.op_code()
    if op.is_privileged or op.may_require_cpl0 or op.must_be_cpl0:
        return iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL).format_mnemonic(ins)
    return None


def _stray_output(text: str) -> SnippetFault:
    first = text.strip().splitlines()[0] if text.strip() else repr(text[:20])
    return SnippetFault(f"the measured code wrote to the runner's standard output or error ('{quote(first, 60)}'"
                        f"{' ...' if len(text.strip().splitlines()) > 1 else ''}); its output is not used and "
                        "the run is discarded",
                        "measured code must not print: remove the write (or the library call that prints)")


def memory_hint(err, areas) -> str:
    addr = int(err.get("addr", "0x0"), 16)
    if int(err.get("code", "0x0"), 16) == 0x80 or (addr == 0 and err.get("code") == "0x80"):
        return ("general-protection fault: a non-canonical address, or an unaligned operand for an "
                "instruction that needs alignment (movaps, movdqa, vmovaps ...)")
    if addr < 4096 * 16:
        return ("address near zero: only R14, RDI, RSI, RBP and RSP point to memory (the middle of 1 MB "
                "areas); other registers start at 0. Set pointers in --init")
    for idx, (lo, hi) in areas.items():
        name = AREA_NAMES[idx]
        if lo - (1 << 20) <= addr < lo:
            return f"{lo - addr} bytes below the {name} area [{lo:#x}, {hi:#x}); {name} starts at its middle"
        if hi <= addr < hi + (1 << 20):
            return f"{addr - hi} bytes past the end of the {name} area [{lo:#x}, {hi:#x}); {name} starts at its middle"
    return ("not in any memory area: R14, RDI, RSI, RBP and RSP point to the middle of 1 MB areas "
            "(the R14 area size can be raised with --r14-size)")


def _sandbox_refusal(err, stmt, allow_syscalls) -> SnippetFault:
    from ..machine import syscalls      # ctypes and libseccomp: only a refused system call needs them
    nr = int(err.get("nr", "0x0"), 16)
    arch = int(err.get("arch", "0x0"), 16)
    name = syscalls.name(nr, arch) or "unknown"
    where = stmt if "rip_off" in err else "code outside the generated code (a library or routine it called)"
    abi = "" if arch == syscalls.AUDIT_ARCH_X86_64 else f" of the {syscalls.ARCH_NAMES.get(arch, hex(arch))} ABI"
    cause = f"the snippet made the system call {name} ({nr}){abi} in {where}, which the sandbox forbids"
    if allow_syscalls:
        hint = f"even with --allow-syscalls the sandbox refuses {ALWAYS_REFUSED}"
    else:
        hint = f"only side-effect-free calls ({ALLOWED_EXAMPLES}) may be timed; see --allow-syscalls"
    return SnippetFault(cause, hint)


# si_code of a SIGFPE (Linux, asm-generic/siginfo.h): an integer divide's #DE is FPE_INTDIV; a
# floating-point exception (x87 or SIMD #XM) is one of FPE_FLTDIV..FPE_FLTSUB, delivered only where
# the code unmasked it (the harness starts with every exception masked: docs/asm.md)
_FLOAT_FPE = {3: "divide by zero", 4: "overflow", 5: "underflow or a denormal operand", 6: "inexact result",
              7: "invalid operation", 8: "subscript out of range"}


def _fpe(err: dict, stmt: str):
    code = int(err.get("code", "0x1"), 16)
    if code in _FLOAT_FPE:
        raise SnippetFault(f"floating-point exception ({_FLOAT_FPE[code]}) in {stmt}: the code or its init "
                           "unmasked it in MXCSR or the x87 control word",
                           "keep the exceptions masked (MXCSR 0x1F80, fninit) unless the fault is what you test")
    raise SnippetFault(f"division error (#DE) in {stmt}: divide by zero, or a quotient too big for the destination",
                       "set the divisor in --init, e.g. 'mov rcx, 7', and zero rdx before div")
