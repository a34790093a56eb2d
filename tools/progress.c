/* Progress lines of the driver (progress.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, isatty */
#include "progress.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "halo/io.h"

enum { PROGRESS_OFF, PROGRESS_AUTO, PROGRESS_ALWAYS };

static struct {
  int mode, tty;
  char name[128];
  double t_begin, t_drawn; /* when the work began, when a line was last drawn */
  char stage[32];          /* the stage of the line drawn last */
  size_t width;            /* its length, to overwrite it */
  int drawn;
} P;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Whether stderr reaches a terminal: it is one, or it is a pipe while
 * stdout is a terminal (an MPI launcher such as Open MPI's mpirun gives a
 * rank a terminal for stdout and a pipe for stderr, and forwards both to
 * the user's terminal as they come). */
static int on_terminal(void) {
  struct stat sb;
  if (isatty(STDERR_FILENO)) return 1;
  return isatty(STDOUT_FILENO) && fstat(STDERR_FILENO, &sb) == 0 && S_ISFIFO(sb.st_mode);
}

int progress_setup(int rank, int quiet) {
  const char *env = getenv("HALO_PROGRESS");
  int v = -1; /* unset or empty */
  if (env) { /* 0 or 1, white space around it aside */
    const char *b = env, *e = env + strlen(env);
    while (*b && isspace((unsigned char)*b)) b++;
    while (e > b && isspace((unsigned char)e[-1])) e--;
    if (e - b == 1 && (*b == '0' || *b == '1'))
      v = *b - '0';
    else if (e > b) {
      if (rank == 0) fprintf(stderr, "halo: HALO_PROGRESS='%s': expected 0 or 1\n", env);
      return 1;
    }
  }
  P.tty = on_terminal();
  if (rank != 0 || quiet || v == 0)
    P.mode = PROGRESS_OFF;
  else if (v == 1)
    P.mode = PROGRESS_ALWAYS;
  else
    P.mode = P.tty ? PROGRESS_AUTO : PROGRESS_OFF;
  return 0;
}

/* 1234567 -> "1.2 M" (decimal prefixes; bytes with a unit of their own). */
static void human(int64_t v, int bytes, char *buf, size_t len) {
  static const char *const prefix[] = {"k", "M", "G", "T", "P"};
  if (v < 1000) {
    snprintf(buf, len, "%lld%s", (long long)v, bytes ? " B" : "");
    return;
  }
  double x = (double)v / 1000.0;
  int p = 0;
  while (x >= 1000.0 && p < 4) x /= 1000.0, p++;
  snprintf(buf, len, "%.1f %s%s", x, prefix[p], bytes ? "B" : "");
}

static void report(void *data, const char *stage, halo_progress_unit unit, int64_t done,
                   int64_t total) {
  (void)data;
  const double t = now();
  if (P.mode == PROGRESS_AUTO && t - P.t_begin < 1.0) return;
  const int same_stage = P.drawn && strcmp(stage, P.stage) == 0;
  if (same_stage && done < total && t - P.t_drawn < 0.1) return;
  char line[256], d[32], n[32];
  const int bytes = unit == HALO_PROGRESS_BYTES;
  human(done, bytes, d, sizeof d);
  human(total, bytes, n, sizeof n);
  const int pct = total > 0 ? (int)(100.0 * (double)done / (double)total) : 100;
  int w = snprintf(line, sizeof line, "halo: %s %s: %d%% (%s of %s%s)", stage, P.name, pct, d, n,
                   unit == HALO_PROGRESS_ROWS      ? " rows"
                   : unit == HALO_PROGRESS_ENTRIES ? " entries"
                                                   : "");
  size_t len = w < 0 ? 0 : (size_t)w < sizeof line ? (size_t)w : sizeof line - 1;
  fprintf(stderr, "\r%s%*s", line, P.width > len ? (int)(P.width - len) : 0, "");
  fflush(stderr);
  P.width = len;
  P.drawn = 1;
  P.t_drawn = t;
  snprintf(P.stage, sizeof P.stage, "%s", stage);
}

void progress_begin(const char *name) {
  if (P.mode == PROGRESS_OFF) return;
  const char *base = strrchr(name, '/');
  snprintf(P.name, sizeof P.name, "%s", base && base[1] ? base + 1 : name);
  P.t_begin = now();
  P.drawn = 0;
  P.width = 0;
  P.stage[0] = '\0';
  halo_io_set_progress(report, NULL);
}

void progress_end(void) {
  if (P.mode == PROGRESS_OFF) return;
  halo_io_set_progress(NULL, NULL);
  if (P.drawn) {
    if (P.tty)
      fprintf(stderr, "\r%*s\r", (int)P.width, "");
    else
      fputc('\n', stderr);
    fflush(stderr);
  }
  P.drawn = 0;
}
