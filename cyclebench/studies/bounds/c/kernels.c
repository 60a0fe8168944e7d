/* The four overhead microbenchmarks of "Intel MPX Explained", written here for cyclebench:
 *
 *   arraywrite   a char array written from its end with stride 3       (checks before stores)
 *   arrayread    a char array summed from its end with stride 2        (checks before loads)
 *   struct       an int written into each packed struct's inner array  (bounds narrowing)
 *   ptrcreation  five pointers into small objects stored per iteration (bounds stores, bndstx)
 *
 * usage: kernels KERNEL SIZE PASSES [OOB]
 *   SIZE: bytes of the array (arraywrite, arrayread), structs (struct), pointers (ptrcreation)
 *   PASSES: how many times the kernel runs over it (the iterations cyclebench times: n and 2n)
 *   OOB: 1 makes the kernel's first access out of bounds, for the checks' tests: one past the
 *        array's end, or (struct) one past the inner array, still inside the struct.
 * prints "checksum N" (the same for every build), "iterations PASSES", "cpu_ns N" (the thread's
 * CPU time of the passes, CLOCK_THREAD_CPUTIME_ID: what preemption by other processes cannot
 * inflate), "best_pass_ns" (the fastest of 20 slices' CPU time per pass) and, under the emulated
 * MPX, "emu_tables N" and "bounds_ok 0|1" (every stored pointer's bounds read back right).
 *
 * The arrays are passed as pointers to array types (char (*)[n]) so that UBSan's bounds checks
 * see their length; the code the compiler emits for an access is the same as through char *. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "checks.h"

/* The thread's CPU time in ns: the passes' cost without the time other processes took the CPU. */
static long cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000l + t.tv_nsec;
}
static long pass_ns;
static double best_pass_ns;      /* the fastest slice's CPU time per pass */

/* Run STMT PASSES times in SLICES slices, each timed: a burst of contention from the host (a busy
 * sibling thread slows execution itself, which CPU time does not exclude) lands in some slices;
 * the fastest slice is the least disturbed. */
#define SLICES 20
#define TIMED_PASSES(passes, stmt)                                                    \
    do {                                                                              \
        long done_ = 0;                                                               \
        for (int s_ = 0; s_ < SLICES; s_++) {                                         \
            long m_ = (passes) * (s_ + 1) / SLICES - done_, t_ = cpu_ns();            \
            for (long p_ = 0; p_ < m_; p_++) { stmt; }                                \
            t_ = cpu_ns() - t_;                                                       \
            pass_ns += t_;                                                            \
            if (m_ > 0 && (best_pass_ns == 0 || (double)t_ / m_ < best_pass_ns))      \
                best_pass_ns = (double)t_ / m_;                                       \
            done_ += m_;                                                              \
        }                                                                             \
    } while (0)

typedef struct __attribute__((packed)) { int x; int a[2]; int y; } item;

__attribute__((noinline)) static void arraywrite(long n, char (*arr)[n], long oob) {
    char *lo = *arr, *hi = *arr + n - 1;
    CB_OPAQUE(lo); CB_OPAQUE(hi);
    for (long i = n - 1 + oob; i >= 0; i -= 3) {
        CB_CHECK(lo, hi, &(*arr)[i], 1);
        (*arr)[i] = (char)i;
    }
}

__attribute__((noinline)) static long arrayread(long n, char (*arr)[n], long oob) {
    char *lo = *arr, *hi = *arr + n - 1;
    CB_OPAQUE(lo); CB_OPAQUE(hi);
    long r = 0;
    for (long i = n - 1 + oob; i >= 0; i -= 2) {
        CB_CHECK(lo, hi, &(*arr)[i], 1);
        r += (*arr)[i];
    }
    return r;
}

__attribute__((noinline)) static void structwrite(long n, item (*arr)[n], int idx) {
    char *lo = (char *)*arr, *hi = (char *)(*arr + n) - 1;
    CB_OPAQUE(lo); CB_OPAQUE(hi);
    for (long i = n - 1; i >= 0; i--) {
#ifdef CB_MPX_EMU
        /* narrowing (bndmk): the bounds of the inner array, not of the whole allocation */
        char *ilo = (char *)(*arr)[i].a, *ihi = ilo + sizeof((*arr)[i].a) - 1;
        CB_CHECK(ilo, ihi, &(*arr)[i].a[idx], sizeof(int));
#else
        CB_CHECK(lo, hi, &(*arr)[i].a[idx], sizeof(int));
#endif
        (*arr)[i].a[idx] = (int)i;
    }
}

struct objects { char *p[5]; long size[5]; };

#ifdef CB_MPX_EMU
#define CB_STX(slot, v, k) emu_stx(slot, v, (uintptr_t)o->p[k], (uintptr_t)o->p[k] + o->size[k] - 1)
#else
#define CB_STX(slot, v, k) ((void)0)
#endif
/* One pointer store: checked, stored through the array type (for UBSan), its bounds stored. */
#define CB_STORE(k, off)                                                    \
    do {                                                                    \
        char *v_ = &o->p[k][i % 64];                                        \
        CB_CHECK(lo, hi, &(*ptrs)[i + (off)], sizeof(char *));              \
        (*ptrs)[i + (off)] = v_;                                            \
        CB_STX(&(*ptrs)[i + (off)], v_, k);                                 \
    } while (0)

__attribute__((noinline)) static void ptrcreation(long n, char *(*ptrs)[n], const struct objects *o, long oob) {
    char *lo = (char *)*ptrs, *hi = (char *)(*ptrs + n) - 1;
    CB_OPAQUE(lo); CB_OPAQUE(hi);
    for (long i = n - 20 + oob * 15; i >= 0; i--) {
        CB_STORE(0, 0); CB_STORE(1, 2); CB_STORE(2, 3); CB_STORE(3, 4); CB_STORE(4, 5);
    }
}

static void *alloc(size_t bytes) {
    void *p = malloc(bytes);
    if (!p) { fprintf(stderr, "kernels: cannot allocate %zu bytes\n", bytes); exit(3); }
    return p;
}

static unsigned long run_ptrcreation(long n, long passes, long oob) {
    struct objects o;
    for (int k = 0; k < 5; k++) { o.size[k] = 100 + 10 * k; o.p[k] = alloc(o.size[k]); }
    char **ptrs = alloc(n * sizeof(char *));
    memset(ptrs, 0, n * sizeof(char *));
    TIMED_PASSES(passes, CB_OPAQUE(ptrs); ptrcreation(n, (char *(*)[n])ptrs, &o, oob));
    unsigned long sum = 0;
    int ok = 1;
    for (long j = 0; j < n; j++)
        for (int k = 0; k < 5; k++)
            if (ptrs[j] >= o.p[k] && ptrs[j] < o.p[k] + o.size[k]) {
                sum += (unsigned long)(k + 1) * 1000 + (unsigned long)(ptrs[j] - o.p[k]);
#ifdef CB_MPX_EMU
                uintptr_t lb, ub;
                emu_ldx(&ptrs[j], ptrs[j], &lb, &ub);
                ok &= lb == (uintptr_t)o.p[k] && ub == (uintptr_t)o.p[k] + o.size[k] - 1;
#endif
            }
#ifdef CB_MPX_EMU
    printf("bounds_ok %d\n", ok);
#endif
    (void)ok;
    free(ptrs);
    for (int k = 0; k < 5; k++) free(o.p[k]);
    return sum;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: kernels arraywrite|arrayread|struct|ptrcreation SIZE PASSES [OOB]\n");
        return 2;
    }
    const char *k = argv[1];
    long n = atol(argv[2]), passes = atol(argv[3]), oob = argc > 4 ? atol(argv[4]) : 0;
    if (n < 64 || passes < 1) { fprintf(stderr, "kernels: SIZE must be >= 64 and PASSES >= 1\n"); return 2; }
#ifdef CB_MPX_EMU
    emu_init();
#endif
    unsigned long sum = 0;
    if (!strcmp(k, "arraywrite") || !strcmp(k, "arrayread")) {
        char *a = alloc(n);
        for (long i = 0; i < n; i++) a[i] = (char)(i % 101);   /* 0..100: no sum cancels */
        if (k[5] == 'w') {
            TIMED_PASSES(passes, CB_OPAQUE(a); arraywrite(n, (char (*)[n])a, oob));
            for (long i = 0; i < n; i++) sum += (unsigned char)a[i];
        } else {
            TIMED_PASSES(passes, CB_OPAQUE(a); sum += (unsigned long)arrayread(n, (char (*)[n])a, oob));
        }
        free(a);
    } else if (!strcmp(k, "struct")) {
        item *s = alloc(n * sizeof(item));
        memset(s, 0, n * sizeof(item));
        int idx = oob ? 2 : 0;
        CB_OPAQUE(idx);
        TIMED_PASSES(passes, CB_OPAQUE(s); structwrite(n, (item (*)[n])s, idx));
        for (long i = 0; i < n; i++) sum += (unsigned)s[i].a[0] + (unsigned)s[i].y;
        free(s);
    } else if (!strcmp(k, "ptrcreation")) {
        sum = run_ptrcreation(n, passes, oob);
    } else {
        fprintf(stderr, "kernels: unknown kernel %s\n", k);
        return 2;
    }
    printf("checksum %lu\niterations %ld\ncpu_ns %ld\nbest_pass_ns %.1f\n", sum, passes, pass_ns, best_pass_ns);
#ifdef CB_MPX_EMU
    printf("emu_tables %ld\n", emu_tables);
#endif
    return 0;
}
