/* Split-stack microbenchmarks (build with and without -fsplit-stack; link with gold).
 *
 *   splitstack fib   ARG   N          fib(ARG), N times: the prologue check alone (no split)
 *   splitstack sum   DEPTH N          a non-tail-recursive sum 1..DEPTH, N times: deep stacks
 *   splitstack hot   0|1   N          one call exactly across a segment edge (1) or just
 *                                     below it (0), N times in a loop
 * Optional last argument "nosig": __splitstack_block_signals off (no sigprocmask per switch).
 * Prints "iterations N", the calls made per iteration, and (split-stack builds linked with
 * -Wl,--wrap=__generic_morestack and -DCB_WRAP) how many times __morestack switched to another
 * segment and how many segments it allocated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <sys/mman.h>

volatile long cb_morestack_calls, cb_segments;   /* volatile: IPA mod-ref must not cache them across calls */
#ifdef CB_WRAP
/* __morestack asks __generic_morestack for room; that maps a new segment (with a direct
 * syscall, so mmap cannot be wrapped) only when no cached segment follows the current one. A new
 * segment shows as a return address not seen before (the first frame of a segment always starts
 * at the same offset for the same request), so distinct addresses count the allocations. */
#define SEEN_BITS 20
static void *seen[1 << SEEN_BITS];
void *__real___generic_morestack(size_t *, void *, size_t);
__attribute__((no_split_stack)) void *__wrap___generic_morestack(size_t *pframe, void *old, size_t param) {
    void *r = __real___generic_morestack(pframe, old, param);
    cb_morestack_calls++;
    unsigned long h = ((unsigned long)r * 0x9E3779B97F4A7C15ul) >> (64 - SEEN_BITS);
    while (seen[h] && seen[h] != r) h = (h + 1) & ((1 << SEEN_BITS) - 1);
    if (!seen[h] && cb_segments < (1 << SEEN_BITS) / 2) { seen[h] = r; cb_segments++; }
    return r;
}
extern void __splitstack_block_signals(int *, int *);
#endif

__attribute__((noinline)) long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) long sum(long n) {
    if (n == 0) return 0;
    long r = sum(n - 1);
    __asm__ volatile("" : "+r"(r));      /* no accumulator: the compiler cannot make a loop */
    return n + r;
}

__attribute__((noinline)) long leaf(long x) { __asm__ volatile("" : "+r"(x)); return x + 1; }

/* The probe: a non-leaf function with a 1 KiB frame, so its split-stack check fails a little
 * before descend()'s does (a leaf with a small frame gets no check at all). */
__attribute__((noinline)) long probe(long x) {
    volatile char pad[1024];
    pad[0] = (char)x;
    return leaf(x) + pad[0];
}

/* Descend until a call of probe() splits (its depth: the edge), or to `cap`. With hot = 1 the
 * loop of probe() calls runs at the edge (every call crosses into the next segment), with hot = 0
 * one level above it (no call splits). Returns the loop's sum; *edge gets the depth. */
__attribute__((noinline)) long descend(long d, long cap, int hot, long reps, long *edge) {
    long before = cb_morestack_calls, r = probe(0);
    int split = cb_morestack_calls != before;
    if (split || d >= cap) {
        *edge = d;
        if (!hot && split) return -1;          /* the caller runs the loop */
        for (long i = 0; i < reps; i++) r += probe(i);
        return r;
    }
    r = descend(d + 1, cap, hot, reps, edge);
    if (r == -1) { r = 0; for (long i = 0; i < reps; i++) r += probe(i); }
    __asm__ volatile("" : "+r"(r));
    return r;
}

/* A normal build's room for deep recursion: raise the stack limit and re-execute (the stack's
 * gap below the mmap base is fixed at exec). Not under valgrind: keep such depths under 8 MiB. */
static void big_stack(char **argv, long bytes) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) || rl.rlim_cur == RLIM_INFINITY || (long)rl.rlim_cur >= bytes) return;
    if (getenv("CB_REEXEC")) return;
    rl.rlim_cur = bytes;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max) rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_STACK, &rl)) return;
    setenv("CB_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: splitstack fib|sum|hot ARG N [nosig]\n"); return 2; }
    const char *mode = argv[1];
    long arg = atol(argv[2]), n = atol(argv[3]);
    if (argc > 4 && !strcmp(argv[4], "nosig")) {
#ifdef CB_WRAP
        int off = 0; __splitstack_block_signals(&off, NULL);
#else
        fprintf(stderr, "nosig needs a split-stack build\n"); return 2;
#endif
    }
    long acc = 0, calls = 0;
    if (!strcmp(mode, "fib")) {
        for (long i = 0; i < n; i++) acc += fib(arg);
        long a = 1, b = 1;                   /* calls of fib(k) = 2 fib(k+1) - 1 */
        for (long k = 1; k < arg + 1; k++) { long t = a + b; a = b; b = t; }
        calls = 2 * a - 1;
    } else if (!strcmp(mode, "sum")) {
#ifndef CB_WRAP
        big_stack(argv, arg * 64 + (1L << 20));     /* a split-stack build grows by segments */
#endif
        for (long i = 0; i < n; i++) acc += sum(arg);
        if (acc != n * (arg * (arg + 1) / 2)) { fprintf(stderr, "wrong sum\n"); return 1; }
        calls = arg + 1;
    } else if (!strcmp(mode, "hot")) {
        long edge = -1;
        long before = cb_morestack_calls;
        acc = descend(0, 100000, arg != 0, n, &edge);
        printf("edge_depth %ld\n", edge);
        calls = 1;
        (void)before;
    } else { fprintf(stderr, "unknown mode %s\n", mode); return 2; }
    printf("result %ld\ncalls_per_iteration %ld\nmorestack_calls %ld\nsegments_allocated %ld\niterations %ld\n",
           acc, calls, cb_morestack_calls, cb_segments, n);
    return 0;
}
