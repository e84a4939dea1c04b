// How long the kernel takes to tear down a killed process, by its memory: forks a child
// that fills MIB MiB of anonymous memory (optionally pushed to swap first with
// MADV_PAGEOUT), SIGKILLs it and times the kill until waitpid returns (exit_mmap
// freeing its pages and swap slots). Prints the time and the time per 4 KiB page.
//   usage: exit MIB [pageout=0|1] [repeats=5]
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: exit MIB [pageout=0|1] [repeats=5]\n");
    return 2;
  }
  size_t mib = strtoul(argv[1], 0, 10);
  int pageout = argc > 2 ? atoi(argv[2]) : 0;
  int repeats = argc > 3 ? atoi(argv[3]) : 5;
  size_t len = mib << 20, pages = len / 4096;
  for (int r = 0; r < repeats; r++) {
    int fd[2];
    if (pipe(fd)) return 1;
    pid_t pid = fork();
    if (pid == 0) {
      char *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) _exit(1);
      // Distinct, compressible-but-not-trivial content per page.
      for (size_t i = 0; i < len; i += 4096) {
        memset(p + i, (int)(i >> 12), 2048);
        memcpy(p + i + 2048, &i, sizeof i);
      }
      if (pageout && madvise(p, len, MADV_PAGEOUT)) _exit(1);
      if (write(fd[1], "r", 1) != 1) _exit(1);
      pause();
      _exit(0);
    }
    char c;
    if (read(fd[0], &c, 1) != 1) return 1;
    double t0 = now_s();
    kill(pid, SIGKILL);
    waitpid(pid, 0, 0);
    double dt = now_s() - t0;
    printf("mib %zu pageout %d: exit %.2f ms, %.3f us per page\n", mib, pageout, dt * 1e3, dt * 1e6 / pages);
    close(fd[0]);
    close(fd[1]);
  }
  return 0;
}
