// A foreground "render" loop for scripts/frame-stall-probe.sh: at 60 Hz, touch 1/60 of
// a working set (80 % of touches in its hottest fifth), map and fill a fresh per-frame
// buffer, spin for the frame's CPU time (its own thread's CPU time, so a frame that
// waits for a core takes longer); print frame-time statistics at the end, with where
// the slow frames' time went: the working set's and file's touches (the loop's own
// faults), the fresh buffer (allocation, where direct reclaim stalls), or the CPU part.
//   usage: fg WS_MIB SECONDS CPU_MS BUF_KIB [FILE_MIB FILE]
// With FILE_MIB, FILE (created at that size) is mapped read-only and 1/60 of it is
// read per frame like code pages, with the same skew.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// A page of an n-page set: 80 % of picks in its hottest fifth (xorshift64 state x).
static size_t skewed(uint64_t *x, size_t n) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    size_t hot = n / 5 + 1;
    size_t p = (*x % 5) ? (*x >> 8) % hot : hot + (*x >> 8) % (n - hot + 1);
    return p < n ? p : n - 1;
}

static double cpu_ms_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static long majflt_now(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_majflt;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 7) {
        fprintf(stderr, "usage: fg WS_MIB SECONDS CPU_MS BUF_KIB [FILE_MIB FILE]\n");
        return 2;
    }
    size_t pages = (size_t)atof(argv[1]) * 256;
    int frames = (int)(atof(argv[2]) * 60);
    double cpu_ms = atof(argv[3]);
    size_t buf = (size_t)atof(argv[4]) * 1024;
    volatile char *ws = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ws == MAP_FAILED) return 1;
    for (size_t p = 0; p < pages; p++) ws[p * 4096] = (char)p;
    volatile double sink = 0;
    size_t fpages = argc == 7 ? (size_t)atof(argv[5]) * 256 : 0;
    volatile const char *fm = NULL;
    if (fpages) {
        int fd = open(argv[6], O_RDONLY);
        if (fd < 0) return 1;
        fm = mmap(NULL, fpages * 4096, PROT_READ, MAP_SHARED, fd, 0);
        if (fm == MAP_FAILED) return 1;
        for (size_t p = 0; p < fpages; p++) (void)fm[p * 4096];
    }
    double *ft = calloc(frames, sizeof(double));
    // Slow frames (over 16.6 ms): how many, how many of them took a major fault of the
    // loop's own, and the time they spent in each part.
    int slow = 0, slow_faulted = 0;
    double slow_touch = 0, slow_alloc = 0, slow_cpu = 0, alloc_max = 0;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    uint64_t x = 88172645463325252ull;
    double next = now_ms();
    for (int f = 0; f < frames; f++) {
        double t0 = now_ms();
        long m0 = majflt_now();
        for (size_t i = 0; i < pages / 60 + 1; i++) {
            ws[skewed(&x, pages) * 4096] += 1;
        }
        for (size_t i = 0; fpages && i < fpages / 60 + 1; i++) {
            sink += fm[skewed(&x, fpages) * 4096];
        }
        double t1 = now_ms();
        if (buf) {
            char *b = mmap(NULL, buf, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (b != MAP_FAILED) {
                memset(b, f, buf);
                munmap(b, buf);
            }
        }
        double t2 = now_ms(), c0 = cpu_ms_now();
        while (cpu_ms_now() - c0 < cpu_ms) sink += 1.0;
        double t3 = now_ms();
        ft[f] = t3 - t0;
        if (t2 - t1 > alloc_max) alloc_max = t2 - t1;
        if (ft[f] > 16.6) {
            slow++;
            slow_faulted += majflt_now() > m0;
            slow_touch += t1 - t0;
            slow_alloc += t2 - t1;
            slow_cpu += t3 - t2;
        }
        next += 1000.0 / 60.0;
        double wait = next - now_ms();
        if (wait > 0) {
            struct timespec s = { 0, (long)(wait * 1e6) };
            nanosleep(&s, NULL);
        } else {
            next = now_ms();
        }
    }
    getrusage(RUSAGE_SELF, &ru1);
    int over = 0;
    double sum = 0;
    for (int f = 0; f < frames; f++) {
        sum += ft[f];
        over += ft[f] > 16.6;
    }
    qsort(ft, frames, sizeof(double), cmp);
    printf("frames %d mean_ms %.2f p50_ms %.2f p95_ms %.2f p99_ms %.2f max_ms %.2f over_16.6ms %d (%.2f %%) "
           "own_major_faults %ld\n"
           "  slow frames %d: with an own major fault %d; their time in touches %.1f ms, fresh buffer %.1f ms, "
           "cpu part %.1f ms; fresh buffer max %.2f ms\n",
           frames, sum / frames, ft[frames / 2], ft[frames * 95 / 100], ft[frames * 99 / 100], ft[frames - 1], over,
           100.0 * over / frames, ru1.ru_majflt - ru0.ru_majflt,
           slow, slow_faulted, slow_touch, slow_alloc, slow_cpu, alloc_max);
    return 0;
}
