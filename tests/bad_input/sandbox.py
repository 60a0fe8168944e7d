"""Snippets the sandbox refuses (cyclebench/runner/cb_runner.c, install_sandbox), and the options around it.

The fork case lives in tests/test_sandbox.py, which first checks that a harmless forbidden call is
refused and runs fork only under a pids cgroup."""
from bad_input import Case

MKDIR = "mov eax, 83; mov rdi, r14; syscall"          # mkdir(""): harmless, refused
WRITE_STDOUT = "mov eax, 1; mov edi, 1; mov rsi, r14; mov edx, 1; syscall"
SOCKET = "mov eax, 41; mov edi, 2; mov esi, 1; xor edx, edx; syscall"
KILL_INIT = "mov eax, 62; mov edi, 1; xor esi, esi; syscall"   # kill(1, 0): signal 0 only probes
PATH_INIT = "mov rax, 0x78782f706d742f; mov [r14], rax"         # "/tmp/xx"
OPEN_WRITE = "mov edi, -100; mov rsi, r14; mov edx, 0x41; mov eax, 257; syscall"  # O_WRONLY|O_CREAT
REFUSED = r"which the sandbox forbids"

CASES = [
    Case("sandbox-mkdir", ["asm", "-n", "3", MKDIR], 5, r"system call mkdir \(83\) in 'syscall' \(code\), " + REFUSED,
         r"side-effect-free calls \(getpid.*--allow-syscalls"),
    Case("sandbox-mkdir-in-init", ["asm", "-n", "3", "--init", MKDIR, "nop"], 5, r"mkdir \(83\) in 'syscall' \(init\)",
         r"--allow-syscalls"),
    # the runner's own calls (write, read, ioctl, mprotect) are not open to the snippet
    Case("sandbox-write-stdout", ["asm", "-n", "3", WRITE_STDOUT], 5, r"system call write \(1\)", r"getpid"),
    Case("sandbox-int80", ["asm", "-n", "3", "mov eax, 20; int 0x80"], 5,
         r"getpid \(20\) of the 32-bit x86 \(int 0x80\) ABI in 'int 0x80'", r"--allow-syscalls"),
    Case("sandbox-allow-socket", ["asm", "-n", "3", "--allow-syscalls", SOCKET], 5, r"system call socket \(41\)",
         r"even with --allow-syscalls .*sockets"),
    Case("sandbox-allow-kill-other", ["asm", "-n", "3", "--allow-syscalls", KILL_INIT], 5,
         r"system call kill \(62\)", r"signals to other processes"),
    Case("sandbox-allow-open-write", ["asm", "-n", "3", "--allow-syscalls", "--init", PATH_INIT, OPEN_WRITE], 5,
         r"system call openat \(257\)", r"opening files for writing"),
    Case("sandbox-allow-mkdir", ["asm", "-n", "3", "--allow-syscalls", MKDIR], 5, r"mkdir \(83\)",
         r"file-system changes"),
    # the address-space cap: mmap(8 GiB) fails with ENOMEM, and the store to rax = -12 faults
    Case("sandbox-memory-cap", ["asm", "-n", "3", "--unroll", "1", "--loop", "1", "--allow-syscalls",
                                "xor edi, edi; mov rsi, 0x200000000; mov edx, 3; mov r10d, 0x4022; mov r8, -1; "
                                "xor r9d, r9d; mov eax, 9; syscall; mov byte ptr [rax], 1"],
         5, r"segmentation fault .* at address 0xfffffffffffffff4", r""),
    Case("sandbox-max-memory-too-small", ["asm", "--max-memory", "64M", "--r14-size", "128M", "nop"], 2,
         r"needs \d+ MiB before the code runs, more than the address-space cap of 64 MiB", r"raise --max-memory"),
    Case("sandbox-max-memory-not-a-size", ["asm", "--max-memory", "lots", "nop"], 2, r"not a size", r""),
]
