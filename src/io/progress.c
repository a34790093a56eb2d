/* Progress reports of the io functions: one reporting function per thread,
 * set by halo_io_set_progress; the library itself never prints. */
#include "progress.h"

#include <string.h>

static _Thread_local struct {
  halo_progress_fn fn;
  void *data;
} hook;

void halo_io_set_progress(halo_progress_fn fn, void *data) {
  hook.fn = fn;
  hook.data = fn ? data : NULL;
}

void halo_progress_begin(halo_progress_stage *s, const char *stage, halo_progress_unit unit,
                         int64_t total) {
  memset(s, 0, sizeof *s);
  s->fn = hook.fn;
  s->data = hook.data;
  s->stage = stage;
  s->unit = unit;
  s->total = total > 0 ? total : 0;
  s->step = unit == HALO_PROGRESS_BYTES ? INT64_C(1) << 22 : INT64_C(1) << 16;
  s->next = INT64_MAX;
  if (s->fn) {
    s->fn(s->data, stage, unit, 0, s->total);
    s->next = s->total > 0 ? s->step : INT64_MAX; /* nothing to do: done */
  }
}

void halo_progress_report(halo_progress_stage *s, int64_t done) {
  if (!s->fn) return;
  if (done > s->total) done = s->total;
  s->fn(s->data, s->stage, s->unit, done, s->total);
  s->next = done < s->total ? done + s->step : INT64_MAX;
}

void halo_progress_end(halo_progress_stage *s) {
  if (s->fn && s->next != INT64_MAX) s->fn(s->data, s->stage, s->unit, s->total, s->total);
  s->next = INT64_MAX;
}

void halo_progress_hook(halo_progress_fn *fn_p, void **data_p) {
  *fn_p = hook.fn;
  *data_p = hook.data;
}
