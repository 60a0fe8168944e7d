"""Offsets in the runner's control block (struct ctl in cb_runner.c). ``cb-runner --layout``
prints the compiled offsets; tests/test_runner_protocol.py checks them against these. The
generated code addresses these fields RIP-relative as ``cb_ctl + offset``."""
SAVED_RSP = 0
LOOP_COUNT = 8
REG_INIT = {"r14": 16, "rdi": 24, "rsi": 32, "rbp": 40, "rsp": 48}
SCRATCH = 56            # 8 slots: registers saved around counter reads, and MXCSR
READ_FD = 120
READ_SIZE = 128
READ_RET = 136
DATA_PTR = 144
DATA_SIZE = 152
SYM = 160               # 16 symbol addresses
MAX_SYMS = 16
TSC_START = 288
TSC_END = 296
GRP_START = 304         # read() buffer: nr, time_enabled, time_running, then values
GRP_END = 456
GRP_HEADER = 3          # qwords before the values
PMC_IDX = 608
PMC_START = 736
PMC_END = 864
SYS_TOKEN = 992        # the runner's secret for its own system calls (the harness's read())
FP_STATUS = 1000       # MXCSR, then the x87 status word at +4, as a run left them: the code's floating-point flags
SIZE = 1008
MAX_EVENTS = 16         # per group


def field(offset: int) -> str:
    """Memory operand for a control-block field."""
    return f"qword ptr [rip + cb_ctl + {offset}]"


def dfield(offset: int) -> str:
    return f"dword ptr [rip + cb_ctl + {offset}]"
