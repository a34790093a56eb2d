/* A plan's timeline (device.h): events on the product's and the exchange's
 * streams, and the mean times from the start of a product to each of them. */
#include "halo_impl.h"

#include "exec/device.h"

#if HALO_HAVE_CUDA
#include "exec/cuda.h"

struct halo_timeline_s {
  cudaStream_t comp, xstream;
  cudaEvent_t ev[4];
  int state; /* bit k set once ev[k] is recorded in the record under way */
  double sum[3];
  int64_t n;
};

void halo_timeline_destroy(halo_timeline **tl_p) {
  if (!tl_p || !*tl_p) return;
  for (int k = 0; k < 4; k++)
    if ((*tl_p)->ev[k]) cudaEventDestroy((*tl_p)->ev[k]);
  halo_free(*tl_p);
  *tl_p = NULL;
}

halo_status halo_timeline_create(void *comp, void *xstream, halo_timeline **tl_p) {
  halo_status st = HALO_SUCCESS;
  halo_timeline *tl = halo_calloc(1, sizeof *tl);
  if (!tl) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a timeline");
  tl->comp = comp, tl->xstream = xstream;
  for (int k = 0; k < 4; k++) HALO_TRY(halo_event_create(&tl->ev[k], cudaEventDefault));
  *tl_p = tl;
  tl = NULL;
cleanup:
  halo_timeline_destroy(&tl);
  return st;
}

/* Add the last record, if complete, to the sums. */
static halo_status timeline_harvest(halo_timeline *tl) {
  if (tl->state == 0xF) {
    float ms;
    for (int k = 1; k < 4; k++) {
      HALO_CUDA(cudaEventSynchronize(tl->ev[k]));
      HALO_CUDA(cudaEventElapsedTime(&ms, tl->ev[0], tl->ev[k]));
      tl->sum[k - 1] += 1e-3 * ms;
    }
    tl->n++;
  }
  tl->state = 0;
  return HALO_SUCCESS;
}

halo_status halo_timeline_start(halo_timeline *tl) {
  if (!tl) return HALO_SUCCESS;
  HALO_CHECK(timeline_harvest(tl));
  HALO_CUDA(cudaEventRecord(tl->ev[0], tl->comp));
  tl->state = 1;
  return HALO_SUCCESS;
}

halo_status halo_timeline_mark(halo_timeline *tl, int k) {
  if (!tl || !(tl->state & 1) || (tl->state & (1 << k))) return HALO_SUCCESS;
  HALO_CUDA(cudaEventRecord(tl->ev[k], k == 1 ? tl->comp : tl->xstream));
  tl->state |= 1 << k;
  return HALO_SUCCESS;
}

halo_status halo_timeline_read(halo_timeline *tl, double avg[3], int64_t *n_p) {
  HALO_CHECK(timeline_harvest(tl));
  for (int k = 0; k < 3; k++) avg[k] = tl->n ? tl->sum[k] / (double)tl->n : 0.0;
  *n_p = tl->n;
  tl->sum[0] = tl->sum[1] = tl->sum[2] = 0.0;
  tl->n = 0;
  return HALO_SUCCESS;
}

struct halo_stopwatch_s {
  cudaStream_t stream;
  int n;
  cudaEvent_t *ev;     /* 2n: start and stop of each interval */
  unsigned char *done; /* n: its stop recorded (an interval never timed reads 0) */
};

void halo_stopwatch_destroy(halo_stopwatch **sw_p) {
  if (!sw_p || !*sw_p) return;
  halo_stopwatch *sw = *sw_p;
  for (int k = 0; sw->ev && k < 2 * sw->n; k++)
    if (sw->ev[k]) cudaEventDestroy(sw->ev[k]);
  halo_free(sw->ev);
  halo_free(sw->done);
  halo_free(sw);
  *sw_p = NULL;
}

halo_status halo_stopwatch_create(void *stream, int n, halo_stopwatch **sw_p) {
  halo_status st = HALO_SUCCESS;
  halo_stopwatch *sw = halo_calloc(1, sizeof *sw);
  if (!sw) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a stopwatch");
  sw->stream = stream;
  HALO_TRY(HALO_CALLOC(sw->ev, 2 * (int64_t)n));
  HALO_TRY(HALO_CALLOC(sw->done, n + 1));
  sw->n = n;
  for (int k = 0; k < 2 * n; k++) HALO_TRY(halo_event_create(&sw->ev[k], cudaEventDefault));
  *sw_p = sw;
  sw = NULL;
cleanup:
  halo_stopwatch_destroy(&sw);
  return st;
}

halo_status halo_stopwatch_mark(halo_stopwatch *sw, int i, int stop) {
  if (i < 0 || i >= sw->n)
    return HALO_ERROR(HALO_ERR_INTERNAL, "stopwatch interval %d of %d", i, sw->n);
  HALO_CUDA(cudaEventRecord(sw->ev[2 * i + (stop ? 1 : 0)], sw->stream));
  sw->done[i] = stop ? 1 : 0; /* a start alone is not an interval */
  return HALO_SUCCESS;
}

halo_status halo_stopwatch_read(halo_stopwatch *sw, int n, double *seconds) {
  if (n > sw->n) return HALO_ERROR(HALO_ERR_INTERNAL, "stopwatch: %d intervals of %d", n, sw->n);
  for (int i = 0; i < n; i++) /* the stream's order: the last to be recorded ends last */
    if (sw->done[i]) HALO_CUDA(cudaEventSynchronize(sw->ev[2 * i + 1]));
  for (int i = 0; i < n; i++) {
    float ms = 0.0f;
    if (sw->done[i]) HALO_CUDA(cudaEventElapsedTime(&ms, sw->ev[2 * i], sw->ev[2 * i + 1]));
    seconds[i] = 1e-3 * ms;
  }
  return HALO_SUCCESS;
}

#else /* no CUDA */

halo_status halo_timeline_create(void *comp, void *xstream, halo_timeline **tl_p) {
  (void)comp, (void)xstream;
  *tl_p = NULL;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_timeline_destroy(halo_timeline **tl_p) {
  if (tl_p) *tl_p = NULL;
}
halo_status halo_timeline_start(halo_timeline *tl) {
  (void)tl;
  return HALO_SUCCESS;
}
halo_status halo_timeline_mark(halo_timeline *tl, int k) {
  (void)tl, (void)k;
  return HALO_SUCCESS;
}
halo_status halo_timeline_read(halo_timeline *tl, double avg[3], int64_t *n_p) {
  (void)tl, (void)avg, (void)n_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_stopwatch_create(void *stream, int n, halo_stopwatch **sw_p) {
  (void)stream, (void)n;
  *sw_p = NULL;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
void halo_stopwatch_destroy(halo_stopwatch **sw_p) {
  if (sw_p) *sw_p = NULL;
}
halo_status halo_stopwatch_mark(halo_stopwatch *sw, int i, int stop) {
  (void)sw, (void)i, (void)stop;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_stopwatch_read(halo_stopwatch *sw, int n, double *seconds) {
  (void)sw, (void)n, (void)seconds;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}

#endif
