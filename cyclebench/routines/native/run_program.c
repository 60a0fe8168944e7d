/* cb-run-program: run one program pinned to a CPU, under resource limits, timed with the TSC.
 *
 *   cb-run-program REPORT_FD CPU CPU_SECONDS AS_BYTES TIMEOUT_S -- PROGRAM ARGS...
 *
 * CPU -1: no pinning. AS_BYTES 0: no address-space limit (sanitizers reserve terabytes of shadow).
 * The program gets RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE 0 (it writes no file), RLIMIT_CORE 0, its
 * own process group (killed whole after TIMEOUT_S) and this process's stdin/stdout/stderr.
 * The TSC is read (lfence-ordered) right before fork() and right after wait4(), so the ticks
 * include fork, exec, dynamic loading and exit: a caller differences two iteration counts.
 * One line goes to REPORT_FD (closed in the program):
 *   ticks=T status=S signal=G timed_out=0|1 utime_us=U stime_us=V maxrss_kb=M
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

static volatile sig_atomic_t timed_out;
static volatile pid_t child;

static void on_alarm(int sig) {
    (void)sig;
    timed_out = 1;
    if (child > 0) kill(-child, SIGKILL);
}

static uint64_t tsc(void) {
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
}

static void limit(int resource, rlim_t value, rlim_t hard) {
    struct rlimit r = {value, hard};
    if (setrlimit(resource, &r) != 0) { perror("cb-run-program: setrlimit"); _exit(126); }
}

int main(int argc, char **argv) {
    if (argc < 8 || strcmp(argv[6], "--") != 0) {
        fprintf(stderr, "usage: cb-run-program REPORT_FD CPU CPU_SECONDS AS_BYTES TIMEOUT_S -- PROGRAM ARGS...\n");
        return 125;
    }
    int report = atoi(argv[1]);
    int cpu = atoi(argv[2]);
    rlim_t cpu_s = strtoull(argv[3], NULL, 10), as = strtoull(argv[4], NULL, 10);
    unsigned timeout = (unsigned)strtoul(argv[5], NULL, 10);
    FILE *out = fdopen(report, "w");
    if (!out) { perror("cb-run-program: report fd"); return 125; }
    fcntl(report, F_SETFD, FD_CLOEXEC);
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("cb-run-program: sched_setaffinity"); return 125; }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;              /* no SA_RESTART: wait4 returns EINTR, then waits again */
    sigaction(SIGALRM, &sa, NULL);

    uint64_t t0 = tsc();
    pid_t pid = fork();
    if (pid < 0) { perror("cb-run-program: fork"); return 125; }
    if (pid == 0) {
        setpgid(0, 0);
        /* default dispositions and no blocked signals: a Python parent ignores SIGXFSZ and SIGPIPE */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int s = 1; s < NSIG; s++)
            if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
        limit(RLIMIT_CPU, cpu_s, cpu_s + 1);   /* SIGXCPU at the soft limit, not SIGKILL */
        if (as) limit(RLIMIT_AS, as, as);
        limit(RLIMIT_FSIZE, 0, 0);
        limit(RLIMIT_CORE, 0, 0);
        execvp(argv[7], argv + 7);
        fprintf(stderr, "cb-run-program: cannot run %s: %s\n", argv[7], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);                     /* also here: the alarm may come before the child's own call */
    child = pid;
    alarm(timeout);
    int st = 0;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0) {
        if (errno != EINTR) { perror("cb-run-program: wait4"); return 125; }
    }
    uint64_t t1 = tsc();
    alarm(0);
    kill(-pid, SIGKILL);                   /* anything the program left behind in its group */
    fprintf(out, "ticks=%llu status=%d signal=%d timed_out=%d utime_us=%lld stime_us=%lld maxrss_kb=%ld\n",
            (unsigned long long)(t1 - t0), WIFEXITED(st) ? WEXITSTATUS(st) : -1,
            WIFSIGNALED(st) ? WTERMSIG(st) : 0, (int)timed_out,
            (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
            (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
    fclose(out);
    return 0;
}
