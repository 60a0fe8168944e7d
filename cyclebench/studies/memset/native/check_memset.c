/* cb-check-memset: checks a memset-like routine in a shared object against memset's contract.
 *
 * Built and run by cyclebench/studies/memset/correctness.py; not a user-facing program.
 *
 *   cb-check-memset --lib PATH --symbol NAME [--max-size 4096] [--size-step 1]
 *                   [--max-align 63] [--align-step 1] [--fills 165,0] [--large 64]
 *                   [--large-max 4194304] [--large-align-step 1] [--seed 1] [--timeout 60]
 *
 * Contract checked for every case: after fn(dst, c, n), the n bytes from dst equal (c & 0xff),
 * every other byte of the window (guard bytes before and after, at least 256 each side) keeps its
 * sentinel value (fill ^ 0xff), the return value is dst, the callee-saved registers (rbx, rbp,
 * r12-r15) and rsp are preserved, and the direction flag is clear.
 *
 * Cases, in order (the first failure stops the check, so it is the smallest failing case):
 *   1. every size 0..max-size (step size-step) x every dst alignment 0..max-align (step
 *      align-step, relative to a 64-byte boundary) x every fill in --fills;
 *   2. --large random cases: size log-uniform in (max-size, large-max], dst offset in a page
 *      uniform in 0..4095 (rounded down to large-align-step), fill uniform in 1..255.
 *
 * The routine runs in a forked child, so a crash (signal), a hang (SIGALRM after --timeout
 * seconds) or a corrupted stack cannot take the checker down: the parent reads the case being run
 * from shared memory and reports it. The windows sit between PROT_NONE pages, so a runaway write
 * faults instead of corrupting the checker.
 *
 * Output: one JSON object on stdout, e.g.
 *   {"status": "ok", "calls": 524416, "seconds": 0.31}
 *   {"status": "fail", "kind": "not_written", "phase": "exhaustive", "size": 64, "align": 1,
 *    "page_offset": 321, "fill": 165, "offset": 63, "got": 90, "expected": 165, "calls": 9000}
 * kind is one of: not_written, wrong_value, before_start, past_end, return_value, clobbered_reg,
 * stack_pointer, direction_flag, crash (with "signal"), timeout. offset is relative to dst.
 * Exit status: 0 ok, 1 routine incorrect, 2 usage or load error ({"status": "error", ...}).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GUARD 256
#define PAGE 4096

typedef void *(*memset_fn)(void *, int, size_t);

struct abi_state {
    uint64_t rbx, rbp, r12, r13, r14, r15, rsp_delta, rflags;
};

/* cb_call_checked(fn, dst, c, n, out): calls fn(dst, c, n) with known values in the callee-saved
 * registers, and records what they hold afterwards. Returns fn's return value. */
void *cb_call_checked(memset_fn fn, void *dst, int c, size_t n, struct abi_state *out);
__attribute__((used)) static uint64_t cb_saved_rsp;

#define CANARY_RBX 0x5b5b5b5b5b5b5b01ull
#define CANARY_RBP 0x5b5b5b5b5b5b5b02ull
#define CANARY_R12 0x5b5b5b5b5b5b5b03ull
#define CANARY_R13 0x5b5b5b5b5b5b5b04ull
#define CANARY_R14 0x5b5b5b5b5b5b5b05ull
#define CANARY_R15 0x5b5b5b5b5b5b5b06ull

__asm__(
    ".intel_syntax noprefix\n"
    ".text\n"
    ".globl cb_call_checked\n"
    ".type cb_call_checked, @function\n"
    "cb_call_checked:\n"
    "  push rbx\n  push rbp\n  push r12\n  push r13\n  push r14\n  push r15\n"
    "  push r8\n"                               /* out; rsp is now 16-byte aligned */
    "  mov [rip + cb_saved_rsp], rsp\n"
    "  mov rax, rdi\n"
    "  mov rdi, rsi\n  mov esi, edx\n  mov rdx, rcx\n"
    "  movabs rbx, 0x5b5b5b5b5b5b5b01\n"
    "  movabs rbp, 0x5b5b5b5b5b5b5b02\n"
    "  movabs r12, 0x5b5b5b5b5b5b5b03\n"
    "  movabs r13, 0x5b5b5b5b5b5b5b04\n"
    "  movabs r14, 0x5b5b5b5b5b5b5b05\n"
    "  movabs r15, 0x5b5b5b5b5b5b5b06\n"
    "  call rax\n"
    "  mov r11, rsp\n"
    "  mov rsp, [rip + cb_saved_rsp]\n"
    "  mov r10, [rsp]\n"
    "  mov [r10], rbx\n  mov [r10 + 8], rbp\n  mov [r10 + 16], r12\n"
    "  mov [r10 + 24], r13\n  mov [r10 + 32], r14\n  mov [r10 + 40], r15\n"
    "  sub r11, rsp\n  mov [r10 + 48], r11\n"
    "  pushfq\n  pop rcx\n  mov [r10 + 56], rcx\n"
    "  cld\n"
    "  pop r8\n  pop r15\n  pop r14\n  pop r13\n  pop r12\n  pop rbp\n  pop rbx\n"
    "  ret\n"
    ".size cb_call_checked, .-cb_call_checked\n"
    ".att_syntax prefix\n");

/* Shared between the parent and the child that runs the routine. */
struct shared {
    volatile int phase; /* 0 load, 1 exhaustive, 2 large, 3 done */
    volatile uint64_t size, align, page_offset, fill, calls;
    volatile int failed;
    char kind[32];
    volatile int64_t offset;
    volatile uint64_t got, expected;
    char detail[160];
};

static struct shared *S;

struct options {
    const char *lib, *symbol;
    uint64_t max_size, size_step, max_align, align_step, large, large_max, large_align_step, seed;
    int fills[16];
    int nfills;
    unsigned timeout;
};

/* Index of the first byte in p[0..n) that is not b, or n. */
static size_t first_not(const unsigned char *p, size_t n, unsigned char b)
{
    uint64_t pat = 0x0101010101010101ull * b;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        uint64_t acc = 0;
        for (int k = 0; k < 8; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * k, 8);
            acc |= w ^ pat;
        }
        if (acc)
            break;
    }
    for (; i < n; i++)
        if (p[i] != b)
            return i;
    return n;
}

static void fail(const char *kind, int64_t offset, uint64_t got, uint64_t expected, const char *detail)
{
    S->failed = 1;
    snprintf(S->kind, sizeof S->kind, "%s", kind);
    S->offset = offset;
    S->got = got;
    S->expected = expected;
    snprintf(S->detail, sizeof S->detail, "%s", detail ? detail : "");
}

/* Runs one case on a window [lo, hi) that holds `sentinel` everywhere. Returns 0 if correct, and
 * leaves the window all sentinel again. */
static int run_case(memset_fn fn, unsigned char *lo, unsigned char *hi, unsigned char *dst, size_t n,
                    int c)
{
    unsigned char fill = (unsigned char)c, sentinel = fill ^ 0xff;
    struct abi_state st;
    S->calls++;
    void *ret = cb_call_checked(fn, dst, c, n, &st);

    size_t before = (size_t)(dst - lo), after = (size_t)(hi - dst - n);
    size_t i = first_not(lo, before, sentinel);
    if (i < before) {
        fail("before_start", (int64_t)i - (int64_t)before, lo[i], sentinel, NULL);
        return 1;
    }
    i = first_not(dst, n, fill);
    if (i < n) {
        fail(dst[i] == sentinel ? "not_written" : "wrong_value", (int64_t)i, dst[i], fill, NULL);
        return 1;
    }
    i = first_not(dst + n, after, sentinel);
    if (i < after) {
        fail("past_end", (int64_t)(n + i), dst[n + i], sentinel, NULL);
        return 1;
    }
    if (ret != dst) {
        char d[96];
        snprintf(d, sizeof d, "returned dst%+lld", (long long)((intptr_t)ret - (intptr_t)dst));
        fail("return_value", 0, (uint64_t)(uintptr_t)ret, (uint64_t)(uintptr_t)dst, d);
        return 1;
    }
    static const char *names[6] = {"rbx", "rbp", "r12", "r13", "r14", "r15"};
    const uint64_t want[6] = {CANARY_RBX, CANARY_RBP, CANARY_R12, CANARY_R13, CANARY_R14, CANARY_R15};
    const uint64_t have[6] = {st.rbx, st.rbp, st.r12, st.r13, st.r14, st.r15};
    for (int r = 0; r < 6; r++) {
        if (have[r] != want[r]) {
            fail("clobbered_reg", 0, have[r], want[r], names[r]);
            return 1;
        }
    }
    if (st.rsp_delta != 0) {
        fail("stack_pointer", 0, st.rsp_delta, 0, "rsp changed across the call");
        return 1;
    }
    if (st.rflags & (1u << 10)) {
        fail("direction_flag", 0, 1, 0, "returned with DF set");
        return 1;
    }
    memset(dst, sentinel, n); /* the window is all sentinel again */
    return 0;
}

/* A window of `len` bytes ending exactly at a PROT_NONE page, with a PROT_NONE page before it. */
static unsigned char *map_window(size_t len)
{
    size_t body = (len + PAGE - 1) / PAGE * PAGE;
    unsigned char *m = mmap(NULL, body + 2 * PAGE, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    mprotect(m, PAGE, PROT_NONE);
    mprotect(m + PAGE + body, PAGE, PROT_NONE);
    return m + PAGE + body - len;
}

static uint64_t rng_state;
static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int child(const struct options *o)
{
    void *h;
    if (strcmp(o->lib, "-") == 0)
        h = dlopen(NULL, RTLD_NOW);
    else
        h = dlopen(o->lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fail("load", 0, 0, 0, dlerror());
        return 2;
    }
    memset_fn fn = (memset_fn)dlsym(h, o->symbol);
    if (!fn) {
        fail("load", 0, 0, 0, "symbol not found");
        return 2;
    }
    alarm(o->timeout);

    /* 1. exhaustive small sizes: one window per fill value, each kept at its own sentinel;
     * window = GUARD | max_align | max_size | GUARD, 64-aligned */
    S->phase = 1;
    size_t wlen = (GUARD + o->max_align + o->max_size + GUARD + 63) / 64 * 64;
    unsigned char *win[16];
    for (int f = 0; f < o->nfills; f++) {
        win[f] = map_window(wlen);
        if (!win[f]) {
            fail("load", 0, 0, 0, "cannot map the test window");
            return 2;
        }
        memset(win[f], (o->fills[f] & 0xff) ^ 0xff, wlen);
    }
    for (uint64_t n = 0; n <= o->max_size; n += o->size_step) {
        for (uint64_t a = 0; a <= o->max_align; a += o->align_step) {
            for (int f = 0; f < o->nfills; f++) {
                int c = o->fills[f];
                unsigned char *w = win[f], *dst = w + GUARD + a;
                S->size = n;
                S->align = a;
                S->page_offset = (uintptr_t)dst % PAGE;
                S->fill = (uint64_t)c;
                if (run_case(fn, w, w + wlen, dst, n, c))
                    return 1;
            }
        }
    }

    /* 2. large random sizes */
    S->phase = 2;
    if (o->large) {
        size_t llen = GUARD + 2 * PAGE + o->large_max + GUARD;
        unsigned char *lw = map_window(llen);
        if (!lw) {
            fail("load", 0, 0, 0, "cannot map the large test window");
            return 2;
        }
        rng_state = o->seed;
        double lmin = (double)(o->max_size + 1), lmax = (double)o->large_max;
        for (uint64_t k = 0; k < o->large; k++) {
            uint64_t n;
            if (k == 0)
                n = o->large_max; /* always the largest */
            else {
                double u = (double)(rnd() >> 11) / 9007199254740992.0;
                n = (uint64_t)(lmin * pow(lmax / lmin, u));
                if (n > o->large_max)
                    n = o->large_max;
                if (n < o->max_size + 1)
                    n = o->max_size + 1;
                n -= n % o->size_step;
            }
            uint64_t off = rnd() % PAGE;
            off -= off % o->large_align_step;
            int c = 1 + (int)(rnd() % 255);
            if (o->nfills == 1 && (o->fills[0] & 0xff) == 0)
                c = o->fills[0]; /* a zero-only routine */
            unsigned char *base = lw + GUARD + (PAGE - (uintptr_t)(lw + GUARD) % PAGE) % PAGE;
            unsigned char *dst = base + off;
            memset(lw, (c & 0xff) ^ 0xff, llen);
            S->size = n;
            S->align = (uintptr_t)dst % 64;
            S->page_offset = off;
            S->fill = (uint64_t)c;
            if (run_case(fn, lw, lw + llen, dst, n, c))
                return 1;
        }
    }
    S->phase = 3;
    return 0;
}

static uint64_t parse_u64(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || !*s) {
        printf("{\"status\": \"error\", \"detail\": \"bad %s: %s\"}\n", what, s);
        exit(2);
    }
    return v;
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    struct options o = {.max_size = 4096, .size_step = 1, .max_align = 63, .align_step = 1,
                        .large = 64, .large_max = 4u << 20, .large_align_step = 1, .seed = 1,
                        .fills = {0xa5, 0}, .nfills = 2, .timeout = 60};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            printf("{\"status\": \"error\", \"detail\": \"option %s needs a value\"}\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--lib")) o.lib = v;
        else if (!strcmp(a, "--symbol")) o.symbol = v;
        else if (!strcmp(a, "--max-size")) o.max_size = parse_u64(v, a);
        else if (!strcmp(a, "--size-step")) o.size_step = parse_u64(v, a);
        else if (!strcmp(a, "--max-align")) o.max_align = parse_u64(v, a);
        else if (!strcmp(a, "--align-step")) o.align_step = parse_u64(v, a);
        else if (!strcmp(a, "--large")) o.large = parse_u64(v, a);
        else if (!strcmp(a, "--large-max")) o.large_max = parse_u64(v, a);
        else if (!strcmp(a, "--large-align-step")) o.large_align_step = parse_u64(v, a);
        else if (!strcmp(a, "--seed")) o.seed = parse_u64(v, a);
        else if (!strcmp(a, "--timeout")) o.timeout = (unsigned)parse_u64(v, a);
        else if (!strcmp(a, "--fills")) {
            char *copy = strdup(v), *save = NULL;
            o.nfills = 0;
            for (char *t = strtok_r(copy, ",", &save); t && o.nfills < 16; t = strtok_r(NULL, ",", &save))
                o.fills[o.nfills++] = (int)parse_u64(t, "fill");
            free(copy);
        } else {
            printf("{\"status\": \"error\", \"detail\": \"unknown option %s\"}\n", a);
            return 2;
        }
    }
    if (!o.lib || !o.symbol || !o.size_step || !o.align_step || !o.large_align_step || !o.nfills ||
        o.max_align > PAGE || o.large_max <= o.max_size) {
        printf("{\"status\": \"error\", \"detail\": \"bad options (need --lib, --symbol; steps > 0; "
               "large-max > max-size)\"}\n");
        return 2;
    }

    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED) {
        printf("{\"status\": \"error\", \"detail\": \"mmap failed\"}\n");
        return 2;
    }
    memset((void *)S, 0, sizeof *S);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        printf("{\"status\": \"error\", \"detail\": \"fork failed\"}\n");
        return 2;
    }
    if (pid == 0)
        _exit(child(&o));
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

    static const char *phases[] = {"load", "exhaustive", "large", "done"};
    const char *phase = phases[S->phase & 3];
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !S->failed) {
        printf("{\"status\": \"ok\", \"calls\": %llu, \"seconds\": %.3f}\n",
               (unsigned long long)S->calls, secs);
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
        printf("{\"status\": \"error\", \"detail\": ");
        json_str(S->detail);
        printf("}\n");
        return 2;
    }
    const char *kind = S->kind;
    int sig = 0;
    if (WIFSIGNALED(status)) {
        sig = WTERMSIG(status);
        kind = sig == SIGALRM ? "timeout" : "crash";
    } else if (!S->failed) {
        kind = "crash";
    }
    printf("{\"status\": \"fail\", \"kind\": \"%s\", \"phase\": \"%s\", \"size\": %llu, \"align\": %llu, "
           "\"page_offset\": %llu, \"fill\": %llu, \"calls\": %llu, \"seconds\": %.3f",
           kind, phase, (unsigned long long)S->size, (unsigned long long)S->align,
           (unsigned long long)S->page_offset, (unsigned long long)S->fill,
           (unsigned long long)S->calls, secs);
    if (sig)
        printf(", \"signal\": %d, \"signal_name\": \"%s\"", sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    else if (S->failed)
        printf(", \"offset\": %lld, \"got\": %llu, \"expected\": %llu", (long long)S->offset,
               (unsigned long long)S->got, (unsigned long long)S->expected);
    else
        printf(", \"exit_status\": %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf(", \"detail\": ");
    json_str(S->detail);
    printf("}\n");
    return 1;
}
