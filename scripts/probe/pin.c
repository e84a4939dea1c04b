// Pins memory for scripts/frame-stall-probe.sh's global mode: maps SIZE_MIB of anonymous
// memory locked in RAM (mlock), prints "pinned" once it is resident, and then waits
// until killed or until SECONDS have passed (a guard, so a crashed script cannot leave
// the machine without memory).
//   usage: pin SIZE_MIB SECONDS
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: pin SIZE_MIB SECONDS\n");
        return 2;
    }
    size_t bytes = (size_t)atof(argv[1]) * 1024 * 1024;
    alarm((unsigned)atoi(argv[2]));
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mlock(p, bytes) != 0) {
        perror("pin");
        return 1;
    }
    printf("pinned\n");
    fflush(stdout);
    for (;;) pause();
}
