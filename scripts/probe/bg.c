// A cached "background app" for scripts/frame-stall-probe.sh: maps SIZE_MIB of heap,
// fills it, then wakes every PERIOD_S on average (exponential) and touches TOUCH_MIB of
// pages drawn from a fixed set of SET_MIB, until killed.
//   usage: bg SIZE_MIB SET_MIB TOUCH_MIB PERIOD_S SEED [FILE [FILE_SHARE FILE_SET_MIB]]
// With FILE, its pages are mapped read-only and each wakeup also reads FILE_SHARE (1
// unless given) file pages per heap page it touches (Ice Fig. 4: about half of what a
// cached app refaults is file-backed), from the first FILE_SET_MIB (SET_MIB unless
// given) of the file.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <sys/stat.h>

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7 && argc != 9) {
        fprintf(stderr, "usage: bg SIZE_MIB SET_MIB TOUCH_MIB PERIOD_S SEED [FILE [FILE_SHARE FILE_SET_MIB]]\n");
        return 2;
    }
    size_t pages = (size_t)atof(argv[1]) * 256, set = (size_t)atof(argv[2]) * 256, touch = (size_t)atof(argv[3]) * 256;
    double period = atof(argv[4]);
    uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(atoi(argv[5]) + 1);
    if (set > pages) set = pages;
    volatile char *h = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED) return 1;
    for (size_t p = 0; p < pages; p++) h[p * 4096] = (char)(p * 7 + 1);
    volatile const char *fm = NULL;
    size_t fpages = 0;
    volatile char sink = 0;
    double share = argc == 9 ? atof(argv[7]) : 1.0;
    size_t fset = argc == 9 ? (size_t)(atof(argv[8]) * 256) : set;
    if (argc >= 7) {
        int fd = open(argv[6], O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) return 1;
        fpages = (size_t)st.st_size / 4096;
        fm = mmap(NULL, fpages * 4096, PROT_READ, MAP_SHARED, fd, 0);
        if (fm == MAP_FAILED) return 1;
        for (size_t p = 0; p < fpages; p++) sink += fm[p * 4096];
        if (fset > fpages) fset = fpages;
        if (fset == 0) fset = 1;
    }
    size_t freads = (size_t)(touch * share + 0.5);
    for (;;) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        double u = ((x >> 11) + 1) / 9007199254740993.0;
        double s = -period * log(u);
        struct timespec t = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
        nanosleep(&t, NULL);
        for (size_t i = 0; i < touch; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            size_t p = (x >> 8) % set * (pages / (set ? set : 1));
            h[p * 4096] += 1;
        }
        for (size_t i = 0; fpages && i < freads; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            sink += fm[((x >> 20) % fset) * 4096];
        }
    }
}
