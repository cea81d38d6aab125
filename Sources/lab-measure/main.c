// lab-measure REPORT PROGRAM [ARGUMENT...]: runs PROGRAM as its child and reports what the
// kernel says it used.
//
// `lab compare` starts every process it measures through this program instead of directly,
// because a child's peak memory (ru_maxrss) starts at the high-water mark of the process that
// spawned it: Linux carries it over when the child calls exec. Spawned straight from `lab`,
// which holds a server and Foundation (about 40 MB), every process would report at least that.
// This small C program passes on about 5 MB (mostly the Swift runtime the package's linker
// adds to every executable); the same program written in Swift passed on about 9 MB.
//
// REPORT receives "pid N" as soon as the child runs, so the caller can sample and signal it,
// then "status S maxrss N utime SECONDS stime SECONDS wall SECONDS" when it ends, N in the
// kernel's unit (KiB on Linux, bytes on Darwin: `lab` converts it through its platform seam). The exit
// status is the child's; a child ended by a signal gives 128 + the signal.

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double seconds(struct timeval time) { return time.tv_sec + time.tv_usec / 1e6; }

int main(int argc, char *argv[]) {
    if (argc < 3) {
        fprintf(stderr, "lab-measure: usage: lab-measure REPORT PROGRAM [ARGUMENT...]\n");
        return 64;
    }
    FILE *report = fopen(argv[1], "w");
    if (report == NULL) {
        fprintf(stderr, "lab-measure: cannot write %s: %s\n", argv[1], strerror(errno));
        return 64;
    }

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid;
    int spawned = posix_spawn(&pid, argv[2], NULL, NULL, &argv[2], environ);
    if (spawned != 0) {
        fprintf(stderr, "lab-measure: cannot start %s: %s\n", argv[2], strerror(spawned));
        return 64;
    }
    fprintf(report, "pid %d\n", (int)pid);
    fflush(report);

    int status = 0;
    struct rusage usage;
    while (wait4(pid, &status, 0, &usage) == -1 && errno == EINTR) {}
    clock_gettime(CLOCK_MONOTONIC, &end);

    double wall = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    fprintf(report, "status %d maxrss %ld utime %.6f stime %.6f wall %.9f\n", status, usage.ru_maxrss,
            seconds(usage.ru_utime), seconds(usage.ru_stime), wall);
    fclose(report);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
