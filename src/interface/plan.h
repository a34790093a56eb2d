/* Private layout of a plan: the handle above the floors. A plan is a
 * schedule (src/plan) run by executors (src/exec), and, made from a matrix,
 * the local products (src/spmv) around them. It holds max_exchanges sets of
 * executors, forward and reverse: set 0 is the plan's own exchange (halo_spmv,
 * halo_exchange_begin), the others are taken by halo_exchange_create. */
#ifndef HALO_INTERFACE_PLAN_H
#define HALO_INTERFACE_PLAN_H

#include "exec/exec.h"
#include "interface/context.h"
#include "model/choose.h"
#include "plan/leaves.h"
#include "plan/matrix.h"
#include "plan/pattern.h"
#include "settings.h"
#include "spmv/device.h"

/** One exchange in flight of its own: handed out by halo_exchange_create. */
struct halo_exchange_s {
  halo_plan plan;
  int slot;
};

enum { HALO_SLOT_IDLE = 0, HALO_SLOT_FORWARD = 1, HALO_SLOT_REVERSE = 2 };

/** One set of buffers and requests: a forward and a reverse executor. */
typedef struct {
  halo_exec fwd, rev; /* rev is empty in a plan made without reverse */
  int state;          /* HALO_SLOT_* */
  int taken;          /* handed out by halo_exchange_create (never set 0) */
  int unit_call;      /* the exchange in flight is of another unit than one double */
  struct halo_exchange_s handle;
} halo_slot;

struct halo_plan_s {
  halo_context *ctx;         /* a reference */
  halo_matrix A;             /* a reference; NULL: an exchange-only plan */
  halo_settings set;         /* the resolved options */
  const halo_topology *topo; /* the context's */
  halo_device *dev;          /* device plans: the context's */
  void *comp;                /* device plans: the compute stream */
  halo_memory memory;        /* where x, y and the ghosts live */
  halo_transport transport;
  halo_transport later; /* a transport whose state comes later (nccl.background): the plan's own
                           forward exchanges switch to it once every rank's is made; AUTO: none */
  int64_t n_local;      /* entries of the vector this rank owns */
  int64_t n_slots;      /* ghost slots of the caller */
  halo_leaves leaves;   /* the ghost slots against the schedule's ghosts */
  halo_schedule sched;  /* forward */
  int sched_made;       /* ... made already by strategy AUTO's model (halo_plan_build keeps it) */
  halo_schedule rsched; /* reverse (add = 1), when reverse is on */
  int tag_base, n_tags; /* the block of tags of the plan's executors, then its notice tag */
  int failed;           /* an exchange failed: no more exchanges; the tags stay taken */
  int64_t uses;         /* exchanges begun (an SpMV's, forward or reverse): its measured uses */
  char *wisdom;         /* strategy AUTO with a wisdom file: its path (a copy), to which rank 0
                           writes the plan's measured uses at destroy; NULL: none */
  uint64_t wisdom_key;  /* ... the choice's key there */
  int released;         /* ... 1: every wait of its GPU for peers was released; 0: one
                         * that forwards was left; -1: a release did not run in time */
  char *notice;         /* a failed plan's word to its peers (kept with it) */
  unsigned char *heard; /* a failed plan's: the ranks whose notice came (they failed too) */
  int n_sets;
  halo_slot *sets;       /* max_exchanges of them */
  halo_spmv_device *dsp; /* device plans with a matrix: the local products */
  halo_timeline *tl;     /* the setting device.timeline */
  halo_stats_full stats; /* halo_plan_stats, halo_plan_phase_stats, ... */
  halo_choice choice; /* strategy AUTO: the candidates and the one chosen */
  struct halo_online_s *online; /* strategy AUTO's trial on the program's calls, under way */
  const struct halo_online_ops_s *online_ops; /* its calls, set while it or its winner is there */
  halo_plan delegate; /* ... its outcome where another candidate won: the plan that runs this
                         plan's own forward exchanges (the ghosts delivered into this plan's
                         buffer); NULL: its own executors */
  halo_plan routed;   /* the plan running set 0's exchange in flight, when not this one */
  int async;          /* within halo_spmv_async: the trial neither times nor counts the call */
};

/** The plan whose schedule runs P's own forward exchanges: what P's
 *  statistics and description tell. */
static inline halo_plan halo_plan_acting(halo_plan P) { return P->delegate ? P->delegate : P; }

/** What every constructor gives the core: the vector's layout and the ghosts
 *  the schedule moves (sorted, unique), with the caller's slots when they
 *  differ, and the pattern when the caller knows it (explicit lists). */
struct halo_plan_input_s;
/** What chooses strategy AUTO's candidate for a plan (halo_plan_choose, given
 *  by the public constructors; the planning core knows nothing above it). */
typedef halo_status (*halo_plan_chooser)(halo_plan P, const struct halo_plan_input_s *in,
                                         const halo_pattern *pattern, halo_settings *s,
                                         int transport_deferred);
/** What switches a plan's own forward exchanges to a transport whose state
 *  comes later (halo_online_switch_create, given by the public constructors
 *  with the chooser; NULL: the plan waits for the state when it is made). */
typedef halo_status (*halo_plan_switcher)(halo_plan P, const struct halo_plan_input_s *in,
                                          const halo_pattern *pattern, const halo_settings *s,
                                          halo_transport later);

typedef struct halo_plan_input_s {
  int64_t n_local;
  const int64_t *col_ranges;   /* size+1: the entries of every rank */
  int64_t n_ghost;             /* the schedule's ghosts */
  const int64_t *ghost_ids;    /* their global ids, increasing */
  const halo_pattern *pattern; /* NULL: learned by a sparse data exchange (NBX) */
  const halo_leaves *leaves;   /* NULL: the caller's slots are the ghosts */
  int trial;                   /* a candidate of AUTO's trial: no timings (device.timeline,
                                  staged.copy_timing off, whatever the settings say) */
  halo_schedule *schedule;     /* NULL, or the schedule of these options made already (by AUTO's
                                  model): moved into the plan (left empty) */
  halo_plan_chooser choose;    /* strategy AUTO; NULL: a plan of a named strategy only (AUTO's
                                  trials, the measurements' plans) */
  halo_plan_switcher switcher; /* nccl.background; NULL: never in the background */
} halo_plan_input;

/**
 * The core of every constructor. Collective over ctx->comm. A may be NULL
 * (an exchange-only plan); with A, the input is A's layout and ghosts.
 */
halo_status halo_plan_build(halo_context *ctx, halo_matrix A, const halo_plan_input *in,
                            const halo_plan_options *opts, halo_plan *plan_p);

/** A plan of matrix A (its layout and ghosts): halo_plan_create with choose
 *  for strategy AUTO (NULL: AUTO refused; the measurements' plans, which name
 *  their strategy). Collective. */
HALO_MODULE_API halo_status halo_plan_build_matrix(halo_matrix A, const halo_plan_options *opts,
                                                   halo_plan_chooser choose,
                                                   halo_plan_switcher switcher, halo_plan *plan_p);

/**
 * Strategy AUTO (src/interface/auto.c): every candidate strategy (Split with
 * several message_caps) on every transport the plan may use (transport_deferred:
 * a device plan whose transport AUTO chooses too) modeled; with autotune N
 * every one timed, with autotune's default the ones the model cannot tell
 * apart; the choice kept by the context for a later plan of the same pattern
 * and options. Sets s->opts.strategy and message_cap, and P->transport when
 * deferred. Collective.
 */
halo_status halo_plan_choose(halo_plan P, const halo_plan_input *in, const halo_pattern *pattern,
                             halo_settings *s, int transport_deferred);

/** The model's parameters for plan P: the set name names (a built-in name or
 *  a file), else the plan's option params or HALO_PARAMS, else the machine's
 *  file (halo_params_cache_path) when rank 0 can read it, else the built-in
 *  set of the machine's kind; read on rank 0 and kept by the context.
 *  Collective. */
halo_status halo_plan_params(halo_plan P, const char *name, halo_params *prm);

/** The schedule of strategy s->opts.strategy (never AUTO), checked on every
 *  rank. Collective. */
halo_status halo_plan_schedule(halo_plan P, const halo_plan_input *in, const halo_pattern *pattern,
                               const halo_settings *s, halo_schedule *sched);

/* ---- strategy AUTO's trial on the program's calls (online.c) ----
 * The exchanges reach the trial through P->online_ops, which online.c sets
 * (so that the files of the exchanges and of the plan call nothing of it). */
typedef struct halo_online_s halo_online;
typedef struct halo_online_ops_s {
  /** The plan that serves P's next own forward exchange: P, a candidate's
   *  plan (made at its first turn: collective, as every rank makes the same
   *  calls) or the trial's winner. The same until that exchange begins. */
  halo_status (*pick)(halo_plan P, halo_plan *serve_p);
  /** The trial's clock around a picked exchange: 0 its begin starts, 1 the
   *  begin returned, 2 its end starts. */
  halo_status (*mark)(halo_plan P, int what);
  /** The picked exchange ended: timed, counted, and after the last call the
   *  decision (collective: every rank is at the same call). */
  halo_status (*done)(halo_plan P);
  /** Release the waits of the trial's and the winner's executors
   *  (plan_fail); as halo_exec_unblock. */
  int (*unblock)(halo_plan P, int again);
  /** The trial's and the winner's plans freed. */
  void (*release)(halo_plan P);
} halo_online_ops;

/** What settles a choice once the trial decided P->choice (auto.c: kept by
 *  the context for the key and, with a wisdom file, written to it). */
typedef void (*halo_online_settle)(halo_plan P, uint64_t key, int64_t measured);

/** Start the trial of candidates idx[0..n) of P->choice (idx[0]: the one P is
 *  made for) on P's own forward exchanges; key and measured are given to
 *  settle once it decides. Collective. */
halo_status halo_online_create(halo_plan P, const halo_plan_input *in, const halo_pattern *pattern,
                               const halo_settings *s, const int *idx, int n, uint64_t key,
                               int64_t measured, halo_online_settle settle);
/** The switch of P's own forward exchanges to P->later once every rank's
 *  state of it is made (nccl.background). Collective. */
halo_status halo_online_switch_create(halo_plan P, const halo_plan_input *in,
                                      const halo_pattern *pattern, const halo_settings *s,
                                      halo_transport later);
/** Candidate k's schedule, made by the model: moved to its plan (sched left
 *  empty). */
void halo_online_give_schedule(halo_plan P, int k, halo_schedule *sched);
/** Calls of each candidate in a trial (its turns over all rounds). */
int64_t halo_online_calls(void);

static inline halo_status halo_online_pick(halo_plan P, halo_plan *serve_p) {
  *serve_p = P;
  return P->online_ops ? P->online_ops->pick(P, serve_p) : HALO_SUCCESS;
}
static inline halo_status halo_online_mark(halo_plan P, int what) {
  return P->online_ops ? P->online_ops->mark(P, what) : HALO_SUCCESS;
}
static inline halo_status halo_online_done(halo_plan P) {
  return P->online_ops ? P->online_ops->done(P) : HALO_SUCCESS;
}
static inline int halo_online_unblock(halo_plan P, int again) {
  return P->online_ops ? P->online_ops->unblock(P, again) : 1;
}
static inline void halo_online_release(halo_plan P) {
  if (P->online_ops) P->online_ops->release(P);
}

/** Whether this rank only forwards: no entries, no ghosts (a helper). */
static inline int halo_plan_is_helper(const halo_plan P) {
  return P->n_local == 0 && P->leaves.n_ghost == 0;
}

/** Set 0's forward executor: the plan's own exchange. */
static inline halo_exec *halo_plan_own(halo_plan P) { return &P->sets[0].fwd; }

/** Begin and end on one set of executors (exchange.c). */
halo_status halo_slot_begin(halo_plan P, int slot, int reverse, const double *src, double *dst);
/** The same with unit u (NULL or its default: halo_slot_begin's road); u
 *  checked by the caller. */
halo_status halo_slot_begin_unit(halo_plan P, int slot, int reverse, const halo_xunit *u,
                                 const void *src, void *dst);
halo_status halo_slot_end(halo_plan P, int slot);
/* The plan fails with st (the last error its message) where this rank will not
 * start an exchange its peers wait for: they hear why (exchange.c). */
halo_status halo_plan_fail(halo_plan P, halo_status st);
/* The peers' notices that came and were not read, received and dropped (at
 * the plan's destroy: MPI would keep them for ever, and a healthy plan's tags
 * go to the next plan). */
void halo_plan_notices_drain(halo_plan P);

/** Take a reference on a matrix (a plan holds one). */
void halo_matrix_retain(halo_matrix A);

#endif
