"""Hostile snippets that try to act outside the sandbox, or to forge the runner's output, built as
assembly here. Each must be refused with exit 5 and leave no trace: nothing created (checked after
the run), no byte pushed into the terminal (the TIOCSTI rows run under a pty of their own).

See docs/safety.md for what ``--allow-syscalls`` still refuses and why."""
import os
import signal

from bad_input import Case

ALLOW = ["asm", "-n", "2", "--allow-syscalls"]
# R9 = the token in the runner's control block (layout.SYS_TOKEN), found the way hostile code would:
# the block starts a page (codegen.py), and its REG_INIT rsp (offset 48) is RSP as one-time-init starts
FIND_TOKEN = ("mov rbx, rsp; lea rax, [rip + 0]; and rax, -4096; 4: cmp qword ptr [rax + 48], rbx; je 5f; "
              "add rax, 4096; jmp 4b; 5: mov r9, qword ptr [rax + 992]")
REFUSED = r"which the sandbox forbids"


def store_string(text: str, offset: int = 256) -> str:
    """Statements that write ``text`` (NUL-terminated) at [r14 + offset]."""
    data = text.encode() + b"\0"
    data += b"\0" * (-len(data) % 8)
    return "; ".join(f"mov rax, {int.from_bytes(data[i:i + 8], 'little'):#x}; mov qword ptr [r14 + {offset + i}], rax"
                     for i in range(0, len(data), 8))


def io_uring_mkdir(path: str) -> str:
    """io_uring_setup, map the rings, queue one IORING_OP_MKDIRAT (37) of ``path``, io_uring_enter:
    the kernel would make the folder without the filter ever seeing a mkdir."""
    return "; ".join([
        store_string(path),
        "mov edi, 4; mov rsi, r14; mov eax, 425; syscall; mov r15, rax",            # io_uring_setup(4, params)
        "mov esi, dword ptr [r14 + 64]; mov eax, dword ptr [r14]; lea rsi, [rsi + rax*4]",   # sq_off.array + 4 n
        "xor edi, edi; mov edx, 3; mov r10d, 0x8001; mov r8, r15; xor r9d, r9d; mov eax, 9; syscall; mov r12, rax",
        "xor edi, edi; mov esi, 4096; mov edx, 3; mov r10d, 0x8001; mov r8, r15; mov r9d, 0x10000000",
        "mov eax, 9; syscall; mov r13, rax",                                       # the SQE array
        "mov byte ptr [r13], 37; mov dword ptr [r13 + 4], -100; lea rax, [r14 + 256]; mov [r13 + 16], rax",
        "mov dword ptr [r13 + 24], 0x1ed",
        "mov eax, dword ptr [r14 + 64]; mov dword ptr [r12 + rax], 0",             # array[0] = SQE 0
        "mov eax, dword ptr [r14 + 44]; inc dword ptr [r12 + rax]",                # tail += 1
        "mov rdi, r15; mov esi, 1; mov edx, 1; mov r10d, 1; xor r8d, r8d; xor r9d, r9d; mov eax, 426; syscall",
    ])


def tiocsti(path: str, token: bool = False) -> str:
    """open(path, O_RDONLY), then ioctl(fd, TIOCSTI, &c) for each byte of a shell command."""
    return "; ".join([
        FIND_TOKEN if token else "nop",
        store_string(path), "mov eax, 2; lea rdi, [r14 + 256]; xor esi, esi; xor edx, edx; syscall; mov r15, rax",
        store_string("echo INJECTED\n", 512), "lea r12, [r14 + 512]",
        "2: movzx eax, byte ptr [r12]; test eax, eax; jz 3f",
        "mov rdi, r15; mov esi, 0x5412; mov rdx, r12; mov eax, 16; syscall",
        "inc r12; jmp 2b; 3:",
    ])


def _nothing_made(name: str):
    def check(tmp: str) -> None:
        assert not os.path.exists(os.path.join(tmp, name)), f"{name} was created"
    return check


def _fifo(tmp: str) -> None:
    os.mkfifo(os.path.join(tmp, "fifo"))


WRITE_HELLO = store_string("HELLO\n") + "; mov edi, {fd}; lea rsi, [r14 + 256]; mov edx, 6; mov eax, 1; syscall"
FORGED = store_string("sample 0 a 1\n")
SPIN_SIGNALS_BLOCKED = ("mov qword ptr [r14], -1; xor edi, edi; mov rsi, r14; xor edx, edx; mov r10d, 8; "
                        "mov eax, 14; syscall; 2: jmp 2b")                       # rt_sigprocmask(SIG_BLOCK, all)
MACRO_INCBIN = '.macro m x; .inc\\()bin "\\x"; .endm; m {tmp}/fifo'

CASES = [
    # io_uring and AIO carry out operations the filter never sees: refused in every mode
    Case("escape-io-uring-mkdirat", ALLOW + ["--one-time-init", lambda tmp, _: io_uring_mkdir(f"{tmp}/made"), "nop"],
         5, r"system call io_uring_setup \(425\) in 'syscall' \(one-time-init\), " + REFUSED, r"io_uring",
         after=_nothing_made("made")),
    Case("escape-io-uring-default-mode", ["asm", "-n", "2", "--one-time-init",
                                          lambda tmp, _: io_uring_mkdir(f"{tmp}/made"), "nop"],
         5, r"io_uring_setup \(425\)", r"side-effect-free", after=_nothing_made("made")),
    Case("escape-aio", ALLOW + ["mov edi, 1; mov rsi, r14; mov eax, 206; syscall"], 5, r"io_setup \(206\)",
         r"io_uring and AIO"),
    # TIOCSTI: the runner has no controlling terminal, and the ioctl is refused on any terminal
    Case("escape-tiocsti-dev-tty", ALLOW + ["--one-time-init", tiocsti("/dev/tty"), "nop"], 5,
         r"ioctl \(16\) in 'syscall' \(one-time-init\)", r"ioctl", tty=True),
    Case("escape-tiocsti-by-path", ALLOW + ["--one-time-init", lambda _, tty: tiocsti(tty), "nop"], 5,
         r"ioctl \(16\)", r"ioctl", tty=True),
    Case("escape-tiocsti-with-token", ALLOW + ["--one-time-init", lambda _, tty: tiocsti(tty, token=True), "nop"],
         5, r"ioctl \(16\)", r"ioctl", tty=True),
    Case("escape-tioclinux-with-token", ALLOW + ["--one-time-init", f"{FIND_TOKEN}; xor edi, edi; mov esi, 0x541c; "
                                                 "mov rdx, r14; mov eax, 16; syscall", "nop"],
         5, r"ioctl \(16\)", r"ioctl"),
    # the protocol is on a private pipe: output of the snippet is refused or reported, never read
    Case("hijack-write-stdout", ALLOW + [WRITE_HELLO.format(fd=1)], 5, r"system call write \(1\) in 'syscall'",
         r"writing to the runner's output"),
    Case("hijack-write-stderr", ALLOW + [WRITE_HELLO.format(fd=2)], 5, r"system call write \(1\)",
         r"writing to the runner's output"),
    Case("hijack-dup-stdout", ALLOW + [f"{FORGED}; mov edi, 1; mov eax, 32; syscall; mov edi, eax; "
                                       "lea rsi, [r14 + 256]; mov edx, 13; mov eax, 1; syscall"],
         5, r"wrote to the runner's standard output or error \('sample 0 a 1'", r"must not print"),
    Case("hijack-protocol-fd-scan", ALLOW + ["--one-time-init", f"{FORGED}; mov r12d, 3; 2: mov edi, r12d; "
                                             "lea rsi, [r14 + 256]; mov edx, 13; mov eax, 1; syscall; inc r12d; "
                                             "cmp r12d, 1024; jb 2b", "nop"],
         5, r"system call write \(1\) in 'syscall' \(one-time-init\)", r"writing to the runner's output"),
    # the token in the control block opens read() only: a snippet that finds it still cannot write
    Case("hijack-stolen-token-write", ["asm", "-n", "2", "--one-time-init",
                                       f"{FIND_TOKEN}; {FORGED}; mov edi, 1; lea rsi, [r14 + 256]; mov edx, 13; "
                                       "mov eax, 1; syscall", "nop"],
         5, r"system call write \(1\) in 'syscall' \(one-time-init\)", r"side-effect-free"),
    Case("hijack-close-protocol-fd", ALLOW + ["mov edi, 3; mov esi, -1; xor edx, edx; mov eax, 436; syscall"], 5,
         r"close_range \(436\)", r""),
    # a snippet that blocks the timer signals is stopped by its CPU-time limit: a timeout
    Case("timeout-signals-blocked", ALLOW + ["--timeout", "1", "--one-time-init", SPIN_SIGNALS_BLOCKED, "nop"],
         6, r"did not finish within 1 s", r"raise --timeout", timeout=30),
    # the assembler: a FIFO read through a macro fails in seconds, not minutes
    Case("as-fifo-through-macro", ["asm", MACRO_INCBIN], 3, r"assembler waited 2 s for input .*FIFO",
         r"cannot read files", setup=_fifo, subprocess=True, timeout=30),
    Case("code-file-fifo", ["asm", "--code-file", "{tmp}/fifo"], 2, r"code file .*/fifo is empty \(a FIFO",
         r"raw x86-64 machine code", setup=_fifo),
    # temporary files go on Ctrl-C and SIGTERM, with a runner or an assembler in flight
    Case("sigint-removes-temporary-files", ["asm", "--timeout", "60", "-n", "2", "1: jmp 1b"], 130,
         r"interrupted", signal=signal.SIGINT, signal_when="cyclebench-*.bin", timeout=60),
    Case("sigterm-removes-temporary-files", ["asm", "--timeout", "60", "-n", "2", "1: jmp 1b"], 143,
         r"terminated", signal=signal.SIGTERM, signal_when="cyclebench-*.bin", timeout=60),
    Case("sigterm-during-the-assembler", ["asm", MACRO_INCBIN], 143, r"terminated", setup=_fifo,
         signal=signal.SIGTERM, signal_when="cyclebench-*/code.s", timeout=60),
]
