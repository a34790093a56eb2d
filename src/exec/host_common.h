/* What the host transports share (host.c: two-sided; host_rma.c: one-sided;
 * host_neighbor.c: neighborhood collectives):
 * the source and destination spaces, the pack of a phase's sends, the
 * reverse exchange's additions in receive list order, and the ghost slots
 * (leaves). Made at plan time; run without allocating. */
#ifndef HALO_EXEC_HOST_COMMON_H
#define HALO_EXEC_HOST_COMMON_H

#include "exec/exec.h"

/* The source space: x_local (n_local entries), then the work buffer. */
static inline double halo_host_src_value(const halo_schedule *s, const double *x,
                                         const double *work, int64_t i) {
  return i < s->n_local ? x[i] : work[i - s->n_local];
}

static inline const double *halo_host_src_ptr(const halo_schedule *s, const double *x,
                                              const double *work, int64_t i) {
  return i < s->n_local ? x + i : work + (i - s->n_local);
}

/* The destination space: the ghosts (n_ghost entries), then the work buffer. */
static inline double *halo_host_dst_ptr(const halo_schedule *s, double *ghost, double *work,
                                        int64_t i) {
  return i < s->n_ghost ? ghost + i : work + (i - s->n_ghost);
}

/* A piece of a pack from x: a run copied whole (src >= 0, its first entry)
 * or len entries gathered through the 32-bit map (src -1). */
typedef struct {
  int64_t src, len;
} halo_host_piece;

/** The pack of a send buffer: n source indices (src), in buffer order. When
 *  all are entries of x below 2^31 they are read as 32-bit indices (x) in
 *  pieces, and src is freed. */
typedef struct {
  int64_t n;
  int64_t *src;
  int32_t *x;
  int64_t n_piece;
  halo_host_piece *piece;
} halo_host_pack;

/** After p->src holds p->n indices: choose how to pack (see above). */
halo_status halo_host_pack_setup(const halo_schedule *s, halo_host_pack *p);
/** Pack into buf from x (and the work buffer). */
void halo_host_pack_run(const halo_schedule *s, const halo_host_pack *p, const double *x,
                        const double *work, double *buf);
void halo_host_pack_free(halo_host_pack *p);

/* Reverse: a run of adds: len values from the receive buffer (src >= 0) or
 * the source space (from -1-src on) added to dst on. */
typedef struct {
  int64_t src, dst, len;
} halo_host_seg;

/** Reverse: what a phase adds, in the order of its receive list, as runs:
 *  message i of the receive list at recv_off[i] of one receive buffer
 *  (recv_off NULL: the messages from other ranks back to back). */
typedef struct {
  int64_t n;
  halo_host_seg *seg;
} halo_host_adds;

halo_status halo_host_adds_setup(const halo_schedule *s, const halo_phase *ph,
                                 const int64_t *recv_off, halo_host_adds *a);
/** Add: from recvbuf or the source space (x, work) into to (the
 *  destination: x_local) and work. */
void halo_host_adds_run(const halo_schedule *s, const halo_host_adds *a, const double *recvbuf,
                        const double *x, double *to, double *work);
void halo_host_adds_free(halo_host_adds *a);

/** An exchange's start on the host: its source into *x_p (forward: src;
 *  reverse: the slots' contributions summed per ghost, and the work buffer
 *  zeroed), and where forward ghosts land into *to_p (the caller's slots dst
 *  when they are the ghosts, else the executor's own). */
void halo_host_begin(halo_exec *ex, const double *src, double *dst, double *work,
                     const double **x_p, double **to_p);
/** Forward: a phase's n copies to itself, from the source space (x, work)
 *  into the destination space (to, work). */
static inline void halo_host_copies(const halo_schedule *s, int64_t n, const int64_t *src,
                                    const int64_t *dst, const double *x, double *to,
                                    double *work) {
  for (int64_t i = 0; i < n; i++)
    *halo_host_dst_ptr(s, to, work, dst[i]) = halo_host_src_value(s, x, work, src[i]);
}

/** The executor's ghosts and slots (forward), or the per-ghost sums of the
 *  slots' contributions (reverse with leaves), in host memory. */
halo_status halo_host_slots_setup(halo_exec *ex);
void halo_host_slots_free(halo_exec *ex);
/** Reverse: the source of the exchange, the contributions summed per ghost
 *  (in slot order) when the slots are not the ghosts. */
const double *halo_host_slots_sum(halo_exec *ex, const double *src);
/** Forward: deliver the ghosts (at ghosts) into the caller's slots dst
 *  (NULL: the executor's own). */
void halo_host_deliver(halo_exec *ex, const double *ghosts, double *dst);

/* ---- any unit (ex->unit: entries of u->bytes bytes) ----------------------
 * The same steps as above, on entries of any size, with the unit's
 * operation; the one-double road above stays as it is. */

/** Doubles per entry in the host buffers: cfg.unit_max rounded up to 8 bytes
 *  (at least one). */
static inline int64_t halo_host_words(const halo_exec *ex) {
  const int64_t m = ex->cfg.unit_max > 8 ? ex->cfg.unit_max : 8;
  return (m + 7) / 8;
}

void halo_host_pack_run_unit(const halo_schedule *s, const halo_host_pack *p, const void *x,
                             const void *work, void *buf, const halo_xunit *u);
/** Forward: copies to itself, and the staged receives' unpack (inserts). */
void halo_host_copies_unit(const halo_schedule *s, int64_t n, const int64_t *src,
                           const int64_t *dst, const void *x, void *to, void *work,
                           const halo_xunit *u);
void halo_host_unpack_unit(const halo_schedule *s, int64_t n, const int64_t *dst,
                           const void *recvbuf, void *to, void *work, const halo_xunit *u);
/** Reverse: a phase's adds (or replacements) in receive order. */
void halo_host_adds_run_unit(const halo_schedule *s, const halo_host_adds *a, const void *recvbuf,
                             const void *x, void *to, void *work, const halo_xunit *u);
/** Reverse: the source, the slots' contributions per ghost (added in slot
 *  order, or the last slot's) when the slots are not the ghosts. */
const void *halo_host_slots_sum_unit(halo_exec *ex, const void *src);
/** Forward: the ghosts into the caller's slots dst (NULL: own), with the
 *  unit's operation. */
void halo_host_deliver_unit(halo_exec *ex, const void *ghosts, void *dst);

/* ---- an exchange's steps, for the unit in flight -------------------------
 * What every host transport runs between its messages: each step takes the
 * one-double road above where ex->unit is the default, else the unit's
 * (buffers of halo_host_words doubles an entry, entries of ex->unit.bytes
 * bytes back to back). */

/** The start: the source into *x_p and where forward ghosts land into *to_p
 *  (halo_host_begin); a forward add's ghosts land apart, in *addbuf_p
 *  (n_ghost entries, made at the first such exchange), and are added to the
 *  slots by halo_host_finish. */
halo_status halo_host_start(halo_exec *ex, const void *src, void *dst, double *work,
                            double **addbuf_p, const double **x_p, double **to_p);
/** A phase's pack into sendbuf and its forward copies to itself. */
void halo_host_send(const halo_exec *ex, const halo_host_pack *p, double *sendbuf, int64_t n_copy,
                    const int64_t *copy_src, const int64_t *copy_dst, const double *x, double *to,
                    double *work);
/** A phase's receives: forward, the n entries at recvbuf into the
 *  destinations unpack (inserts); reverse, the phase's adds a (the unit's
 *  operation) from recvbuf and the source space x into to (x_local). */
void halo_host_receive(const halo_exec *ex, const halo_host_adds *a, int64_t n,
                       const int64_t *unpack, const void *recvbuf, const double *x, double *to,
                       double *work);
/** The end: forward, the ghosts into the caller's slots dst (NULL: own);
 *  reverse, nothing. */
void halo_host_finish(halo_exec *ex, const double *ghosts, double *dst);

/** *dt made the MPI datatype of one entry of b bytes: MPI_DOUBLE for 8, else
 *  b contiguous bytes (committed), the type it held freed first; counts and
 *  displacements stay in entries. */
halo_status halo_host_entry_type(int64_t b, MPI_Datatype *dt);
/** Free a type halo_host_entry_type made (MPI_DOUBLE and
 *  MPI_DATATYPE_NULL are left as they are). */
void halo_host_entry_type_free(MPI_Datatype *dt);

#endif
