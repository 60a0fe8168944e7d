/* The multithreading race of "Intel MPX Explained", written here for cyclebench: a pointer and its
 * bounds are stored by one thread and loaded by another, each non-atomically.
 *
 * usage: race fn|fp ELEMENTS ITERATIONS [CPU_READER CPU_WRITER]
 *   A background thread fills an array of ELEMENTS pointers with a pointer to the first, then the
 *   second, of two adjacent 1 KiB stack objects, alternately, until the main thread is done. The
 *   main thread, ITERATIONS times over the array, reads through each pointer:
 *     fn  at offset 1 KiB + 512, always out of bounds: a correct checker flags every access, so
 *         each unflagged access is a false negative;
 *     fp  at offset 0, always in bounds: each flagged access is a false positive.
 *   The threads are pinned to two CPUs (0 and 1 unless given).
 * Under the emulated MPX (-DCB_MPX_EMU) every pointer store is followed by emu_stx and every load
 * by emu_ldx, and a failed check is counted (MPX's CHKP_RT_MODE=count), not fatal. Prints
 * "accesses N", "flagged N" and "init_bounds N" (loads whose table entry held another pointer, so
 * the bounds were INIT and nothing was checked). Without it, the reads are plain (native, ASan).
 * The out-of-bounds read of fn lands in the other object or between the two; it stays inside
 * main's stack frame. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "checks.h"

#define OBJSIZE 1024
#define OFFSET (OBJSIZE + 512)

static char **arr;
static long elements;
static char *objs[2];
static int done;
static long flagged, init_bounds;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

__attribute__((noinline)) static void fill(char *obj) {
    for (long i = 0; i < elements; i++) {
        __atomic_store_n(&arr[i], obj, __ATOMIC_RELAXED);
#ifdef CB_MPX_EMU
        emu_stx(&arr[i], obj, (uintptr_t)obj, (uintptr_t)obj + OBJSIZE - 1);
#endif
    }
}

static void *writer(void *cpu) {
    pin(*(int *)cpu);
    for (long k = 0; !__atomic_load_n(&done, __ATOMIC_RELAXED); k++)
        fill(objs[k & 1]);
    return NULL;
}

__attribute__((noinline)) static long reader(long iterations, long offset) {
    long sum = 0;
    for (long k = 0; k < iterations; k++)
        for (long i = 0; i < elements; i++) {
            char *p = __atomic_load_n(&arr[i], __ATOMIC_RELAXED) + offset;
#ifdef CB_MPX_EMU
            uintptr_t lb, ub;
            emu_ldx(&arr[i], p - offset, &lb, &ub);
            init_bounds += lb == 0 && ub == ~(uintptr_t)0;
            flagged += (uintptr_t)p < lb || (uintptr_t)p > ub;
#endif
            sum += *(volatile char *)p;
        }
    return sum;
}

int main(int argc, char **argv) {
    if (argc < 4 || (strcmp(argv[1], "fn") && strcmp(argv[1], "fp"))) {
        fprintf(stderr, "usage: race fn|fp ELEMENTS ITERATIONS [CPU_READER CPU_WRITER]\n");
        return 2;
    }
    char obj1[OBJSIZE], obj2[OBJSIZE];
    memset(obj1, 2, sizeof obj1);
    memset(obj2, 4, sizeof obj2);
    objs[0] = obj1;
    objs[1] = obj2;
    elements = atol(argv[2]);
    long iterations = atol(argv[3]), offset = argv[1][1] == 'n' ? OFFSET : 0;
    int cpus[2] = {argc > 5 ? atoi(argv[4]) : 0, argc > 5 ? atoi(argv[5]) : 1};
    if (elements < 1 || iterations < 1) { fprintf(stderr, "race: ELEMENTS and ITERATIONS must be >= 1\n"); return 2; }
#ifdef CB_MPX_EMU
    emu_init();
#endif
    arr = malloc(elements * sizeof *arr);
    if (!arr) { fprintf(stderr, "race: cannot allocate the array\n"); return 3; }
    done = 0;
    fill(obj1);
    pin(cpus[0]);
    pthread_t t;
    if (pthread_create(&t, NULL, writer, &cpus[1])) { fprintf(stderr, "race: cannot start the thread\n"); return 3; }
    long sum = reader(iterations, offset);
    __atomic_store_n(&done, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    free(arr);
    printf("accesses %ld\nflagged %ld\ninit_bounds %ld\nsum %ld\nobject_distance %ld\n", iterations * elements, flagged,
           init_bounds, sum, (long)(obj2 - obj1));
    return 0;
}
