/* cb-trace: the instructions one call of a routine executes, by single-stepping (memset-like calls,
 * or any function of two integers with --call).
 *
 * Built and run by cyclebench/routines/trace.py; not a user-facing program.
 *
 *   cb-trace --lib PATH --symbol NAME --sizes 8,16,... [--aligns 0,1,...] [--fill 0]
 *                   [--max-steps 4000000] [--call]
 *
 * For every (size, alignment) case it calls fn(buffer + alignment, fill, size) once with the trap
 * flag set and records the address of every instruction the routine executes, until it returns.
 * No ptrace: a trampoline sets EFLAGS.TF right before the call, the SIGTRAP handler records
 * uc_mcontext's RIP and clears TF when execution is back at the trampoline. A repeated string
 * instruction (rep stosb) traps once per iteration, so its address repeats once per iteration.
 * The buffer is page-aligned; the call is checked afterwards (the bytes must hold the fill).
 * With --call the routine is any function of two integers: each --sizes value v is traced as
 * fn(v, fill) (rdi = v, esi = fill, zero-extended), no buffer, and the case reports what it
 * returned ("arg", "ret") so the caller can check it.
 *
 * Output, one JSON object per line:
 *   {"case": {"size": 64, "align": 0, "seq": [[0, 1], [1, 1], [5, 64], ...]}}
 *       seq: [index into the code table, consecutive repeats] in execution order
 *   {"code": [["0x7f...", "c5f877..."], ...], "entry": "0x7f...", "entry_symbol": "memset"}
 *       per index: the address and up to 15 bytes from it (read through /proc/self/mem)
 *   {"status": "ok"}  or  {"status": "error", "detail": "..."}
 * Exit status: 0 ok, 2 usage/load error, 1 the routine misbehaved (wrong bytes, step limit).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define TF 0x100UL
#define MAX_CASES 4096
#define PAGE 4096

typedef void *(*memset_fn)(void *, int, size_t);

void *cb_trace_call(memset_fn fn, void *dst, int c, size_t n);
extern char cb_trace_after[];
__asm__(".text\n"
        ".globl cb_trace_call\n"
        ".type cb_trace_call, @function\n"
        "cb_trace_call:\n"
        "    push %rbx\n"                 /* rsp is 16-aligned again: the callee sees the ABI's 8 */
        "    mov %rdi, %rax\n"
        "    mov %rsi, %rdi\n"
        "    mov %edx, %esi\n"
        "    mov %rcx, %rdx\n"
        "    pushfq\n"
        "    orq $0x100, (%rsp)\n"
        "    popfq\n"                     /* TF: the first trap comes after the call, at fn's entry */
        "    call *%rax\n"
        ".globl cb_trace_after\n"
        "cb_trace_after:\n"               /* the handler clears TF when it sees this address */
        "    pop %rbx\n"
        "    ret\n"
        ".size cb_trace_call, .-cb_trace_call\n");

static uint64_t *steps;
static volatile size_t n_steps;
static size_t max_steps = 4000000;
static volatile int overflow;

static void on_trap(int sig, siginfo_t *si, void *ctx) {
    (void)sig; (void)si;
    ucontext_t *uc = ctx;
    uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    if (rip == (uint64_t)cb_trace_after) {
        uc->uc_mcontext.gregs[REG_EFL] &= ~TF;
        return;
    }
    if (n_steps < max_steps) steps[n_steps++] = rip;
    else { overflow = 1; uc->uc_mcontext.gregs[REG_EFL] &= ~TF; }
}

static void fail(int code, const char *what, const char *detail) {
    printf("{\"status\": \"error\", \"kind\": \"%s\", \"detail\": \"", what);
    for (const char *p = detail; p && *p; p++) putchar(*p == '"' || *p == '\\' ? '\'' : *p);
    printf("\"}\n");
    exit(code);
}

static int parse_list(const char *s, long *out, int max) {
    int n = 0;
    char *end;
    while (*s && n < max) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 0) return -1;
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

/* addresses seen so far (a small open-addressing table: routines are a few hundred instructions) */
#define TABLE 65536
static uint64_t tab_addr[TABLE];
static int tab_idx[TABLE];
static uint64_t order[TABLE];
static int n_unique;

static int index_of(uint64_t a) {
    size_t h = (a * 0x9E3779B97F4A7C15ULL) >> 48;
    for (;;) {
        if (!tab_addr[h]) {
            if (n_unique >= TABLE / 2) fail(1, "limit", "more than 32768 distinct instructions");
            tab_addr[h] = a; tab_idx[h] = n_unique; order[n_unique] = a;
            return n_unique++;
        }
        if (tab_addr[h] == a) return tab_idx[h];
        h = (h + 1) % TABLE;
    }
}

/* the steps of the last call as [code index, repeats] pairs, closing the case's JSON line */
static void print_seq(void) {
    size_t i = 0;
    int first = 1;
    while (i < n_steps) {
        size_t j = i + 1;
        while (j < n_steps && steps[j] == steps[i]) j++;
        printf("%s[%d, %zu]", first ? "" : ", ", index_of(steps[i]), j - i);
        first = 0;
        i = j;
    }
    printf("]}}\n");
}

int main(int argc, char **argv) {
    const char *lib = NULL, *symbol = NULL;
    long sizes[MAX_CASES], aligns[64 * 64];
    int n_sizes = 0, n_aligns = 1;
    int fill = 0, call = 0;
    aligns[0] = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--call")) { call = 1; continue; }
        if (!v) fail(2, "usage", "missing value");
        if (!strcmp(a, "--lib")) lib = v;
        else if (!strcmp(a, "--symbol")) symbol = v;
        else if (!strcmp(a, "--sizes")) n_sizes = parse_list(v, sizes, MAX_CASES);
        else if (!strcmp(a, "--aligns")) n_aligns = parse_list(v, aligns, 64 * 64);
        else if (!strcmp(a, "--fill")) fill = atoi(v);
        else if (!strcmp(a, "--max-steps")) max_steps = strtoul(v, NULL, 10);
        else fail(2, "usage", a);
        i++;
    }
    if (!lib || !symbol || n_sizes <= 0 || n_aligns <= 0) fail(2, "usage", "--lib, --symbol and --sizes are required");

    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) fail(2, "load", dlerror());
    memset_fn fn = (memset_fn)dlsym(h, symbol);
    if (!fn) fail(2, "load", dlerror());

    long max_size = 0, max_align = 0;
    for (int i = 0; !call && i < n_sizes; i++) if (sizes[i] > max_size) max_size = sizes[i];
    for (int i = 0; i < n_aligns; i++) if (aligns[i] > max_align) max_align = aligns[i];
    size_t span = ((size_t)(max_size + max_align) + 2 * PAGE - 1) / PAGE * PAGE;
    uint8_t *buf = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    steps = malloc(max_steps * sizeof *steps);
    if (buf == MAP_FAILED || !steps) fail(2, "load", "out of memory");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTRAP, &sa, NULL);

    for (int s = 0; call && s < n_sizes; s++) {
        n_steps = 0; overflow = 0;
        void *ret = cb_trace_call(fn, (void *)(uintptr_t)sizes[s], fill, 0);
        if (overflow) fail(1, "limit", "the call executed more instructions than --max-steps");
        printf("{\"case\": {\"arg\": %ld, \"ret\": %ld, \"seq\": [", sizes[s], (long)(intptr_t)ret);
        print_seq();
    }
    for (int s = 0; !call && s < n_sizes; s++) {
        for (int k = 0; k < n_aligns; k++) {
            uint8_t *dst = buf + aligns[k];
            size_t n = (size_t)sizes[s];
            memset(buf, fill ^ 0xff, span);
            n_steps = 0; overflow = 0;
            cb_trace_call(fn, dst, fill, n);
            if (overflow) fail(1, "limit", "the call executed more instructions than --max-steps");
            for (size_t i = 0; i < n; i++)
                if (dst[i] != (uint8_t)fill) fail(1, "wrong", "the routine did not set every byte");
            printf("{\"case\": {\"size\": %zu, \"align\": %ld, \"seq\": [", n, aligns[k]);
            print_seq();
        }
    }

    int mem = open("/proc/self/mem", O_RDONLY);
    printf("{\"code\": [");
    for (int i = 0; i < n_unique; i++) {
        uint8_t bytes[15];
        ssize_t got = mem >= 0 ? pread(mem, bytes, sizeof bytes, (off_t)order[i]) : -1;
        if (got <= 0) {   /* fall back to a direct read up to the end of the page */
            size_t room = PAGE - (order[i] % PAGE);
            got = room < sizeof bytes ? (ssize_t)room : (ssize_t)sizeof bytes;
            memcpy(bytes, (void *)order[i], (size_t)got);
        }
        printf("%s[\"%#llx\", \"", i ? ", " : "", (unsigned long long)order[i]);
        for (ssize_t b = 0; b < got; b++) printf("%02x", bytes[b]);
        printf("\"]");
    }
    Dl_info info;
    const char *name = dladdr((void *)fn, &info) && info.dli_sname ? info.dli_sname : "";
    printf("], \"entry\": \"%#llx\", \"entry_symbol\": \"%s\"}\n", (unsigned long long)(uintptr_t)fn, name);
    printf("{\"status\": \"ok\"}\n");
    return 0;
}
