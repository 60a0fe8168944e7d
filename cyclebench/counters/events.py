"""What one counter is, in perf_event terms, and the events every Linux has by name.

Numbers are the ABI values of <linux/perf_event.h> (uapi); they never change once released, so they
are written out here instead of being read from a header at run time.

Privilege levels: perf_event programs the USR/OS bits of the event-select register itself, from
``exclude_user`` / ``exclude_kernel``; raw ``config`` values therefore never carry them (see
nanobench_config.py). cyclebench measures user code, and perf_event_paranoid >= 2 refuses kernel
counting to unprivileged users, so an EventSpec counts user mode only unless asked otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

# enum perf_type_id
PERF_TYPE_HARDWARE = 0
PERF_TYPE_SOFTWARE = 1
PERF_TYPE_TRACEPOINT = 2
PERF_TYPE_HW_CACHE = 3
PERF_TYPE_RAW = 4
PERF_TYPE_BREAKPOINT = 5

# enum perf_hw_id (config for PERF_TYPE_HARDWARE)
PERF_COUNT_HW_CPU_CYCLES = 0
PERF_COUNT_HW_INSTRUCTIONS = 1
PERF_COUNT_HW_CACHE_REFERENCES = 2
PERF_COUNT_HW_CACHE_MISSES = 3
PERF_COUNT_HW_BRANCH_INSTRUCTIONS = 4
PERF_COUNT_HW_BRANCH_MISSES = 5
PERF_COUNT_HW_BUS_CYCLES = 6
PERF_COUNT_HW_STALLED_CYCLES_FRONTEND = 7
PERF_COUNT_HW_STALLED_CYCLES_BACKEND = 8
PERF_COUNT_HW_REF_CPU_CYCLES = 9

# enum perf_sw_ids (config for PERF_TYPE_SOFTWARE)
PERF_COUNT_SW_CPU_CLOCK = 0
PERF_COUNT_SW_TASK_CLOCK = 1
PERF_COUNT_SW_PAGE_FAULTS = 2
PERF_COUNT_SW_CONTEXT_SWITCHES = 3
PERF_COUNT_SW_CPU_MIGRATIONS = 4
PERF_COUNT_SW_PAGE_FAULTS_MIN = 5
PERF_COUNT_SW_PAGE_FAULTS_MAJ = 6
PERF_COUNT_SW_ALIGNMENT_FAULTS = 7
PERF_COUNT_SW_EMULATION_FAULTS = 8
PERF_COUNT_SW_DUMMY = 9

# struct perf_event_attr sizes (attr.size); VER7 is what <linux/perf_event.h> here defines.
PERF_ATTR_SIZE_VER0 = 64
PERF_ATTR_SIZE_VER1 = 72    # + config2
PERF_ATTR_SIZE_VER5 = 112
PERF_ATTR_SIZE_VER6 = 120
PERF_ATTR_SIZE_VER7 = 128   # + sig_data
PERF_ATTR_SIZE_VER8 = 136   # + config3 (Linux 6.3)

# Bit positions in the u64 bit-field word of perf_event_attr (after read_format).
ATTR_BIT = {
    "disabled": 0, "inherit": 1, "pinned": 2, "exclusive": 3,
    "exclude_user": 4, "exclude_kernel": 5, "exclude_hv": 6, "exclude_idle": 7,
    "mmap": 8, "comm": 9, "freq": 10, "inherit_stat": 11, "enable_on_exec": 12, "task": 13,
    "watermark": 14, "precise_ip": 15,  # 2 bits: 15-16
    "mmap_data": 17, "sample_id_all": 18, "exclude_host": 19, "exclude_guest": 20,
}

# enum perf_event_read_format
PERF_FORMAT_TOTAL_TIME_ENABLED = 1 << 0
PERF_FORMAT_TOTAL_TIME_RUNNING = 1 << 1
PERF_FORMAT_ID = 1 << 2
PERF_FORMAT_GROUP = 1 << 3
PERF_FORMAT_LOST = 1 << 4

# perf_event_open() flags
PERF_FLAG_FD_NO_GROUP = 1 << 0
PERF_FLAG_FD_OUTPUT = 1 << 1
PERF_FLAG_PID_CGROUP = 1 << 2
PERF_FLAG_FD_CLOEXEC = 1 << 3

# ioctls: _IO('$', n) == ('$' << 8) | n
PERF_EVENT_IOC_ENABLE = 0x2400
PERF_EVENT_IOC_DISABLE = 0x2401
PERF_EVENT_IOC_REFRESH = 0x2402
PERF_EVENT_IOC_RESET = 0x2403
PERF_IOC_FLAG_GROUP = 1


@dataclass(frozen=True)
class EventSpec:
    """One counter, ready to become a perf_event_attr.

    ``counter``, ``taken_alone`` and the ``msr_*`` values keep what a nanoBench config line said:
    perf_event cannot pin an event to a counter (the kernel's constraint tables place it), and the
    extra MSRs are already folded into ``config1`` where perf supports them. They stay here for
    scheduling decisions and for display.
    """

    name: str
    type: int
    config: int = 0
    config1: int = 0
    config2: int = 0
    exclude_user: bool = False
    exclude_kernel: bool = True
    exclude_hv: bool = True
    exclude_guest: bool = False
    pinned: bool = False            # attr.pinned: fail instead of multiplexing
    fixed: bool = False             # hint: the PMU has a fixed counter for this (cycles, instructions)
    taken_alone: bool = False       # nanoBench .TakenAlone: measure with no other programmable event
    counter: int | None = None      # nanoBench .CTR=n (a hint; perf cannot force it)
    msr_3f6h: int | None = None
    msr_pf: int | None = None
    msr_rsp0: int | None = None
    msr_rsp1: int | None = None
    description: str = ""
    source: str = ""                # where it came from: "software", "generic", "file:line", "libpfm ..."

    def attr_flags(self) -> int:
        """The perf_event_attr bit-field word for the exclude_* and pinned bits (others are 0)."""
        word = 0
        for field in ("exclude_user", "exclude_kernel", "exclude_hv", "exclude_guest", "pinned"):
            if getattr(self, field):
                word |= 1 << ATTR_BIT[field]
        return word

    def renamed(self, name: str) -> "EventSpec":
        return replace(self, name=name)


def _table(kind, rows):
    source = "software" if kind == PERF_TYPE_SOFTWARE else "generic"
    table = {}
    for names, config, desc in rows:
        canonical = names.split()[0]
        spec = EventSpec(name=canonical, type=kind, config=config, description=desc, source=source,
                         fixed=kind == PERF_TYPE_HARDWARE and config in _FIXED_HW,
                         exclude_kernel=config not in _KERNEL_SIDE if kind == PERF_TYPE_SOFTWARE
                         else True)
        for name in names.split():
            table[name] = spec
    return table


# Software events the kernel raises in kernel context: with exclude_kernel they always read 0
# (checked on Linux 6.18), so they count kernel mode, which needs perf_event_paranoid <= 1 or
# CAP_PERFMON.
_KERNEL_SIDE = (PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS)

# Generic events Intel counts on fixed counters (cycles, instructions, ref-cycles).
_FIXED_HW = (PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_REF_CPU_CYCLES)


# First name is the canonical one (what perf stat prints); the others are its aliases.
SOFTWARE_EVENTS = _table(PERF_TYPE_SOFTWARE, [
    ("cpu-clock", PERF_COUNT_SW_CPU_CLOCK, "wall-clock time on the CPU, ns (per-CPU hrtimer)"),
    ("task-clock", PERF_COUNT_SW_TASK_CLOCK, "time the task was running, ns"),
    ("page-faults faults", PERF_COUNT_SW_PAGE_FAULTS, "page faults"),
    ("context-switches cs", PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches"),
    ("cpu-migrations migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "moves to another CPU"),
    ("minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, "page faults served without I/O"),
    ("major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page faults that needed I/O"),
    ("alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS, "alignment fix-ups by the kernel"),
    ("emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS, "instructions emulated by the kernel"),
])

GENERIC_EVENTS = _table(PERF_TYPE_HARDWARE, [
    ("cycles cpu-cycles", PERF_COUNT_HW_CPU_CYCLES, "core clock cycles (not halted)"),
    ("instructions", PERF_COUNT_HW_INSTRUCTIONS, "retired instructions"),
    ("ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES, "reference cycles (constant rate, not halted)"),
    ("branches branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "retired branches"),
    ("branch-misses", PERF_COUNT_HW_BRANCH_MISSES, "retired mispredicted branches"),
    ("cache-references", PERF_COUNT_HW_CACHE_REFERENCES, "last-level cache accesses (model-specific)"),
    ("cache-misses", PERF_COUNT_HW_CACHE_MISSES, "last-level cache misses (model-specific)"),
    ("bus-cycles", PERF_COUNT_HW_BUS_CYCLES, "bus cycles"),
    ("stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles the front end stalled"),
    ("stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles the back end stalled"),
])


def builtin_event(name: str) -> EventSpec | None:
    """A software or generic hardware event by its perf name (case-insensitive), else None."""
    key = name.strip().lower()
    return SOFTWARE_EVENTS.get(key) or GENERIC_EVENTS.get(key)
