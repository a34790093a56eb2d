/* Progress reports of the io functions (halo_io_set_progress): a stage is
 * begun, ticked in its loop and ended. Without a reporting function a tick
 * is one comparison, with it one call every step units. Private to the
 * library (src/io, and the simulator's generation rank by rank). */
#ifndef HALO_IO_PROGRESS_H
#define HALO_IO_PROGRESS_H

#include <stdint.h>

#include "halo/io.h"

typedef struct {
  halo_progress_fn fn; /* NULL: nothing to report */
  void *data;
  const char *stage;
  halo_progress_unit unit;
  int64_t total, step;
  int64_t next; /* the next report when done reaches it (INT64_MAX: never) */
} halo_progress_stage;

/** Begin a stage of @p total units: reports done = 0 when this thread has a
 *  reporting function. */
void halo_progress_begin(halo_progress_stage *s, const char *stage, halo_progress_unit unit,
                         int64_t total);

/** Report @p done (called when it reaches s->next). */
void halo_progress_report(halo_progress_stage *s, int64_t done);

/** @p done units of the stage are done: a report once a step has passed. */
static inline void halo_progress_tick(halo_progress_stage *s, int64_t done) {
  if (done >= s->next) halo_progress_report(s, done);
}

/** The stage is done: reports done = total, unless the last report did. */
void halo_progress_end(halo_progress_stage *s);

/** This thread's reporting function and its data (halo_io_set_progress). */
void halo_progress_hook(halo_progress_fn *fn_p, void **data_p);

#endif
