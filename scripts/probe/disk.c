// Measures the disk under FILE for scripts/sim-vs-kernel.sh, bypassing the page cache
// (O_DIRECT): the mean latency of N 4 KiB reads at random aligned offsets, one at a
// time, and the bandwidth of reading the whole file in 1 MiB requests; with `w`, also
// of N 4 KiB writes and of writing the whole file over (its contents are lost).
//   usage: disk FILE N [w]
// Prints "read_4k_us=... seq_read_mib_s=..." (and " write_4k_us=... seq_write_mib_s=...").
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 4 && argv[3][0] == 'w')) {
        fprintf(stderr, "usage: disk FILE N [w]\n");
        return 2;
    }
    int writes = argc == 4;
    int fd = open(argv[1], (writes ? O_RDWR : O_RDONLY) | O_DIRECT);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (1 << 20)) return 1;
    long n = atol(argv[2]);
    size_t pages = (size_t)st.st_size / 4096;
    void *buf;
    if (posix_memalign(&buf, 4096, 1 << 20) != 0) return 1;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        if (pread(fd, buf, 4096, (off_t)((x >> 8) % pages) * 4096) != 4096) return 1;
    }
    double rand_s = now_s() - t0;
    t0 = now_s();
    off_t off = 0;
    ssize_t r;
    while ((r = pread(fd, buf, 1 << 20, off)) > 0) off += r;
    double seq_s = now_s() - t0;
    printf("read_4k_us=%.1f seq_read_mib_s=%.0f", rand_s / n * 1e6, off / 1048576.0 / seq_s);
    if (writes) {
        t0 = now_s();
        for (long i = 0; i < n; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            if (pwrite(fd, buf, 4096, (off_t)((x >> 8) % pages) * 4096) != 4096) return 1;
        }
        if (fdatasync(fd) != 0) return 1;
        rand_s = now_s() - t0;
        t0 = now_s();
        for (off = 0; off < st.st_size; off += 1 << 20) {
            if (pwrite(fd, buf, 1 << 20, off) != 1 << 20) return 1;
        }
        if (fdatasync(fd) != 0) return 1;
        seq_s = now_s() - t0;
        printf(" write_4k_us=%.1f seq_write_mib_s=%.0f", rand_s / n * 1e6, off / 1048576.0 / seq_s);
    }
    printf("\n");
    return 0;
}
