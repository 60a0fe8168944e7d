/*
 * cb-runner: executes a cyclebench measurement blob in an isolated process.
 *
 * The Python side generates and assembles the blob (code pages followed by data pages that
 * hold the control block, see struct ctl) and passes entry offsets on the command line. This
 * program maps it, pins itself to a CPU, maps the memory areas, opens perf_event counters, runs
 * the measurement loop and prints raw counter differences, one line per run. Faults, timeouts
 * and bad parameters become one "error ..." line and a distinct exit code; the Python side turns
 * them into user-facing messages. Protocol (line oriented, on the descriptor --out-fd names,
 * standard output by default; cyclebench passes a pipe of its own so that nothing the measured
 * code prints can be read as a reading, see guard_protocol_fd):
 *   protocol N                     always the first line; N = RUNNER_PROTOCOL
 *   info KEY VALUE...
 *   group G                        the samples that follow used event group G (0, 1, ...)
 *   sample REP KIND V0 V1 ...      KIND: ca cb (calibration A/B), ka kb (the calibration's
 *                                  check chain A/B), pa pb (contention gauge A/B), a b (measurement A/B);
 *                                  V0 = TSC ticks, then one value per event of the current group
 *   times REP KIND EN RUN          time_enabled / time_running of the group over that run (ns):
 *                                  RUN < EN means the kernel multiplexed (or could not schedule) it
 *   probe I ok rdpmc=N | probe I fail ERRNO N     (--probe)
 *   error KIND key=value...        then exit with a nonzero code
 *   done
 *
 * The sandbox (see install_sandbox): after its own setup, and before any user code runs, the runner
 * lowers its resource limits and installs a seccomp filter (libseccomp). A refused system call
 * raises SIGSYS, reported as "error syscall nr=N arch=A rip=... [rip_off=...]". A second filter,
 * loaded first and the same in every mode (install_always_filter), refuses what acts on the system
 * behind seccomp's back (io_uring, Linux AIO), terminal input injection, any other ioctl, and any
 * write to or reshuffling of the protocol descriptor.
 *
 * Page mapping (--map-pages N --map-fill V, for real basic blocks): a SIGSEGV from the measured code
 * at an unmapped address maps that page onto one shared physical page (a memfd page filled with the
 * 64-bit value V) and retries the instruction, as BHive's harness does, for at most N pages; see
 * map_fault(). The run then prints "info mapped_pages N LATE" (LATE: pages first mapped during the
 * measured repetitions) and "info mapped_at ADDR..." (the first MAP_LIST pages).
 *
 * Event groups (--event ... [--group --event ...]): each group is opened as one perf_event group,
 * disabled; the groups are measured one after the other (warm-up and repetitions each), with only
 * the current group enabled, so that no two groups compete for the hardware counters. This is how
 * more events than counters are measured, as nanoBench does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <seccomp.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_EVENTS 16          /* per group */
#define MAX_TOTAL_EVENTS 256
#define MAX_GROUPS 64
#define MAX_SYMS 16
#define MAX_LIBS 8
#define MAX_SAMPLES 100000

#define RUNNER_PROTOCOL 2      /* cyclebench/runner/protocol.py checks it: bump on any change */

enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_LOAD = 3, EXIT_SIGNAL = 5, EXIT_TIMEOUT = 6, EXIT_COUNTER = 7 };

/* Shared with cyclebench/runner/layout.py: the generated code addresses these fields RIP-relative. */
struct ctl {
    uint64_t saved_rsp;        /* 0 */
    uint64_t loop_count;       /* 8 */
    uint64_t reg_init[5];      /* 16: r14 rdi rsi rbp rsp */
    uint64_t scratch[8];       /* 56: registers saved around counter reads */
    uint64_t read_fd;          /* 120: group leader fd for the read() path */
    uint64_t read_size;        /* 128 */
    uint64_t read_ret;         /* 136: last read() return value */
    uint64_t data_ptr;         /* 144 */
    uint64_t data_size;        /* 152 */
    uint64_t sym[MAX_SYMS];    /* 160 */
    uint64_t tsc_start;        /* 288 */
    uint64_t tsc_end;          /* 296 */
    uint64_t grp_start[3 + MAX_EVENTS]; /* 304: PERF_FORMAT_GROUP|TOTAL_TIME_*: nr, enabled, running, values */
    uint64_t grp_end[3 + MAX_EVENTS];   /* 456 */
    uint64_t pmc_idx[MAX_EVENTS];       /* 608: rdpmc indices (0 = unavailable) */
    uint64_t pmc_start[MAX_EVENTS];     /* 736 */
    uint64_t pmc_end[MAX_EVENTS];       /* 864 */
    uint64_t sys_token;                 /* 992: read_token, marks the harness's own read() (see install_sandbox) */
    uint64_t fp_status;                 /* 1000: MXCSR (bits 0-31) and the x87 status word (32-47) as each run left
                                           them (the harness's epilogue): the code's floating-point flags */
};                                      /* 1008 bytes */

_Static_assert(sizeof(struct ctl) == 1008, "layout.py must match");

typedef void (*entry_fn)(void);

static struct {
    const char *blob_path;
    long code_size, ctl_off;
    long e_one_time, e_a, e_b, e_ca, e_cb, e_ka, e_kb, e_pa, e_pb;
    long reps, warm_up, initial_warm_up, loop, calib_loop, auto_loop_ticks;
    long auto_loop_steps, auto_loop_min;   /* the target by the TSC's step (choose_loop) */
    long area_size, r14_size;
    int cpu;
    double timeout;
    double tsc_hz;                   /* the TSC's rate as the caller knows it (0: measure it, 5 ms) */
    long max_memory;
    int allow_syscalls;
    const char *data_path;
    int n_events, n_groups, event_cpu;
    struct perf_event_attr attr[MAX_TOTAL_EVENTS];
    int group_first[MAX_GROUPS], group_n[MAX_GROUPS];
    long patch_table, patch_count;   /* rdpmc immediates to patch: (offset, slot) uint32 pairs in the blob */
    const char *libs[MAX_LIBS];
    int n_libs;
    const char *syms[MAX_SYMS];
    int n_syms;
    int probe, use_rdpmc, layout;
    int out_fd;                      /* the protocol's descriptor */
    long map_pages;                  /* --map-pages: fault-mapped page cap (0 = off) */
    uint64_t map_fill;               /* --map-fill: the 64-bit value the shared page holds */
} opt = {
    .e_one_time = -1, .e_a = -1, .e_b = -1, .e_ca = -1, .e_cb = -1, .e_ka = -1, .e_kb = -1, .e_pa = -1, .e_pb = -1,
    .reps = 10, .warm_up = 5, .loop = 0, .calib_loop = 0,
    .area_size = 1 << 20, .r14_size = 1 << 20, .cpu = -1, .timeout = 10.0, .event_cpu = -1,
    .max_memory = 4L << 30,
    .patch_table = -1, .out_fd = 1,
};

static uint8_t *blob;
static size_t blob_len;
static struct ctl *ctl;
static int fds[MAX_TOTAL_EVENTS];
static struct perf_event_mmap_page *pages[MAX_TOTAL_EVENTS];
static int cur_group = -1;          /* the enabled group, -1 = none */
static long rdpmc_moves;            /* runs during which an rdpmc index changed */
static uint8_t *area_lo[6], *area_hi[6]; /* r14 rdi rsi rbp rsp data */

/* The runner's own system calls after the sandbox is installed carry this per-run secret in R9
 * (the sixth argument, unused by write/read/ioctl/mprotect); the filter allows those calls only
 * with it, so the measured code cannot make them. libseccomp cannot compare the instruction
 * pointer (libseccomp issue #113), which would be the other way to tell the two apart.
 * The generated harness makes one call of its own, read(), with read_token from the control
 * block; that block is in memory the measured code addresses, so read_token opens read() only,
 * never write, ioctl or mprotect. (Code in the process can always find what is in its memory;
 * the tokens keep system calls from code that does not hunt for them, see docs/safety.md.) */
static uint64_t sys_token, read_token;
static long sys3(long nr, long a, long b, long c) {
    long ret;
    register long r10 __asm__("r10") = 0, r8 __asm__("r8") = 0, r9 __asm__("r9") = (long)sys_token;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

/* ---- fault-mapped pages (--map-pages) ---- */
#define MAP_LIST 24
static uint8_t *map_src;               /* the one shared physical page (MAP_SHARED memfd) */
static long map_count, map_late;       /* pages mapped; of which during measured repetitions */
static int map_measuring;              /* set once the warm-up is over */
static long map_page;                  /* the page size, for the signal handler */
static uint64_t map_at[MAP_LIST];

/* mremap(src, 0, page, MAYMOVE|FIXED, addr) makes a second mapping of the shared page at addr:
 * five arguments, so R9 is free to carry the runner's token through the filter. */
static long sys_mremap(long old, long old_size, long new_size, long flags, long new_addr) {
    long ret;
    register long r10 __asm__("r10") = flags, r8 __asm__("r8") = new_addr, r9 __asm__("r9") = (long)sys_token;
    __asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_mremap), "D"(old), "S"(old_size), "d"(new_size),
                     "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    return ret;
}

/* ---- output: one buffer, flushed with sys3 (stdio would make unmarked calls) ---- */
static char obuf[1 << 16];
static size_t olen;
static void oflush(void) {
    for (size_t done = 0; done < olen;) {
        long r = sys3(SYS_write, opt.out_fd, (long)(obuf + done), (long)(olen - done));
        if (r <= 0) break;
        done += (size_t)r;
    }
    olen = 0;
}
static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...) {
    va_list ap;
    char line[512];
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1;
    if (olen + (size_t)n > sizeof obuf) oflush();
    memcpy(obuf + olen, line, (size_t)n);
    olen += (size_t)n;
}

/* async-signal-safe: straight to the pipe */
static void put(const char *s) { sys3(SYS_write, opt.out_fd, (long)s, (long)strlen(s)); }
static void put_hex(uint64_t v) {
    char b[19] = "0x"; int i;
    for (i = 0; i < 16; i++) b[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
    b[18] = 0; put(b);
}

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* A SIGSEGV of the measured code at an unmapped address (SEGV_MAPERR, so never one of the
 * runner's own mappings or guards) in the user part of the address space: map the page there and
 * return 1 (the instruction is retried). Pages below vm.mmap_min_addr are tried too: the kernel
 * maps them for a privileged user only, and says no otherwise. Past the cap, or if the kernel refuses, returns 0 and the
 * fault is reported; "error signal" then follows "info map_refused REASON". */
static int map_fault(int sig, siginfo_t *si, uint64_t rip) {
    uint64_t addr = (uint64_t)si->si_addr & ~(uint64_t)(map_page - 1);
    if (!opt.map_pages || !map_src || sig != SIGSEGV || si->si_code != SEGV_MAPERR) return 0;
    if (!blob || rip < (uint64_t)blob || rip >= (uint64_t)blob + (uint64_t)opt.code_size) return 0;
    if (addr >= (1ull << 47) - (uint64_t)map_page) {
        put("\ninfo map_refused address\n"); return 0;
    }
    if (map_count >= opt.map_pages) { put("\ninfo map_refused cap\n"); return 0; }
    if (sys_mremap((long)map_src, 0, map_page, MREMAP_MAYMOVE | MREMAP_FIXED, (long)addr) != (long)addr) {
        put("\ninfo map_refused kernel\n"); return 0;
    }
    if (map_count < MAP_LIST) map_at[map_count] = addr;
    map_count++;
    map_late += map_measuring;
    return 1;
}

static void fault_handler(int sig, siginfo_t *si, void *uc_) {
    ucontext_t *uc = uc_;
    uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    if (map_fault(sig, si, rip)) return;
    int timeout = sig == SIGALRM || sig == SIGXCPU;
    if (sig == SIGSYS && si->si_code == SYS_SECCOMP) {
        /* RIP is past the 2-byte syscall / int 0x80 / sysenter: report the instruction itself */
        rip -= 2;
        put("\nerror syscall nr="); put_hex((uint64_t)(uint32_t)si->si_syscall);
        put(" arch="); put_hex(si->si_arch);
    } else {
        const char *name = sig == SIGSEGV ? "SEGV" : sig == SIGBUS ? "BUS" : sig == SIGILL ? "ILL"
                         : sig == SIGFPE ? "FPE" : sig == SIGTRAP ? "TRAP" : sig == SIGALRM ? "TIMEOUT"
                         : sig == SIGXCPU ? "XCPU" : sig == SIGSYS ? "SYS" : "OTHER";
        put(timeout ? "\nerror timeout" : "\nerror signal");
        put(" sig="); put(name);
        put(" code="); put_hex((uint64_t)si->si_code);
        put(" addr="); put_hex((uint64_t)si->si_addr);
    }
    put(" rip="); put_hex(rip);
    if (blob && rip >= (uint64_t)blob && rip < (uint64_t)blob + blob_len) {
        put(" rip_off="); put_hex(rip - (uint64_t)blob);
    }
    put(" rsp="); put_hex((uint64_t)uc->uc_mcontext.gregs[REG_RSP]);
    put("\n");
    _exit(timeout ? EXIT_TIMEOUT : EXIT_SIGNAL);
}

static void die(int code, const char *kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void die(int code, const char *kind, const char *fmt, ...) {
    va_list ap;
    char msg[400];
    va_start(ap, fmt); vsnprintf(msg, sizeof msg, fmt, ap); va_end(ap);
    out("error %s %s\n", kind, msg);
    oflush();
    _exit(code);
}

static double seconds(const char *s, const char *what) {
    char *end; errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s || !isfinite(v) || v < 0 || v > 86400)
        die(EXIT_USAGE, "usage", "bad value for %s: '%s' (seconds, 0..86400)", what, s);
    return v;
}

static long num(const char *s, const char *what) {
    char *end; errno = 0;
    long v = strtol(s, &end, 0);
    if (errno || *end || v < 0) die(EXIT_USAGE, "usage", "bad value for %s: '%s'", what, s);
    return v;
}

/* --event TYPE:CONFIG:CONFIG1:CONFIG2:EXCL_USER:EXCL_KERNEL, appended to the current group */
static void parse_event(const char *s) {
    struct perf_event_attr *a;
    unsigned long long t, c, c1, c2, eu, ek;
    if (opt.n_events >= MAX_TOTAL_EVENTS) die(EXIT_USAGE, "usage", "at most %d events", MAX_TOTAL_EVENTS);
    if (sscanf(s, "%lli:%lli:%lli:%lli:%lli:%lli", &t, &c, &c1, &c2, &eu, &ek) != 6)
        die(EXIT_USAGE, "usage", "bad --event '%s'", s);
    if (!opt.n_groups) { opt.n_groups = 1; opt.group_first[0] = 0; }
    if (opt.group_n[opt.n_groups - 1] >= MAX_EVENTS) die(EXIT_USAGE, "usage", "at most %d events per group", MAX_EVENTS);
    opt.group_n[opt.n_groups - 1]++;
    a = &opt.attr[opt.n_events++];
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = (uint32_t)t; a->config = c; a->config1 = c1; a->config2 = c2;
    a->exclude_user = eu; a->exclude_kernel = ek; a->exclude_hv = 1;
    /* the times say whether the group was on the PMU all the time it was enabled (multiplexing) */
    a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
}

/* --group: the events that follow form the next group */
static void new_group(void) {
    if (!opt.n_groups || !opt.group_n[opt.n_groups - 1]) return;   /* empty groups are not made */
    if (opt.n_groups >= MAX_GROUPS) die(EXIT_USAGE, "usage", "at most %d groups", MAX_GROUPS);
    opt.group_first[opt.n_groups] = opt.n_events;
    opt.group_n[opt.n_groups++] = 0;
}

static void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        #define ARG(name) (!strcmp(k, name) && v && ++i)
        if (!strcmp(k, "--probe")) opt.probe = 1;
        else if (!strcmp(k, "--layout")) opt.layout = 1;
        else if (!strcmp(k, "--rdpmc")) opt.use_rdpmc = 1;
        else if (!strcmp(k, "--group")) new_group();
        else if (ARG("--event-cpu")) opt.event_cpu = (int)num(v, k);
        else if (ARG("--patch-table")) opt.patch_table = num(v, k);
        else if (ARG("--patch-count")) opt.patch_count = num(v, k);
        else if (ARG("--code-size")) opt.code_size = num(v, k);
        else if (ARG("--ctl")) opt.ctl_off = num(v, k);
        else if (ARG("--one-time-init")) opt.e_one_time = num(v, k);
        else if (ARG("--run-a")) opt.e_a = num(v, k);
        else if (ARG("--run-b")) opt.e_b = num(v, k);
        else if (ARG("--calib-a")) opt.e_ca = num(v, k);
        else if (ARG("--calib-b")) opt.e_cb = num(v, k);
        else if (ARG("--check-a")) opt.e_ka = num(v, k);
        else if (ARG("--check-b")) opt.e_kb = num(v, k);
        else if (ARG("--contention-a")) opt.e_pa = num(v, k);
        else if (ARG("--contention-b")) opt.e_pb = num(v, k);
        else if (ARG("--reps")) opt.reps = num(v, k);
        else if (ARG("--warm-up")) opt.warm_up = num(v, k);
        else if (ARG("--initial-warm-up")) opt.initial_warm_up = num(v, k);
        else if (ARG("--loop")) opt.loop = num(v, k);
        else if (ARG("--calib-loop")) opt.calib_loop = num(v, k);
        else if (ARG("--auto-loop-ticks")) opt.auto_loop_ticks = num(v, k);
        else if (ARG("--auto-loop-steps")) opt.auto_loop_steps = num(v, k);
        else if (ARG("--auto-loop-min")) opt.auto_loop_min = num(v, k);
        else if (ARG("--area-size")) opt.area_size = num(v, k);
        else if (ARG("--r14-size")) opt.r14_size = num(v, k);
        else if (ARG("--cpu")) opt.cpu = (int)num(v, k);
        else if (ARG("--timeout")) opt.timeout = seconds(v, k);
        else if (ARG("--tsc-hz")) opt.tsc_hz = (double)num(v, k);
        else if (ARG("--max-memory")) opt.max_memory = num(v, k);
        else if (!strcmp(k, "--allow-syscalls")) opt.allow_syscalls = 1;
        else if (ARG("--map-pages")) opt.map_pages = num(v, k);
        else if (ARG("--map-fill")) opt.map_fill = strtoull(v, NULL, 0);
        else if (ARG("--data")) opt.data_path = v;
        else if (ARG("--out-fd")) opt.out_fd = (int)num(v, k);
        else if (ARG("--event")) parse_event(v);
        else if (ARG("--lib")) {
            if (opt.n_libs >= MAX_LIBS) die(EXIT_USAGE, "usage", "at most %d --lib", MAX_LIBS);
            opt.libs[opt.n_libs++] = v;
        } else if (ARG("--sym")) {
            if (opt.n_syms >= MAX_SYMS) die(EXIT_USAGE, "usage", "at most %d --sym", MAX_SYMS);
            opt.syms[opt.n_syms++] = v;
        }
        else if (k[0] != '-' && !opt.blob_path) opt.blob_path = k;
        else die(EXIT_USAGE, "usage", "unknown or incomplete argument '%s'", k);
        #undef ARG
    }
    if (opt.reps < 1 || opt.reps > MAX_SAMPLES) die(EXIT_USAGE, "usage", "--reps must be 1..%d", MAX_SAMPLES);
    if (opt.area_size < 8192 || opt.r14_size < 8192) die(EXIT_USAGE, "usage", "areas must be at least 8 KiB");
    if (opt.max_memory < (64L << 20)) die(EXIT_USAGE, "usage", "--max-memory must be at least 64 MiB");
    if (opt.map_pages > 65536) die(EXIT_USAGE, "usage", "--map-pages must be 0..65536");
}

/* The shared page of --map-pages, made before the sandbox (memfd_create and ftruncate are not
 * allowed after it). */
static void map_setup(void) {
    if (!opt.map_pages) return;
    map_page = sysconf(_SC_PAGESIZE);
    int fd = memfd_create("cb-block-page", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, map_page)) die(EXIT_LOAD, "load", "memfd: %s", strerror(errno));
    map_src = mmap(NULL, map_page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map_src == MAP_FAILED) die(EXIT_LOAD, "load", "mmap of the shared page: %s", strerror(errno));
    close(fd);
    for (long i = 0; i < map_page / 8; i++) ((uint64_t *)map_src)[i] = opt.map_fill;
}

static void map_report(void) {
    if (!opt.map_pages) return;
    out("info mapped_pages %ld %ld\n", map_count, map_late);
    if (!map_count) return;
    out("info mapped_at");
    for (long i = 0; i < map_count && i < MAP_LIST; i++) out(" %#llx", (unsigned long long)map_at[i]);
    out("\n");
}

static long page_size;
static size_t round_up(size_t n) { return (n + page_size - 1) / page_size * page_size; }

/* An area with a 1 MB PROT_NONE guard on each side, so stray accesses fault instead of
 * landing in a neighbouring area (reserved address space only: it costs no memory). */
#define GUARD (1 << 20)
static uint8_t *map_area(size_t size, int idx) {
    size_t total = round_up(size) + 2 * GUARD;
    uint8_t *p = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) die(EXIT_LOAD, "load", "cannot map a %zu-byte area: %s", size, strerror(errno));
    if (mprotect(p + GUARD, round_up(size), PROT_READ | PROT_WRITE))
        die(EXIT_LOAD, "load", "mprotect: %s", strerror(errno));
    area_lo[idx] = p + GUARD;
    area_hi[idx] = p + GUARD + round_up(size);
    return p + GUARD;
}

static void load_blob(void) {
    int fd = open(opt.blob_path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) die(EXIT_LOAD, "load", "cannot open blob '%s': %s", opt.blob_path, strerror(errno));
    blob_len = round_up((size_t)st.st_size);
    if (opt.code_size <= 0 || (size_t)opt.code_size > blob_len || opt.code_size % page_size)
        die(EXIT_USAGE, "usage", "--code-size must be a page multiple within the blob");
    if (opt.ctl_off < opt.code_size || (size_t)opt.ctl_off + sizeof(struct ctl) > blob_len)
        die(EXIT_USAGE, "usage", "--ctl must point into the data pages");
    blob = mmap(NULL, blob_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (blob == MAP_FAILED) die(EXIT_LOAD, "load", "mmap: %s", strerror(errno));
    for (size_t got = 0; got < (size_t)st.st_size;) {
        ssize_t r = read(fd, blob + got, st.st_size - got);
        if (r <= 0) die(EXIT_LOAD, "load", "short read of blob");
        got += r;
    }
    close(fd);
    if (mprotect(blob, opt.code_size, PROT_READ | PROT_EXEC)) die(EXIT_LOAD, "load", "mprotect: %s", strerror(errno));
    ctl = (struct ctl *)(blob + opt.ctl_off);
}

static void load_data(void) {
    int fd; struct stat st; uint8_t *p;
    if (!opt.data_path) return;
    fd = open(opt.data_path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st)) die(EXIT_LOAD, "load", "cannot open data '%s': %s", opt.data_path, strerror(errno));
    p = map_area(st.st_size ? st.st_size : 1, 5);
    for (size_t got = 0; got < (size_t)st.st_size;) {
        ssize_t r = read(fd, p + got, st.st_size - got);
        if (r <= 0) die(EXIT_LOAD, "load", "short read of data");
        got += r;
    }
    close(fd);
    ctl->data_ptr = (uint64_t)p; ctl->data_size = st.st_size;
}

/* --lib PATH loads a shared object; --sym NAME resolves into ctl->sym[i] (libs first, then the runner's libc). */
static void load_symbols(void) {
    void *h[MAX_LIBS];
    for (int i = 0; i < opt.n_libs; i++) {
        h[i] = dlopen(opt.libs[i], RTLD_NOW | RTLD_LOCAL);
        if (!h[i]) die(EXIT_LOAD, "load", "cannot load '%s': %s", opt.libs[i], dlerror());
    }
    for (int s = 0; s < opt.n_syms; s++) {
        void *addr = NULL;
        for (int i = 0; i < opt.n_libs && !addr; i++) addr = dlsym(h[i], opt.syms[s]);
        if (!addr) addr = dlsym(RTLD_DEFAULT, opt.syms[s]);
        if (!addr) die(EXIT_LOAD, "symbol", "name=%s undefined symbol", opt.syms[s]);
        ctl->sym[s] = (uint64_t)addr;
    }
}

static const char *errno_name(int e) {
    switch (e) {
    case ENOENT: return "ENOENT"; case EACCES: return "EACCES"; case EPERM: return "EPERM";
    case EOPNOTSUPP: return "EOPNOTSUPP"; case EINVAL: return "EINVAL"; case ENODEV: return "ENODEV";
    case EBUSY: return "EBUSY"; case E2BIG: return "E2BIG"; default: return "EOTHER";
    }
}

/* Every group is opened with its leader disabled (members follow the leader); select_group()
 * enables one group at a time. --probe opens them enabled and reports each event. --event-cpu
 * restricts counting to one CPU (the kernel then reports time_running < time_enabled while the
 * runner is on another CPU: the tests use it to check multiplexing detection without a PMU). */
static void open_events(void) {
    for (int g = 0; g < opt.n_groups; g++) {
        int first = opt.group_first[g];
        for (int i = first; i < first + opt.group_n[g]; i++) {
            int leader = i == first ? -1 : fds[first];
            opt.attr[i].disabled = i == first && !opt.probe;
            fds[i] = (int)syscall(SYS_perf_event_open, &opt.attr[i], 0, opt.event_cpu, leader, 0);
            if (fds[i] < 0) {
                int e = errno;
                if (opt.probe) { out("probe %d fail %s %d\n", i, errno_name(e), e); continue; }
                die(EXIT_COUNTER, "counter", "index=%d errno=%s errnum=%d", i, errno_name(e), e);
            }
            pages[i] = mmap(NULL, page_size, PROT_READ, MAP_SHARED, fds[i], 0);
            if (pages[i] == MAP_FAILED) pages[i] = NULL;
            if (opt.probe) {
                uint64_t idx = pages[i] && pages[i]->cap_user_rdpmc ? pages[i]->index : 0;
                out("probe %d ok rdpmc=%llu\n", i, (unsigned long long)idx);
            }
        }
    }
    if (ctl) ctl->read_fd = (uint64_t)-1;
}

/* The rdpmc index (ECX + 1) the kernel gave event i: 0 when the event is not on a counter right
 * now (multiplexed out; the times show it), -1 when user-space rdpmc is not allowed at all. */
static int64_t pmc_index(int i) {
    struct perf_event_mmap_page *pg = pages[i];
    uint32_t seq; int64_t idx;
    if (!pg) return -1;
    do {
        seq = pg->lock;
        __sync_synchronize();
        idx = pg->cap_user_rdpmc ? (int64_t)pg->index : -1;
        __sync_synchronize();
    } while (pg->lock != seq);
    return idx;
}

/* Sets the rdpmc index of every slot of the current group (unused slots read the leader's
 * counter); with a patch table, also the immediates of the no-memory read sequences. Returns 1
 * if anything changed. */
static int load_pmc_indices(void) {
    int g = cur_group, changed = 0;
    if (g < 0 || !opt.use_rdpmc) return 0;
    int first = opt.group_first[g];
    for (int s = 0; s < MAX_EVENTS; s++) {
        int i = s < opt.group_n[g] ? first + s : first;
        int64_t idx = pmc_index(i);
        if (idx < 0) die(EXIT_COUNTER, "counter", "index=%d rdpmc=unavailable", i);
        if (idx == 0 && !ctl->pmc_idx[s]) die(EXIT_COUNTER, "counter", "index=%d rdpmc=not-scheduled", i);
        if (idx && ctl->pmc_idx[s] != (uint64_t)idx) { ctl->pmc_idx[s] = (uint64_t)idx; changed = 1; }
    }
    if (changed && opt.patch_table >= 0 && opt.patch_count > 0) {
        if (sys3(SYS_mprotect, (long)blob, opt.code_size, PROT_READ | PROT_WRITE)) die(EXIT_LOAD, "load", "mprotect failed");
        const uint32_t *t = (const uint32_t *)(blob + opt.patch_table);
        for (long k = 0; k < opt.patch_count; k++) {
            if (t[2 * k] + 4 > (uint64_t)opt.code_size || t[2 * k + 1] >= MAX_EVENTS)
                die(EXIT_USAGE, "usage", "bad patch table entry %ld", k);
            uint32_t v = (uint32_t)(ctl->pmc_idx[t[2 * k + 1]] - 1);
            memcpy(blob + t[2 * k], &v, 4);
        }
        if (sys3(SYS_mprotect, (long)blob, opt.code_size, PROT_READ | PROT_EXEC)) die(EXIT_LOAD, "load", "mprotect failed");
    }
    return changed;
}

static void select_group(int g) {
    if (cur_group >= 0) sys3(SYS_ioctl, fds[opt.group_first[cur_group]], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
    cur_group = g;
    int leader = fds[opt.group_first[g]];
    long rc = sys3(SYS_ioctl, leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    if (rc) die(EXIT_COUNTER, "counter", "index=%d enable errno=%s errnum=%ld", opt.group_first[g], errno_name((int)-rc), -rc);
    ctl->read_fd = (uint64_t)leader;
    ctl->read_size = 8 * (3 + (uint64_t)opt.group_n[g]);
    memset(ctl->pmc_idx, 0, sizeof ctl->pmc_idx);
    load_pmc_indices();
}

static void pin_cpu(void) {
    cpu_set_t set;
    if (opt.cpu < 0) opt.cpu = sched_getcpu();
    CPU_ZERO(&set); CPU_SET(opt.cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) die(EXIT_USAGE, "usage", "cannot pin to CPU %d: %s", opt.cpu, strerror(errno));
    out("info cpu %d\n", opt.cpu);
}

static inline uint64_t rdtsc_now(void) {
    unsigned lo, hi;
    __asm__ volatile("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static double tsc_hz(void) {
    struct timespec t0, t1;
    uint64_t c0, c1;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t0);
    c0 = rdtsc_now();
    do clock_gettime(CLOCK_MONOTONIC_RAW, &t1);
    while ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec) < 5e6);
    c1 = rdtsc_now();
    return (c1 - c0) / ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
}

struct reading { uint64_t tsc; uint64_t ev[MAX_EVENTS]; uint64_t enabled, running; };

static void read_times(uint64_t *en, uint64_t *run) {
    uint64_t buf[3 + MAX_EVENTS];
    ssize_t want = 8 * (3 + opt.group_n[cur_group]);
    long got = sys3(SYS_read, fds[opt.group_first[cur_group]], (long)buf, want);
    if (got != want)
        die(EXIT_COUNTER, "counter", "read() of counter group %d failed: %s", cur_group, got < 0 ? strerror((int)-got) : "short read");
    *en = buf[1]; *run = buf[2];
}

static void call(long off, uint64_t loop, struct reading *r) {
    int measured = off == opt.e_a || off == opt.e_b;
    int reads_group = measured && !opt.use_rdpmc && cur_group >= 0;
    uint64_t en0 = 0, run0 = 0, en1 = 0, run1 = 0;
    ctl->loop_count = loop;
    ctl->read_ret = 0;
    if (opt.use_rdpmc) load_pmc_indices();
    if (r && cur_group >= 0) read_times(&en0, &run0);
    ((entry_fn)(blob + off))();
    if (!r) return;
    if (cur_group >= 0) read_times(&en1, &run1);
    if (opt.use_rdpmc && measured && load_pmc_indices()) rdpmc_moves++;
    if (reads_group && ctl->read_ret != ctl->read_size)
        die(EXIT_COUNTER, "counter", "read() of the counter group returned %lld", (long long)ctl->read_ret);
    r->tsc = ctl->tsc_end - ctl->tsc_start;
    r->enabled = en1 - en0; r->running = run1 - run0;
    int n = cur_group >= 0 ? opt.group_n[cur_group] : 0;
    for (int s = 0; s < n; s++) {
        if (opt.use_rdpmc) {
            struct perf_event_mmap_page *pg = pages[opt.group_first[cur_group] + s];
            uint64_t mask = pg->pmc_width && pg->pmc_width < 64 ? (1ull << pg->pmc_width) - 1 : ~0ull;
            r->ev[s] = (ctl->pmc_end[s] - ctl->pmc_start[s]) & mask;   /* counters are pmc_width bits wide */
        } else {
            r->ev[s] = ctl->grp_end[3 + s] - ctl->grp_start[3 + s];
        }
    }
}

/* One pass (loop 1, untimed) over each calibration function, so that the timed runs find their
 * code in the caches and TLBs: code under test that walks a large working set evicts them, and
 * refetching the gauge's 13 KB made it read a few percent slow after memory-bound code. */
static void warm_calibration(void) {
    long fns[] = {opt.e_ca, opt.e_cb, opt.e_ka, opt.e_kb, opt.e_pa, opt.e_pb};
    for (unsigned i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (fns[i] >= 0) call(fns[i], 1, NULL);
}

static void print_reading(long rep, const char *kind, const struct reading *r) {
    int n = cur_group >= 0 ? opt.group_n[cur_group] : 0;
    out("sample %ld %s %llu", rep, kind, (unsigned long long)r->tsc);
    for (int i = 0; i < n; i++) out(" %llu", (unsigned long long)r->ev[i]);
    out("\n");
    if (cur_group >= 0 && (kind[0] == 'a' || kind[0] == 'b'))
        out("times %ld %s %llu %llu\n", rep, kind, (unsigned long long)r->enabled, (unsigned long long)r->running);
}

/* Grows the loop count (x2 to x16 per step) until B - A spans the requested number of ticks in
 * two pairs of runs one after the other.
 * Code that costs (almost) nothing never gets there: A and B then both run at the loop's own
 * speed. Growth stops once one B run would exceed LOOP_RUN_LIMIT times the target, and
 * "info loop_limited D" (D = B - A of the last trial) says that the difference stayed below the
 * resolution; the Python side reports it as such instead of timing out. */
#define LOOP_RUN_LIMIT 1000

static uint64_t gcd64(uint64_t a, uint64_t b) { while (b) { uint64_t t = a % b; a = b; b = t; } return a; }

/* The TSC's step: the gcd of its differences over spins of 1 to 64 iterations (26 ticks on a
 * KVM guest whose TSC is scaled, 1 or 2 elsewhere). Spins of different lengths give differences
 * that share no factor but the step; 64 spins cost a few microseconds of each runner's start. */
static uint64_t tsc_step(void) {
    uint64_t g = 0;
    for (int k = 1; k <= 64; k++) {
        uint64_t t0 = rdtsc_now();
        for (volatile int i = 0; i < k; i++) {}
        g = gcd64(g, rdtsc_now() - t0);
    }
    return g ? g : 1;
}

/* --auto-loop-steps N: the target is N of the TSC's steps, within [--auto-loop-min,
 * --auto-loop-ticks]; "info loop_target T STEP" says what it came to. */
static void set_loop_target(void) {
    if (opt.auto_loop_steps <= 0) return;
    uint64_t step = tsc_step(), t = step * (uint64_t)opt.auto_loop_steps;
    if (t < (uint64_t)opt.auto_loop_min) t = (uint64_t)opt.auto_loop_min;
    if (t < (uint64_t)opt.auto_loop_ticks) opt.auto_loop_ticks = (long)t;     /* --auto-loop-ticks: the cap */
    out("info loop_target %ld %llu\n", opt.auto_loop_ticks, (unsigned long long)step);
}

static uint64_t choose_loop(void) {
    uint64_t loop = opt.loop ? (uint64_t)opt.loop : 1;
    struct reading a, b;
    for (int step = 0; step < 40; step++) {
        /* Two pairs a step, as noise only adds time: the target counts as reached when both
         * differences reach it, or two of three (an interrupt in B ended the growth at B - A of
         * 2,236 ticks where about 88,000 were due, once), and the loop grows by the larger (an
         * interrupt in A makes B - A small, and the loop grew up to 4 times past the target) */
        struct reading a2, b2;
        call(opt.e_a, loop, &a); call(opt.e_b, loop, &b);
        call(opt.e_a, loop, &a2); call(opt.e_b, loop, &b2);
        int64_t d1 = (int64_t)(b.tsc - a.tsc), d2 = (int64_t)(b2.tsc - a2.tsc);
        int64_t lo = d1 < d2 ? d1 : d2, d = d1 < d2 ? d2 : d1;
        if (lo >= opt.auto_loop_ticks) break;
        if (d >= opt.auto_loop_ticks) {        /* one pair each side: a third decides (the median) */
            struct reading a3, b3;
            call(opt.e_a, loop, &a3); call(opt.e_b, loop, &b3);
            if ((int64_t)(b3.tsc - a3.tsc) >= opt.auto_loop_ticks) break;
        }
        uint64_t b_run = b.tsc < b2.tsc ? b.tsc : b2.tsc;
        double f = d > 0 ? opt.auto_loop_ticks * 1.3 / d + 1 : 16;
        double room = (double)opt.auto_loop_ticks * LOOP_RUN_LIMIT / (b_run ? (double)b_run : 1.0);
        f = f < 2 ? 2 : f > 16 ? 16 : f;
        if (f > room) f = room;
        if (f < 2 || loop > (1ull << 40)) { out("info loop_limited %lld\n", (long long)d); break; }
        loop = (uint64_t)(loop * f);
    }
    return loop;
}

/* ---- the sandbox ---- */

/* Side-effect-free calls that people time; the only ones the measured code may make by default. */
static const int timing_calls[] = {
    SCMP_SYS(getpid), SCMP_SYS(getppid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
    SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getresuid), SCMP_SYS(getresgid), SCMP_SYS(getgroups),
    SCMP_SYS(getpgrp), SCMP_SYS(getpgid), SCMP_SYS(getsid), SCMP_SYS(getcpu), SCMP_SYS(sched_yield),
    SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(gettimeofday), SCMP_SYS(time),
    SCMP_SYS(getrusage), SCMP_SYS(times), SCMP_SYS(uname), SCMP_SYS(getpriority), SCMP_SYS(getrlimit),
    /* ending the process is harmless; rt_sigreturn returns from a signal handler */
    SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
};
/* The runner's own calls once the filter is on, allowed only with sys_token in R9. */
static const int runner_calls[] = { SCMP_SYS(write), SCMP_SYS(read), SCMP_SYS(ioctl), SCMP_SYS(mprotect),
                                     SCMP_SYS(mremap) /* --map-pages */ };
/* Refused always, from anywhere in the process, even with --allow-syscalls: process creation and
 * exec, debugging or writing other processes, sockets, changes to the file system, and calls that
 * change the machine for everyone (we often run as root here). */
static const int refused_calls[] = {
    SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(clone), SCMP_SYS(clone3), SCMP_SYS(execve), SCMP_SYS(execveat),
    SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(pidfd_send_signal),
    SCMP_SYS(pidfd_getfd), SCMP_SYS(kcmp),
    SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen),
    SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(sendto), SCMP_SYS(sendmsg), SCMP_SYS(sendmmsg),
    SCMP_SYS(creat), SCMP_SYS(openat2), SCMP_SYS(open_by_handle_at), SCMP_SYS(unlink), SCMP_SYS(unlinkat),
    SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(mkdir), SCMP_SYS(mkdirat),
    SCMP_SYS(rmdir), SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat),
    SCMP_SYS(mknod), SCMP_SYS(mknodat), SCMP_SYS(chmod), SCMP_SYS(fchmod), SCMP_SYS(fchmodat),
    SCMP_SYS(chown), SCMP_SYS(fchown), SCMP_SYS(lchown), SCMP_SYS(fchownat), SCMP_SYS(truncate),
    SCMP_SYS(ftruncate), SCMP_SYS(fallocate), SCMP_SYS(utime), SCMP_SYS(utimes), SCMP_SYS(utimensat),
    SCMP_SYS(futimesat), SCMP_SYS(setxattr), SCMP_SYS(lsetxattr), SCMP_SYS(fsetxattr),
    SCMP_SYS(removexattr), SCMP_SYS(lremovexattr), SCMP_SYS(fremovexattr),
    SCMP_SYS(reboot), SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load), SCMP_SYS(init_module),
    SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(mount), SCMP_SYS(umount2),
    SCMP_SYS(pivot_root), SCMP_SYS(chroot), SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(settimeofday),
    SCMP_SYS(clock_settime), SCMP_SYS(clock_adjtime), SCMP_SYS(adjtimex), SCMP_SYS(sethostname),
    SCMP_SYS(setdomainname), SCMP_SYS(setrlimit), SCMP_SYS(acct), SCMP_SYS(quotactl), SCMP_SYS(bpf),
    SCMP_SYS(perf_event_open), SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(iopl), SCMP_SYS(ioperm),
    SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(syslog), SCMP_SYS(vhangup),
    SCMP_SYS(setpriority), SCMP_SYS(sched_setscheduler), SCMP_SYS(sched_setparam), SCMP_SYS(sched_setattr),
    SCMP_SYS(fsopen), SCMP_SYS(fsmount), SCMP_SYS(move_mount), SCMP_SYS(open_tree), SCMP_SYS(fsconfig),
    SCMP_SYS(fspick), SCMP_SYS(mount_setattr), SCMP_SYS(fanotify_init), SCMP_SYS(userfaultfd),
    SCMP_SYS(quotactl_fd),
    /* acting on other processes: their memory, CPUs, I/O priority (root may, for any process) */
    SCMP_SYS(process_madvise), SCMP_SYS(process_mrelease), SCMP_SYS(migrate_pages), SCMP_SYS(move_pages),
    SCMP_SYS(sched_setaffinity), SCMP_SYS(ioprio_set),
    /* System V IPC and POSIX message queues: objects shared with other processes that outlive this one */
    SCMP_SYS(shmget), SCMP_SYS(shmat), SCMP_SYS(shmctl), SCMP_SYS(msgget), SCMP_SYS(msgsnd), SCMP_SYS(msgrcv),
    SCMP_SYS(msgctl), SCMP_SYS(semget), SCMP_SYS(semop), SCMP_SYS(semtimedop), SCMP_SYS(semctl),
    SCMP_SYS(mq_open), SCMP_SYS(mq_unlink),
};

/* Refused in every mode, whatever the registers say (install_always_filter). io_uring and Linux
 * AIO carry out reads, writes, opens, mkdirs and socket calls in the kernel on the process's behalf:
 * the filter sees only the submission, never the operation, so they would bypass every rule here. */
static const int indirect_calls[] = {
    SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
    SCMP_SYS(io_setup), SCMP_SYS(io_submit),
};
/* The calls that write to a descriptor given as argument 0 (splice, tee, copy_file_range and
 * sendfile name the output elsewhere: see guard_protocol_fd). */
static const int fd_writes[] = {
    SCMP_SYS(writev), SCMP_SYS(pwrite64), SCMP_SYS(pwritev), SCMP_SYS(pwritev2), SCMP_SYS(vmsplice),
    SCMP_SYS(sendfile),
};

#define TRAP_IF(nr, ...) do { if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, nr, __VA_ARGS__); } while (0)

/* Nothing but the runner's own token-marked write() reaches descriptor fd, and the measured code
 * cannot close it, duplicate it or put another file in its place. With fd the protocol's
 * descriptor, a snippet's output can never be read as readings. */
static int guard_fd(scmp_filter_ctx ctx, int fd, int is_protocol) {
    int rc = 0;
    TRAP_IF(SCMP_SYS(write), 2, SCMP_A0_32(SCMP_CMP_EQ, (uint32_t)fd), SCMP_A5_64(SCMP_CMP_NE, sys_token));
    for (unsigned i = 0; i < sizeof fd_writes / sizeof *fd_writes; i++)
        TRAP_IF(fd_writes[i], 1, SCMP_A0_32(SCMP_CMP_EQ, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(splice), 1, SCMP_A2_32(SCMP_CMP_EQ, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(copy_file_range), 1, SCMP_A2_32(SCMP_CMP_EQ, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(tee), 1, SCMP_A1_32(SCMP_CMP_EQ, (uint32_t)fd));
    if (!is_protocol) return rc;
    TRAP_IF(SCMP_SYS(close), 1, SCMP_A0_32(SCMP_CMP_EQ, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(close_range), 2, SCMP_A0_32(SCMP_CMP_LE, (uint32_t)fd), SCMP_A1_32(SCMP_CMP_GE, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(dup), 1, SCMP_A0_32(SCMP_CMP_EQ, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(dup2), 1, SCMP_A0_32(SCMP_CMP_EQ, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(dup2), 1, SCMP_A1_32(SCMP_CMP_EQ, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(dup3), 1, SCMP_A0_32(SCMP_CMP_EQ, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(dup3), 1, SCMP_A1_32(SCMP_CMP_EQ, (uint32_t)fd));
    TRAP_IF(SCMP_SYS(fcntl), 1, SCMP_A0_32(SCMP_CMP_EQ, (uint32_t)fd));
    return rc;
}

/* The filter every mode shares, loaded before the mode's own (the kernel applies both; the stricter
 * answer wins). It refuses:
 *  - indirect_calls (io_uring, AIO);
 *  - ioctl without the runner's token: a request number means something different to every driver,
 *    and many act on the machine through a descriptor opened read-only (TIOCSTI pushes keystrokes
 *    into a terminal, FS_IOC_SETFLAGS makes files immutable, FIFREEZE freezes a file system);
 *  - TIOCSTI and TIOCLINUX even with the token (it lives in memory the measured code can read);
 *  - fcntl requests that send signals to other processes (F_SETOWN, F_SETOWN_EX, F_SETSIG) or make
 *    their open() wait (F_SETLEASE);
 *  - writes to standard output and error and to the protocol's descriptor (guard_fd). */
static int install_always_filter(void) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int rc = ctx ? seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRAP) : -ENOMEM;
    for (unsigned i = 0; i < sizeof indirect_calls / sizeof *indirect_calls; i++)
        TRAP_IF(indirect_calls[i], 0);
    TRAP_IF(SCMP_SYS(ioctl), 1, SCMP_A5_64(SCMP_CMP_NE, sys_token));
    TRAP_IF(SCMP_SYS(ioctl), 1, SCMP_A1_32(SCMP_CMP_EQ, TIOCSTI));
    TRAP_IF(SCMP_SYS(ioctl), 1, SCMP_A1_32(SCMP_CMP_EQ, TIOCLINUX));
    static const int fcntl_cmds[] = { F_SETOWN, F_SETOWN_EX, F_SETSIG, F_SETLEASE };
    for (unsigned i = 0; i < sizeof fcntl_cmds / sizeof *fcntl_cmds; i++)
        TRAP_IF(SCMP_SYS(fcntl), 1, SCMP_A1_32(SCMP_CMP_EQ, (uint32_t)fcntl_cmds[i]));
    if (!rc) rc = guard_fd(ctx, opt.out_fd, 1);
    for (int fd = 1; fd <= 2; fd++)
        if (!rc && fd != opt.out_fd) rc = guard_fd(ctx, fd, 0);
    if (!rc) rc = seccomp_load(ctx);
    return rc;
}

/* The runner is started in a session of its own (cyclebench does it; this covers a direct start):
 * with no controlling terminal, /dev/tty cannot be opened. */
static void leave_terminal(void) {
    if (getsid(0) != getpid()) setsid();
}

static void limit(int res, rlim_t soft, rlim_t hard, const char *what) {
    struct rlimit rl = {soft, hard};
    if (setrlimit(res, &rl)) die(EXIT_LOAD, "load", "cannot set the %s limit: %s", what, strerror(errno));
}

/* Resource limits, then the seccomp filter. Runs after the runner's own setup (areas, libraries,
 * counters, timer) and before any user code. */
static void install_sandbox(void) {
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) { if (fscanf(f, "%ld", &pages) != 1) pages = 0; fclose(f); }
    if (pages * page_size > opt.max_memory)
        die(EXIT_USAGE, "memory", "need=%ld max=%ld", pages * page_size, opt.max_memory);
    limit(RLIMIT_AS, (rlim_t)opt.max_memory, (rlim_t)opt.max_memory, "address-space");
    limit(RLIMIT_FSIZE, 0, 0, "file-size");
    limit(RLIMIT_CORE, 0, 0, "core-size");
    if (opt.timeout > 0) {        /* a backstop should SIGALRM be blocked: SIGXCPU, then SIGKILL */
        rlim_t cpu = (rlim_t)ceil(opt.timeout) + 2;
        limit(RLIMIT_CPU, cpu, cpu + 1, "CPU-time");
    }

    while (!sys_token || !read_token || sys_token == read_token)
        if (getrandom(&sys_token, sizeof sys_token, 0) != sizeof sys_token ||
            getrandom(&read_token, sizeof read_token, 0) != sizeof read_token)
            die(EXIT_LOAD, "load", "getrandom: %s", strerror(errno));
    ctl->sys_token = read_token;
    pid_t pid = getpid();
    int rc = install_always_filter();
    if (rc) die(EXIT_LOAD, "sandbox", "cannot install the seccomp filter: %s", strerror(-rc));
    scmp_filter_ctx ctx = seccomp_init(opt.allow_syscalls ? SCMP_ACT_ALLOW : SCMP_ACT_TRAP);
    rc = ctx ? seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRAP) : -ENOMEM;
    if (!opt.allow_syscalls) {     /* allow-list: everything else traps */
        for (unsigned i = 0; !rc && i < sizeof timing_calls / sizeof *timing_calls; i++)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, timing_calls[i], 0);
        for (unsigned i = 0; !rc && i < sizeof runner_calls / sizeof *runner_calls; i++)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, runner_calls[i], 1, SCMP_A5_64(SCMP_CMP_EQ, sys_token));
        if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(read), 1, SCMP_A5_64(SCMP_CMP_EQ, read_token));
    } else {                       /* deny-list: what is refused always */
        for (unsigned i = 0; !rc && i < sizeof refused_calls / sizeof *refused_calls; i++)
            rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, refused_calls[i], 0);
        /* signals only to this process */
        if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(kill), 1, SCMP_A0_32(SCMP_CMP_NE, (uint32_t)pid));
        if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(tkill), 1, SCMP_A0_32(SCMP_CMP_NE, (uint32_t)pid));
        if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(tgkill), 1, SCMP_A0_32(SCMP_CMP_NE, (uint32_t)pid));
        if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(rt_sigqueueinfo), 1, SCMP_A0_32(SCMP_CMP_NE, (uint32_t)pid));
        if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(rt_tgsigqueueinfo), 1, SCMP_A0_32(SCMP_CMP_NE, (uint32_t)pid));
        /* raising a limit back (root may): prlimit64 with a new limit */
        if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(prlimit64), 1, SCMP_A2_64(SCMP_CMP_NE, 0));
        /* opening a file for writing: open's flags are argument 1, openat's argument 2 */
        static const int write_flags[] = { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND };
        for (unsigned i = 0; !rc && i < sizeof write_flags / sizeof *write_flags; i++) {
            uint32_t fl = (uint32_t)write_flags[i];
            rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(open), 1, SCMP_A1_32(SCMP_CMP_MASKED_EQ, fl, fl));
            if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(openat), 1, SCMP_A2_32(SCMP_CMP_MASKED_EQ, fl, fl));
        }
    }
    if (!rc) rc = seccomp_load(ctx);
    if (rc) die(EXIT_LOAD, "sandbox", "cannot install the seccomp filter: %s", strerror(-rc));
    /* ctx is not released: freeing could make an unmarked system call (munmap) */
}

/* --layout: struct ctl as the compiler laid it out, for the test that checks cyclebench/runner/layout.py */
static void print_layout(void) {
    #define F(name, field) out("layout %s %zu\n", name, offsetof(struct ctl, field))
    F("saved_rsp", saved_rsp); F("loop_count", loop_count); F("reg_init", reg_init); F("scratch", scratch);
    F("read_fd", read_fd); F("read_size", read_size); F("read_ret", read_ret); F("data_ptr", data_ptr);
    F("data_size", data_size); F("sym", sym); F("tsc_start", tsc_start); F("tsc_end", tsc_end);
    F("grp_start", grp_start); F("grp_end", grp_end); F("pmc_idx", pmc_idx); F("pmc_start", pmc_start);
    F("pmc_end", pmc_end); F("sys_token", sys_token); F("fp_status", fp_status);
    #undef F
    out("layout size %zu\nlayout max_events %d\nlayout max_syms %d\n", sizeof(struct ctl), MAX_EVENTS, MAX_SYMS);
}

int main(int argc, char **argv) {
    static struct reading ra, rb, rca, rcb, rka, rkb, rpa, rpb;
    stack_t ss;
    struct sigaction sa;
    page_size = sysconf(_SC_PAGESIZE);
    out("protocol %d\n", RUNNER_PROTOCOL);
    parse_args(argc, argv);
    if (fcntl(opt.out_fd, F_GETFD) < 0) { int bad = opt.out_fd; opt.out_fd = 1; die(EXIT_USAGE, "usage", "--out-fd %d is not open", bad); }
    if (opt.layout) { print_layout(); oflush(); return 0; }

    if (opt.probe) { open_events(); out("done\n"); oflush(); return 0; }
    if (!opt.blob_path || opt.e_a < 0 || opt.e_b < 0) die(EXIT_USAGE, "usage", "need BLOB, --run-a and --run-b");

    /* Faults are reported from an alternate stack: the snippet may have moved RSP anywhere. */
    ss.ss_sp = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ss.ss_size = 1 << 16; ss.ss_flags = 0;
    if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, NULL)) die(EXIT_LOAD, "load", "signal stack: %s", strerror(errno));
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigfillset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGALRM, SIGSYS, SIGXCPU};
    for (unsigned i = 0; i < sizeof sigs / sizeof *sigs; i++)
        if (sigaction(sigs[i], &sa, NULL)) die(EXIT_LOAD, "load", "sigaction: %s", strerror(errno));

    leave_terminal();
    pin_cpu();
    load_blob();
    load_data();
    load_symbols();
    uint8_t *areas[5];
    for (int i = 0; i < 5; i++) {
        areas[i] = map_area(i == 0 ? opt.r14_size : opt.area_size, i);
        ctl->reg_init[i] = (uint64_t)(areas[i] + (i == 0 ? opt.r14_size : opt.area_size) / 2);
    }
    if (opt.patch_table >= 0 && (opt.patch_table < opt.code_size ||
                                 (size_t)(opt.patch_table + 8 * opt.patch_count) > blob_len))
        die(EXIT_USAGE, "usage", "--patch-table must point into the data pages");
    open_events();
    map_setup();
    if (opt.n_groups) select_group(0);
    out("info tsc_hz %.0f\n", opt.tsc_hz > 0 ? opt.tsc_hz : tsc_hz());
    for (int i = 0; i < 5; i++)
        out("info area %d %p %p\n", i, (void *)area_lo[i], (void *)area_hi[i]);
    if (opt.data_path) out("info area 5 %p %p\n", (void *)area_lo[5], (void *)area_hi[5]);
    out("info blob %p\n", (void *)blob);
    oflush();

    /* A whole-run timeout: the alarm handler reports where the code was stuck. */
    if (opt.timeout > 0) {
        struct itimerval it = {{0, 0}, {(long)opt.timeout, (long)((opt.timeout - (long)opt.timeout) * 1e6)}};
        if (setitimer(ITIMER_REAL, &it, NULL)) die(EXIT_LOAD, "load", "setitimer: %s", strerror(errno));
    }
    install_sandbox();

    if (opt.e_one_time >= 0) call(opt.e_one_time, 0, NULL);
    for (long i = 0; i < opt.initial_warm_up; i++) call(opt.e_b, opt.loop, NULL);
    if (opt.auto_loop_ticks) set_loop_target();
    uint64_t loop = opt.auto_loop_ticks ? choose_loop() : (uint64_t)opt.loop;
    out("info loop %llu\n", (unsigned long long)loop);
    /* Flushed here, before the warm-up runs, and not between repetitions: a system call between
     * runs made the next run slower (kernel entry disturbs the predictors; measured 7-17 cycles
     * per call in the routine harness's A pass, and an imul latency of 3.42). */
    oflush();

    /* One pass per group (one pass with no group when there are no events); the TSC calibration
     * runs in the first pass only: the other passes contribute their events, not cycles. */
    for (int g = 0; g < (opt.n_groups ? opt.n_groups : 1); g++) {
        if (opt.n_groups) { if (g) select_group(g); out("group %d\n", g); }
        int calib = opt.e_ca >= 0 && g == 0, check = opt.e_ka >= 0 && g == 0, gauge = opt.e_pa >= 0 && g == 0;
        for (long rep = -opt.warm_up; rep < opt.reps; rep++) {
            map_measuring = rep >= 0;
            if (calib) warm_calibration();
            if (calib) { call(opt.e_ca, opt.calib_loop, &rca); call(opt.e_cb, opt.calib_loop, &rcb); }
            if (check) { call(opt.e_ka, opt.calib_loop, &rka); call(opt.e_kb, opt.calib_loop, &rkb); }
            if (gauge) { call(opt.e_pa, opt.calib_loop, &rpa); call(opt.e_pb, opt.calib_loop, &rpb); }
            call(opt.e_a, loop, &ra);
            call(opt.e_b, loop, &rb);
            if (rep < 0) continue;
            if (calib) { print_reading(rep, "ca", &rca); print_reading(rep, "cb", &rcb); }
            if (check) { print_reading(rep, "ka", &rka); print_reading(rep, "kb", &rkb); }
            if (gauge) { print_reading(rep, "pa", &rpa); print_reading(rep, "pb", &rpb); }
            print_reading(rep, "a", &ra);
            print_reading(rep, "b", &rb);
        }
    }
    if (cur_group >= 0) sys3(SYS_ioctl, fds[opt.group_first[cur_group]], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
    if (opt.use_rdpmc) out("info rdpmc_moves %ld\n", rdpmc_moves);
    out("info fp_status %#llx\n", (unsigned long long)ctl->fp_status);   /* as the last measured run left it */
    map_report();
    out("done\n");
    oflush();
    _exit(0);   /* exit() would run libc clean-up under the filter */
}
