/* All ranks of a matrix in one process: the column ranges, the ghosts and
 * the pattern of every rank, built serially with nothing of the library's
 * NBX set-up. For tests of schedules and executors. */
#ifndef HALO_TEST_WORLD_H
#define HALO_TEST_WORLD_H

#include "halo/io.h"
#include "halo_impl.h"
#include "plan/schedule.h"
#include "test_util.h"

typedef struct {
  int P;
  int64_t *ranges;  /* P+1 column ranges */
  int64_t **ghosts; /* per rank, sorted ghost ids */
  int64_t *n_ghost;
  halo_pattern *pat;
  halo_schedule *sch;
} world;

/* Ghosts of rank r: sorted unique columns of its rows outside its range. */
static inline void make_world(const halo_csr *A, int P, world *w) {
  w->P = P;
  w->ranges = malloc((size_t)(P + 1) * sizeof *w->ranges);
  halo_partition_rows(A->n_rows, P, w->ranges);
  w->ghosts = calloc((size_t)P, sizeof *w->ghosts);
  w->n_ghost = calloc((size_t)P, sizeof *w->n_ghost);
  w->pat = calloc((size_t)P, sizeof *w->pat);
  w->sch = calloc((size_t)P, sizeof *w->sch);
  char *mark = malloc((size_t)A->n_cols);
  for (int r = 0; r < P; r++) {
    memset(mark, 0, (size_t)A->n_cols);
    for (int64_t i = w->ranges[r]; i < w->ranges[r + 1]; i++)
      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
        int64_t c = A->col_ids[k];
        if (c < w->ranges[r] || c >= w->ranges[r + 1]) mark[c] = 1;
      }
    w->ghosts[r] = malloc((size_t)A->n_cols * sizeof(int64_t) + 8);
    for (int64_t c = 0; c < A->n_cols; c++)
      if (mark[c]) w->ghosts[r][w->n_ghost[r]++] = c;
    CHECK_OK(halo_pattern_recv_side(r, P, w->ranges, w->ghosts[r], w->n_ghost[r], &w->pat[r]));
  }
  free(mark);
  /* send side: what every other rank asks of r, in rank order (as NBX gives it) */
  for (int r = 0; r < P; r++) {
    halo_pattern *p = &w->pat[r];
    int64_t total = 0;
    int n = 0;
    for (int q = 0; q < P; q++)
      for (int i = 0; i < w->pat[q].n_recv; i++)
        if (w->pat[q].recv[i].peer == r) n++, total += w->pat[q].recv[i].count;
    p->send = halo_malloc((size_t)(n + 1) * sizeof *p->send);
    p->send_idx = halo_malloc((size_t)(total + 1) * sizeof *p->send_idx);
    p->n_send = 0;
    int64_t off = 0;
    for (int q = 0; q < P; q++)
      for (int i = 0; i < w->pat[q].n_recv; i++) {
        const halo_msg *m = &w->pat[q].recv[i];
        if (m->peer != r) continue;
        p->send[p->n_send++] = (halo_msg){q, off, m->count};
        for (int64_t k = 0; k < m->count; k++)
          p->send_idx[off++] = w->ghosts[q][m->offset + k] - w->ranges[r];
      }
  }
}

static inline void free_world(world *w) {
  for (int r = 0; r < w->P; r++) {
    free(w->ghosts[r]);
    halo_pattern_free(&w->pat[r]);
    halo_schedule_free(&w->sch[r]);
  }
  free(w->ghosts), free(w->n_ghost), free(w->pat), free(w->sch), free(w->ranges);
}

#endif
