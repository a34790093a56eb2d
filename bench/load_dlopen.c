/* What opening a library costs a process that has its dependencies' big
 * part loaded already: dlopen(PRELOAD) untimed (PETSc, as in a PETSc
 * program), then dlopen(LIB, RTLD_NOW) timed, printed in milliseconds.
 * bench/load_cost.sh runs it many times, one process each.
 * usage: load_dlopen PRELOAD LIB */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  void *h = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  if (!h) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  printf("%.3f\n", 1e3 * (double)(b.tv_sec - a.tv_sec) + 1e-6 * (double)(b.tv_nsec - a.tv_nsec));
  return 0;
}
