/* halo for hypre: the entry points that stand in front of hypre's own.
 *
 * libHYPRE calls its exported functions through the dynamic linker, so a
 * definition found first (LD_PRELOAD, or a library linked before -lHYPRE)
 * replaces them for an unmodified program. Each function here decides
 * whether halo takes the call; everything else goes to hypre's function,
 * found with dlsym(RTLD_NEXT). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "hypre_impl.h"

static hh_real_fns real_fns;
static int real_found;

/* hypre's definition of name: the next one after ours, else libHYPRE's. */
static void *find_real(const char *name)
{
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    void *lib = dlopen(HH_HYPRE_LIBNAME, RTLD_NOW | RTLD_NOLOAD);
    if (lib) f = dlsym(lib, name);
  }
  return f;
}

const hh_real_fns *hh_real(void)
{
  if (!real_found) {
    real_fns.create_v2 = (hh_create_v2_fn)find_real("hypre_ParCSRCommHandleCreate_v2");
    real_fns.destroy = (hh_destroy_fn)find_real("hypre_ParCSRCommHandleDestroy");
    real_fns.pkg_create = (hh_pkg_create_fn)find_real("hypre_MatvecCommPkgCreate");
    real_fns.pkg_destroy = (hh_pkg_destroy_fn)find_real("hypre_MatvecCommPkgDestroy");
    real_fns.pkg_generate = (hh_pkg_generate_fn)find_real("hypre_GenerateSendMapAndCommPkg");
    real_fns.pkg_rt = (hh_pkg_rt_fn)find_real("hypre_GetCommPkgRTFromCommPkgA");
    real_fns.amg_setup = (hh_amg_setup_fn)find_real("hypre_BoomerAMGSetup");
    real_fns.amg_destroy = (hh_amg_destroy_fn)find_real("hypre_BoomerAMGDestroy");
    real_found = 1;
  }
  return &real_fns;
}

/* A function of hypre's we stand in front of but cannot find: nothing can
 * be handed on. Say so on every rank and fail the call through hypre's error
 * flag rather than crash. */
static void missing(const char *name)
{
  hh_warn(1, "hypre's %s was not found by the dynamic linker (is libHYPRE loaded?)", name);
  hypre_error_w_msg(HYPRE_ERROR_GENERIC, "halo-hypre: hypre's own function not found\n");
}

static double now(void) { return MPI_Wtime(); }

int hh_in_amg_setup;       /* inside hypre_BoomerAMGSetup */
static int reached_setup;  /* hypre_BoomerAMGSetup came through here */
static int warned_direct;

/* At load: a definition of hypre's functions found before ours (hypre
 * linked statically into the program, or a library before this one) means
 * that nothing here will ever be called. Say so, once per job. */
__attribute__((constructor)) static void check_order(void)
{
  void *f = dlsym(RTLD_DEFAULT, "hypre_ParCSRCommHandleCreate_v2");
  Dl_info mine, theirs;
  if (!f || !dladdr((void *)check_order, &mine) || !dladdr(f, &theirs)) return;
  if (!mine.dli_fname || !theirs.dli_fname || !strcmp(mine.dli_fname, theirs.dli_fname)) return;
  if (hh_launcher_rank() > 0) return;
  fprintf(stderr,
          "halo-hypre: hypre's functions are defined in %s, before libhalo_hypre: halo cannot "
          "stand in front of them (hypre linked statically? load libhalo_hypre with LD_PRELOAD "
          "or link it before -lHYPRE)\n",
          theirs.dli_fname);
}

HH_EXPORT hypre_ParCSRCommHandle *hypre_ParCSRCommHandleCreate_v2(
    HYPRE_Int job, hypre_ParCSRCommPkg *comm_pkg, HYPRE_MemoryLocation send_memory_location,
    void *send_data, HYPRE_MemoryLocation recv_memory_location, void *recv_data)
{
  const hh_real_fns *r = hh_real();
  hh_pkg *entry = NULL;
  if (!hh_abi_ok()) /* another build of hypre: handed on untouched */
    return r->create_v2 ? r->create_v2(job, comm_pkg, send_memory_location, send_data,
                                       recv_memory_location, recv_data)
                        : NULL;
  /* both buffers in host memory, or both in device memory (not unified):
   * else (-1) left to hypre, and counted so when the package is a matrix's */
  const hypre_MemoryLocation ms = hypre_GetActualMemLocation(send_memory_location);
  const hypre_MemoryLocation mr = hypre_GetActualMemLocation(recv_memory_location);
  const int mem = ms != mr                    ? -1
                  : ms == hypre_MEMORY_HOST   ? HH_HOST
                  : ms == hypre_MEMORY_DEVICE ? HH_DEVICE_MEM
                                              : -1;
  if ((job == 1 || job == 2) && comm_pkg) {
    hypre_ParCSRCommHandle *h = hh_pkg_start(job, comm_pkg, mem, send_data, recv_data, &entry);
    if (h) return h;
  }
  if (!r->create_v2) {
    missing("hypre_ParCSRCommHandleCreate_v2");
    return NULL;
  }
  if (!entry) {
    hh_view_count_other(job);
    return r->create_v2(job, comm_pkg, send_memory_location, send_data, recv_memory_location,
                        recv_data);
  }
  double t0 = now();
  hypre_ParCSRCommHandle *h =
      r->create_v2(job, comm_pkg, send_memory_location, send_data, recv_memory_location, recv_data);
  if (h) hh_pkg_hypre_started(entry, h, now() - t0);
  return h;
}

HH_EXPORT hypre_ParCSRCommHandle *hypre_ParCSRCommHandleCreate(HYPRE_Int job,
                                                               hypre_ParCSRCommPkg *comm_pkg,
                                                               void *send_data, void *recv_data)
{
  return hypre_ParCSRCommHandleCreate_v2(job, comm_pkg, HYPRE_MEMORY_HOST, send_data,
                                         HYPRE_MEMORY_HOST, recv_data);
}

HH_EXPORT HYPRE_Int hypre_ParCSRCommHandleDestroy(hypre_ParCSRCommHandle *comm_handle)
{
  if (!comm_handle) return hypre_error_flag;
  const hh_real_fns *r = hh_real();
  if (!hh_abi_ok()) return r->destroy ? r->destroy(comm_handle) : hypre_error_flag;
  if (hh_pkg_finish(comm_handle)) return hypre_error_flag;
  if (!r->destroy) {
    missing("hypre_ParCSRCommHandleDestroy");
    return hypre_error_flag;
  }
  hh_pkg *entry = hh_pkg_of_handle(comm_handle);
  if (!entry) return r->destroy(comm_handle);
  double t0 = now();
  HYPRE_Int ierr = r->destroy(comm_handle);
  hh_pkg_add_hypre_time(entry, now() - t0);
  return ierr;
}

HH_EXPORT HYPRE_Int hypre_MatvecCommPkgCreate(hypre_ParCSRMatrix *A)
{
  const hh_real_fns *r = hh_real();
  if (!r->pkg_create) {
    missing("hypre_MatvecCommPkgCreate");
    return hypre_error_flag;
  }
  HYPRE_Int ierr = r->pkg_create(A);
  if (hh_abi_ok() && !ierr && A && hypre_ParCSRMatrixCommPkg(A)) hh_pkg_register(A);
  return ierr;
}

/* The package of an interpolation P made from A's (classical interpolation,
 * hypre_GetCommPkgRTFromCommPkgA, which makes it with
 * hypre_GenerateSendMapAndCommPkg, a call that a build of hypre may make
 * directly): it belongs to the matrix and is destroyed with it by
 * hypre_MatvecCommPkgDestroy. */
HH_EXPORT HYPRE_Int hypre_GetCommPkgRTFromCommPkgA(hypre_ParCSRMatrix *RT, hypre_ParCSRMatrix *A,
                                                   HYPRE_Int *fine_to_coarse,
                                                   HYPRE_Int *tmp_map_offd)
{
  const hh_real_fns *r = hh_real();
  if (!r->pkg_rt) {
    missing("hypre_GetCommPkgRTFromCommPkgA");
    return hypre_error_flag;
  }
  HYPRE_Int ierr = r->pkg_rt(RT, A, fine_to_coarse, tmp_map_offd);
  if (hh_abi_ok() && !ierr && RT && hypre_ParCSRMatrixCommPkg(RT)) hh_pkg_register(RT);
  return ierr;
}

HH_EXPORT HYPRE_Int hypre_GenerateSendMapAndCommPkg(MPI_Comm comm, HYPRE_Int num_sends,
                                                    HYPRE_Int num_recvs, HYPRE_Int *recv_procs,
                                                    HYPRE_Int *send_procs,
                                                    HYPRE_Int *recv_vec_starts,
                                                    hypre_ParCSRMatrix *A)
{
  const hh_real_fns *r = hh_real();
  if (!r->pkg_generate) {
    missing("hypre_GenerateSendMapAndCommPkg");
    return hypre_error_flag;
  }
  HYPRE_Int ierr =
      r->pkg_generate(comm, num_sends, num_recvs, recv_procs, send_procs, recv_vec_starts, A);
  if (hh_abi_ok() && !ierr && A && hypre_ParCSRMatrixCommPkg(A)) hh_pkg_register(A);
  return ierr;
}

HH_EXPORT HYPRE_Int hypre_MatvecCommPkgDestroy(hypre_ParCSRCommPkg *comm_pkg)
{
  const hh_real_fns *r = hh_real();
  if (comm_pkg && hh_abi_ok()) hh_pkg_unregister(comm_pkg);
  if (!r->pkg_destroy) {
    missing("hypre_MatvecCommPkgDestroy");
    return hypre_error_flag;
  }
  return r->pkg_destroy(comm_pkg);
}

HH_EXPORT HYPRE_Int hypre_BoomerAMGSetup(void *amg_vdata, hypre_ParCSRMatrix *A,
                                         hypre_ParVector *f, hypre_ParVector *u)
{
  const hh_real_fns *r = hh_real();
  if (!r->amg_setup) {
    missing("hypre_BoomerAMGSetup");
    return hypre_error_flag;
  }
  reached_setup = 1;
  hh_in_amg_setup++;
  HYPRE_Int ierr = r->amg_setup(amg_vdata, A, f, u);
  hh_in_amg_setup--;
  if (amg_vdata && hh_abi_ok()) hh_pkg_tag_hierarchy(amg_vdata);
  return ierr;
}

/* The public set-up, called by the program: if hypre's internal call of
 * hypre_BoomerAMGSetup did not come through here, libHYPRE binds its own
 * calls directly (-Bsymbolic, LTO or hidden symbols) and halo sees none of
 * its exchanges. */
HH_EXPORT HYPRE_Int HYPRE_BoomerAMGSetup(HYPRE_Solver solver, HYPRE_ParCSRMatrix A,
                                         HYPRE_ParVector b, HYPRE_ParVector x)
{
  typedef HYPRE_Int (*fn)(HYPRE_Solver, HYPRE_ParCSRMatrix, HYPRE_ParVector, HYPRE_ParVector);
  static fn real;
  if (!real) real = (fn)find_real("HYPRE_BoomerAMGSetup");
  if (!real) {
    missing("HYPRE_BoomerAMGSetup");
    return hypre_error_flag;
  }
  reached_setup = 0;
  HYPRE_Int ierr = real(solver, A, b, x);
  if (!reached_setup && !warned_direct) {
    warned_direct = 1;
    hh_warn(0, "libHYPRE called its own hypre_BoomerAMGSetup directly (a static, LTO or "
               "-Bsymbolic build of hypre): halo cannot stand in front of its exchanges");
  }
  return ierr;
}

HH_EXPORT HYPRE_Int hypre_BoomerAMGDestroy(void *amg_vdata)
{
  const hh_real_fns *r = hh_real();
  if (!r->amg_destroy) {
    missing("hypre_BoomerAMGDestroy");
    return hypre_error_flag;
  }
  if (amg_vdata && hh_abi_ok()) hh_pkg_untag_hierarchy(amg_vdata);
  return r->amg_destroy(amg_vdata);
}
