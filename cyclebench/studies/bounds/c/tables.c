/* The OS cost of bounds tables, the measurable analogue of "Intel MPX Explained"'s
 * table_allocation: CHUNKS chunks, each aligned to 1 MiB (so that under MPX each needs its own
 * bounds table), and a pointer stored into each.
 *
 * usage: tables alloc|free CHUNKS ROUNDS
 *   alloc: every round allocates CHUNKS new chunks and stores a pointer into each (they are
 *          released at exit, as in the reference);
 *   free:  every round also frees them right after (with the emulated MPX, their bounds tables
 *          are unmapped first, as the kernel did when a region went away).
 * Under the emulated MPX (-DCB_MPX_EMU) the pointer store is followed by emu_stx, which maps a
 * 4 MiB bounds table for the chunk's 1 MiB region on first use. Prints "iterations ROUNDS",
 * "tables N" (bounds tables mapped per round) and, over the rounds (not start-up or exit), per round: "user_us", "sys_us",
 * "minflt" (getrusage) and "page_faults" (the software perf event, -1 where it cannot be opened). */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "checks.h"

#define ALIGN (1l << 20)

static int open_faults(void) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_PAGE_FAULTS;
    a.disabled = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* The alloc variant keeps its chunks until exit, as the reference did: ASan's leak check at exit
 * would call that an error (unused in the other builds). */
const char *__asan_default_options(void) { return "detect_leaks=0"; }

static double us(struct timeval t) { return t.tv_sec * 1e6 + t.tv_usec; }

int main(int argc, char **argv) {
    if (argc < 4 || (strcmp(argv[1], "alloc") && strcmp(argv[1], "free"))) {
        fprintf(stderr, "usage: tables alloc|free CHUNKS ROUNDS\n");
        return 2;
    }
    int do_free = argv[1][0] == 'f';
    long chunks = atol(argv[2]), rounds = atol(argv[3]);
    if (chunks < 1 || rounds < 1) { fprintf(stderr, "tables: CHUNKS and ROUNDS must be >= 1\n"); return 2; }
    int *target = malloc(sizeof *target);         /* something to point to */
    int ***chunk = malloc(chunks * sizeof *chunk);
    if (!target || !chunk) { fprintf(stderr, "tables: out of memory\n"); return 3; }
    *target = 5;
#ifdef CB_MPX_EMU
    emu_init();
#endif
    int fd = open_faults();
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    for (long r = 0; r < rounds; r++) {
        for (long i = 0; i < chunks; i++) {
            if (posix_memalign((void **)&chunk[i], ALIGN, sizeof(int *))) {
                fprintf(stderr, "tables: posix_memalign failed at chunk %ld\n", i);
                return 3;
            }
            *chunk[i] = target;
#ifdef CB_MPX_EMU
            emu_stx(chunk[i], target, (uintptr_t)target, (uintptr_t)target + sizeof *target - 1);
#endif
        }
        if (do_free)
            for (long i = 0; i < chunks; i++) {
#ifdef CB_MPX_EMU
                emu_release(chunk[i], sizeof(int *));
#endif
                free(chunk[i]);
            }
    }
    long long faults = -1;
    if (fd >= 0) {
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        if (read(fd, &faults, sizeof faults) != sizeof faults) faults = -1;
    }
    getrusage(RUSAGE_SELF, &r1);
    printf("iterations %ld\n", rounds);
#ifdef CB_MPX_EMU
    printf("tables %.1f\n", (double)emu_tables / rounds);
#else
    printf("tables 0.0\n");
#endif
    printf("user_us %.1f\nsys_us %.1f\nminflt %.1f\npage_faults %.1f\n",
           (us(r1.ru_utime) - us(r0.ru_utime)) / rounds, (us(r1.ru_stime) - us(r0.ru_stime)) / rounds,
           (double)(r1.ru_minflt - r0.ru_minflt) / rounds, faults < 0 ? -1.0 : (double)faults / rounds);
    /* alloc: the chunks stay until exit, as in the reference (LeakSanitizer is told so) */
    return 0;
}
