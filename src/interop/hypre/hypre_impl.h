/* halo for hypre: what the interposed entry points (shim.c), the package
 * registry (pkg.c), the settings (settings.c), the matrix products
 * (matvec.c) and the report (view.c)
 * share. Uses hypre's internal headers: the library is built against the
 * hypre it loads into (checked at load). */
#ifndef HALO_HYPRE_IMPL_H
#define HALO_HYPRE_IMPL_H

#include <_hypre_parcsr_ls.h>
#include <_hypre_parcsr_mv.h>

#include "halo.h"
#include "halo/hypre.h"

/* halo moves doubles: routing needs HYPRE_Complex to be one. */
#if defined(HYPRE_COMPLEX) || defined(HYPRE_SINGLE) || defined(HYPRE_LONG_DOUBLE)
#define HH_SCALAR_OK 0
#else
#define HH_SCALAR_OK 1
#endif

/* The adapter's own library (libhalo_hypre, libhalo_hypre64, libhalo_hypre64m: one per build of
 * hypre, set by CMake) and the file name of the libHYPRE it was built against. */
#ifndef HH_LIBNAME
#define HH_LIBNAME "libhalo_hypre"
#endif
#ifndef HH_HYPRE_LIBNAME
#define HH_HYPRE_LIBNAME "libHYPRE.so"
#endif

/* Device memory: HH_DEVICE is 1 when halo and the hypre it is built against
 * both have CUDA (device.cu is then part of the library). */
#ifndef HH_DEVICE
#define HH_DEVICE 0
#endif

/** The memory of hypre's buffers in an exchange: a package has a plan for
 *  each it is exchanged in. */
enum { HH_HOST = 0, HH_DEVICE_MEM = 1 };

#if HH_DEVICE
/** hypre's compute stream (cudaStream_t), on which it packs, multiplies and
 *  unpacks: a device plan's exchanges are ordered on it. */
void *hh_device_stream(void);
/** Zero bytes of device memory at p, in stream order: 0, or nonzero when CUDA
 *  refused. */
int hh_device_zero(void *p, size_t bytes, void *stream);
/** Whether some rank of comm shares its GPU with another rank (the current
 *  device's PCI address among the ranks of each machine). Collective. */
int hh_device_shared(MPI_Comm comm);
#endif

/* Interposed functions are exported; everything else of the library is
 * hidden (C_VISIBILITY_PRESET hidden). */
#define HH_EXPORT __attribute__((visibility("default")))

/* ---- hypre's own functions (shim.c) ---------------------------------------- */

typedef hypre_ParCSRCommHandle *(*hh_create_v2_fn)(HYPRE_Int, hypre_ParCSRCommPkg *,
                                                   HYPRE_MemoryLocation, void *,
                                                   HYPRE_MemoryLocation, void *);
typedef HYPRE_Int (*hh_destroy_fn)(hypre_ParCSRCommHandle *);
typedef HYPRE_Int (*hh_pkg_create_fn)(hypre_ParCSRMatrix *);
typedef HYPRE_Int (*hh_pkg_destroy_fn)(hypre_ParCSRCommPkg *);
typedef HYPRE_Int (*hh_pkg_generate_fn)(MPI_Comm, HYPRE_Int, HYPRE_Int, HYPRE_Int *, HYPRE_Int *,
                                        HYPRE_Int *, hypre_ParCSRMatrix *);
typedef HYPRE_Int (*hh_pkg_rt_fn)(hypre_ParCSRMatrix *, hypre_ParCSRMatrix *, HYPRE_Int *,
                                  HYPRE_Int *);
typedef HYPRE_Int (*hh_amg_setup_fn)(void *, hypre_ParCSRMatrix *, hypre_ParVector *,
                                     hypre_ParVector *);
typedef HYPRE_Int (*hh_amg_destroy_fn)(void *);

/** hypre's functions that ours stand in front of (found at first use). */
typedef struct {
  hh_create_v2_fn create_v2;
  hh_destroy_fn destroy;
  hh_pkg_create_fn pkg_create;
  hh_pkg_destroy_fn pkg_destroy;
  hh_pkg_generate_fn pkg_generate;
  hh_pkg_rt_fn pkg_rt;
  hh_amg_setup_fn amg_setup;
  hh_amg_destroy_fn amg_destroy;
} hh_real_fns;

/** Depth of hypre_BoomerAMGSetup calls in progress (the report tells the
 *  set-up's exchanges from the solve's). */
extern int hh_in_amg_setup;

/** hypre's own functions; NULL entries where the dynamic linker has none
 *  (then halo is off: the message says why). */
const hh_real_fns *hh_real(void);

/* ---- settings (settings.c: the adapter's one reader of the environment) ------- */

/** The options of the environment, read once: the plan options, and whether
 *  halo routes (HALO_HYPRE), reports (HALO_HYPRE_VIEW). */
typedef struct {
  int read;                 /* 1 once read */
  int ok;                   /* 0: a variable was invalid (message printed): halo is off */
  int on;                   /* routing on (HALO_HYPRE, halo_hypre_set_enabled) */
  int view;                 /* HALO_HYPRE_VIEW */
  int plan_after;           /* HALO_HYPRE_PLAN_AFTER: a package outside an AMG hierarchy gets
                               its plan at its exchange of values number plan_after + 1 in one
                               memory; those before are hypre's (default 1) */
  halo_plan_options opts;   /* strategy, transport, message_cap */
  char why_off[256];        /* why halo is off, when it is */
} hh_settings;

/** This process's rank as the launcher tells it before MPI starts
 *  (Open MPI's and PMI's rank variables), -1 when it does not. */
int hh_launcher_rank(void);

/** The settings (read from the environment at the first call). */
hh_settings *hh_settings_get(void);

/** 1 when the loaded libHYPRE's HYPRE_Int and HYPRE_BigInt have the sizes of
 *  the headers' the adapter was built with (plain 4 and 4, bigint 8 and 8,
 *  mixed-int 4 and 8: builds of one release, which the version does not tell
 *  apart), else 0: then every function the adapter stands in front of hands
 *  its call to hypre untouched, reading none of hypre's structures (their
 *  layout differs), and the settings say why. */
int hh_abi_ok(void);

/** Print msg on the standard error, prefixed "halo-hypre: ", on rank 0
 *  of the world communicator only unless every_rank. */
void hh_warn(int every_rank, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the package registry (pkg.c) --------------------------------------------- */

/** Parts of a plan's set-up the view reports (halo_setup_part from 0). */
#define HH_PARTS 8

/** What the report keeps of one package (it outlives the package). */
typedef struct {
  int setup;               /* the AMG set-up it belongs to (1, 2, ...), 0: none */
  int level;               /* its level in that hierarchy, -1: unknown */
  char kind;               /* 'A', 'P', 'R' (the matrix it is the package of), '?' */
  int64_t global_rows, global_cols;
  int64_t local_rows, local_nnz;
  int planned;             /* 1: a halo plan was made */
  char left_why[96];       /* why the package's exchanges were left to hypre */
  int64_t n_before_plan;   /* of n_hypre: before its plan (HALO_HYPRE_PLAN_AFTER) */
  double parts[HH_PARTS]; /* its plan's set-up by part (halo_plan_setup_part_seconds) */
  int plan_order;          /* its plan's place among the plans made, from 1; 0: none */
  halo_stats stats;        /* of the plan */
  int64_t messages, inter_node_bytes; /* of the plan, all phases */
  char phases[160];        /* "msgs m1/m2/.. bytes b1/b2/.." (HALO_HYPRE_VIEW), from its phases */
  double modeled;          /* its modeled seconds (HALO_HYPRE_VIEW), else 0 */
  char describe[256];      /* halo_plan_describe */
  int64_t n_forward, n_reverse; /* exchanges through halo */
  int64_t n_multi;         /* of those, of several vectors at once */
  int multi_k;             /* the most vectors of one of them */
  int64_t n_hypre;         /* exchanges of values left to hypre */
  double seconds;          /* time inside the create and destroy calls of its exchanges */
  double plan_seconds;     /* time to make its plan (at its first exchange) */
} hh_record;

/** A communication package hypre made for a matrix (hypre_MatvecCommPkgCreate). */
typedef struct hh_pkg_s hh_pkg;

/** What halo_hypre_matvec(_t) keep with a package: the packed send buffer,
 *  the receive buffer, and a hypre vector over the latter. */
typedef struct {
  int state; /* 0: not made yet, 1: made on every rank, -1: not on some rank */
  double *send, *recv;
  hypre_Vector *ghosts;
} hh_matvec_buffers;

/** For halo_hypre_matvec(_t): A's package (registered if it was not), its
 *  plan (made at first use: collective) and buffers in *plan_p and *mv_p, or
 *  NULL there when the product is left to hypre (halo off, no plan, an
 *  exchange in flight, lists changed): the same answer on every rank. */
hh_pkg *hh_pkg_for_matvec(hypre_ParCSRMatrix *A, halo_plan *plan_p, hh_matvec_buffers **mv_p);
/** Count a product's exchange in the package's record (NULL-safe). */
void hh_pkg_count(hh_pkg *entry, int reverse, int through_halo, double seconds);

/** The vectors a package is set for now (hypre_ParCSRCommPkgUpdateVecStarts;
 *  pkg_plan.c): the same on every rank; one where the field is not set. */
int hh_pkg_components(const hypre_ParCSRCommPkg *p);
/** The options of a plan over hypre's buffers in memory mem (HH_HOST,
 *  HH_DEVICE_MEM): NULL, or why there is none (a build without device
 *  support). The first device plan with transport auto is collective. */
const char *hh_plan_options(MPI_Comm comm, int mem, halo_plan_options *o);
/** What the report keeps of a plan just made for record r (collective: the
 *  model, as the plan's creation). */
void hh_record_plan(hh_record *r, halo_plan plan);

/** Register the package of matrix A (after hypre made it: in
 *  hypre_MatvecCommPkgCreate, or for P and R^T in
 *  hypre_GetCommPkgRTFromCommPkgA and hypre_GenerateSendMapAndCommPkg). */
void hh_pkg_register(hypre_ParCSRMatrix *A);
/** Forget a package (before hypre frees it): its plan is destroyed. */
void hh_pkg_unregister(hypre_ParCSRCommPkg *comm_pkg);
/** Destroy every package's plans: the next exchange makes them with the
 *  options of now (halo_hypre_set_options). */
void hh_pkg_drop_plans(void);
/** The level tags of an AMG hierarchy just set up (matrices to levels). */
void hh_pkg_tag_hierarchy(void *amg_vdata);
/** Drop the level tags of a hierarchy about to be destroyed. */
void hh_pkg_untag_hierarchy(void *amg_vdata);

/** Start an exchange of values (job 1 or 2) on a registered package through
 *  halo, with hypre's buffers in memory mem (HH_HOST, HH_DEVICE_MEM); NULL
 *  when it is left to hypre (then *entry_p says whether the package is
 *  registered, for the timing). */
hypre_ParCSRCommHandle *hh_pkg_start(HYPRE_Int job, hypre_ParCSRCommPkg *comm_pkg, int mem,
                                     void *send_data, void *recv_data, hh_pkg **entry_p);
/** Complete a handle: 1 if it was halo's (done), 0 if it is hypre's. */
int hh_pkg_finish(hypre_ParCSRCommHandle *handle);
/** An exchange of a registered package left to hypre has started (handle
 *  h, seconds in hypre's create): counted in its record's time. */
void hh_pkg_hypre_started(hh_pkg *entry, hypre_ParCSRCommHandle *h, double seconds);
/** Seconds in hypre's destroy of such an exchange. */
void hh_pkg_add_hypre_time(hh_pkg *entry, double seconds);
/** The registered package of a handle made by hypre (for its destroy time). */
hh_pkg *hh_pkg_of_handle(hypre_ParCSRCommHandle *handle);

/* ---- the report (view.c) ------------------------------------------------------- */

/** A new record (index), or -1 when out of memory. */
int hh_record_new(void);
/** Record i (valid until the next hh_record_new). */
hh_record *hh_record_at(int i);
/** Fill r's messages, inter_node_bytes and phases from plan's phases (r->stats set). */
void hh_record_phases(halo_plan plan, hh_record *r);
/** Print the report at MPI_Finalize when HALO_HYPRE_VIEW (arms the hook). */
void hh_view_arm(void);
/** Counters of exchanges left to hypre that belong to no record. */
void hh_view_count_other(HYPRE_Int job);

#endif /* HALO_HYPRE_IMPL_H */
