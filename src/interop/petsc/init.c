/* halo for PETSc: the entry point PETSc calls after -dll_append, the
 * options, and the version check. */
#define _GNU_SOURCE /* dladdr */
#include "petsc_impl.h"

#include <dlfcn.h>
#include <string.h>
#include <petscversion.h>

HaloPetscConfig halo_petsc_config;
static PetscBool halo_petsc_initialized = PETSC_FALSE;

static PetscErrorCode HaloPetscFinalize(void) {
  PetscFunctionBegin;
  if (halo_petsc_config.view) PetscCall(HaloPetscSFRecordLive());
  if (halo_petsc_config.view) PetscCall(HaloPetscViewFinalize());
  PetscCall(HaloPetscPhaseStop());
  halo_petsc_initialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The private structures the wrapper uses are those of the headers it was
 * built with: a library built against another release must not run. */
static PetscErrorCode HaloPetscCheckVersion(void) {
  /* each number in a slot of 8 bytes: a loaded PETSc whose PetscInt is wider than the headers'
   * writes no further than its slot (the sizes are checked next) */
  PetscInt64 v[4] = {0, 0, 0, 0};
  size_t int_size = 0, scalar_size = 0;
  int major, minor, subminor;

  PetscFunctionBegin;
  PetscInt got[3];

  PetscCall(PetscGetVersionNumber((PetscInt *)(void *)&v[0], (PetscInt *)(void *)&v[1],
                                  (PetscInt *)(void *)&v[2], (PetscInt *)(void *)&v[3]));
  for (int i = 0; i < 3; i++) memcpy(&got[i], &v[i], sizeof got[i]);
  major = (int)got[0], minor = (int)got[1], subminor = (int)got[2];
  PetscCheck(major == PETSC_VERSION_MAJOR && minor == PETSC_VERSION_MINOR, PETSC_COMM_SELF,
             PETSC_ERR_SUP_SYS,
             "halo: libhalo_petsc was built against PETSc %d.%d but is loaded into PETSc %d.%d.%d; "
             "rebuild halo with this PETSc (HALO_ENABLE_PETSC=ON, PKG_CONFIG_PATH pointing to it)",
             PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, major, minor, subminor);
  /* builds of one release differ in their integer and scalar sizes (Debian's real, complex,
   * 64-bit real and 64-bit complex PETSc 3.18), which the version does not tell: the loaded
   * library's own sizes against the headers' */
  PetscCall(PetscDataTypeGetSize(PETSC_INT, &int_size));
  PetscCall(PetscDataTypeGetSize(PETSC_SCALAR, &scalar_size));
  { /* PETSC_SCALAR is the headers' own enumerator (a real build's PETSC_DOUBLE): the loaded
     * library's PetscScalar is told by what it writes through a pointer to one, a complex
     * one's imaginary part over the second slot */
    double probe[4] = {0.0, 12345.0, 12345.0, 12345.0};
    PetscBool set = PETSC_FALSE;
    PetscCall(PetscOptionsSetValue(NULL, "-halo_internal_scalar_probe", "2"));
    PetscCall(PetscOptionsGetScalar(NULL, NULL, "-halo_internal_scalar_probe",
                                    (PetscScalar *)(void *)probe, &set));
    PetscCall(PetscOptionsClearValue(NULL, "-halo_internal_scalar_probe"));
    if (set && probe[0] == 2.0 && probe[1] == 0.0) scalar_size = 2 * sizeof(double);
  }
  PetscCheck(int_size == sizeof(PetscInt) && scalar_size == sizeof(PetscScalar), PETSC_COMM_SELF,
             PETSC_ERR_SUP_SYS,
             "halo: %s was built against a PETSc with %d-byte PetscInt and %d-byte PetscScalar, but "
             "the loaded PETSc has %d-byte PetscInt and %d-byte PetscScalar; load the adapter built "
             "against this PETSc build (libhalo_petsc.so is built against the PETSc that "
             "pkg-config finds as PETSc, libhalo_petsc<suffix>.so against HALO_PETSC_VARIANTS' "
             "others, e.g. libhalo_petsc64.so against Debian's PETSc64)",
             HALO_PETSC_LIBFILE, (int)sizeof(PetscInt), (int)sizeof(PetscScalar), (int)int_size,
             (int)scalar_size);
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloPetscReadOptions(void) {
  HaloPetscConfig *cfg = &halo_petsc_config;
  char strategy[64] = "", transport[64] = "";
  PetscInt ranks_per_node = 0, message_cap = HALO_DEFAULT_MESSAGE_CAP;
  PetscBool set;
  halo_plan_options resolved;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(cfg, sizeof *cfg));
  cfg->opts = halo_plan_options_default();
  PetscCall(PetscStrncpy(strategy, halo_strategy_name(cfg->opts.strategy), sizeof strategy));
  PetscCall(PetscStrncpy(transport, halo_transport_name(cfg->opts.transport), sizeof transport));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "halo: the exchange of MatMult through halo's plans",
                    "halo");
  PetscCall(PetscOptionsBool("-halo_sf", "Run the scatters of PETSc's basic star forests through halo", "HaloPetscInitialize", cfg->sf, &cfg->sf, NULL));
  PetscCall(PetscOptionsString("-halo_sf_strategy", "halo's strategy: standard, 2step, 3step, split or auto", "HaloPetscInitialize", strategy, strategy, sizeof strategy, &set));
  if (set) {
    halo_status hs = halo_strategy_from_name(strategy, &cfg->opts.strategy);
    PetscCheck(hs == HALO_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "halo: -halo_sf_strategy: %s", halo_last_error());
  }
  PetscCall(PetscOptionsString("-halo_sf_transport", "How messages travel: host, rma or neighbor in host memory; auto, staged, nccl, ipc, mpi-device, nvshmem in device memory", "HaloPetscInitialize", transport, transport, sizeof transport, &set));
  if (set) {
    halo_status hs = halo_transport_from_name(transport, &cfg->opts.transport);
    PetscCheck(hs == HALO_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "halo: -halo_sf_transport: %s", halo_last_error());
  }
  PetscCall(PetscOptionsInt("-halo_sf_ranks_per_node", "Virtual nodes of this many consecutive ranks (0: the nodes MPI reports)", "HaloPetscInitialize", ranks_per_node, &ranks_per_node, &set));
  if (set) {
    PetscCheck(ranks_per_node >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "halo: -halo_sf_ranks_per_node %" PetscInt_FMT ": must be 0 (the nodes MPI reports) or more", ranks_per_node);
    cfg->opts.ranks_per_node = (int)ranks_per_node;
  }
  PetscCall(PetscOptionsInt("-halo_sf_message_cap", "Split: the largest inter-node message, in bytes", "HaloPetscInitialize", message_cap, &message_cap, &set));
  if (set) cfg->opts.message_cap = message_cap;
  PetscCall(PetscOptionsString("-halo_sf_params", "The model's machine parameters (strategy auto): a built-in name or a file of halo params measure", "HaloPetscInitialize", cfg->params, cfg->params, sizeof cfg->params, &set));
  if (set) cfg->opts.params = cfg->params;
  PetscCall(PetscOptionsString("-halo_sf_wisdom", "A file of remembered choices of strategy auto, read and added to (default HALO_WISDOM)", "HaloPetscInitialize", cfg->wisdom, cfg->wisdom, sizeof cfg->wisdom, &set));
  if (set) cfg->opts.wisdom = cfg->wisdom;
  PetscCall(PetscOptionsString("-halo_sf_settings", "halo's components' settings, NAME=VALUE,... (halo spmv --list-settings lists them; default HALO_SETTINGS)", "HaloPetscInitialize", cfg->settings, cfg->settings, sizeof cfg->settings, &set));
  if (set) cfg->opts.settings = cfg->settings;
  PetscCall(PetscOptionsBool("-halo_sf_verify", "Run PETSc's basic too and compare (a check; slow)", "HaloPetscInitialize", cfg->verify, &cfg->verify, NULL));
  PetscCall(PetscOptionsBool("-halo_sf_verify_corrupt", "Test -halo_sf_verify: rank 0 changes the first value of its copy of halo's result before the comparison, which must then fail", "HaloPetscInitialize", cfg->verify_corrupt, &cfg->verify_corrupt, NULL));
  PetscCall(PetscOptionsBool("-halo_sf_view", "At PetscFinalize, print every halo plan and the calls it ran", "HaloPetscInitialize", cfg->view, &cfg->view, NULL));
  PetscOptionsEnd();
  {
    halo_status hs = halo_plan_options_resolve(&cfg->opts, &resolved);
    PetscCheck(hs == HALO_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "halo: %s", halo_last_error());
  }
  PetscFunctionReturn(0);
}

/* Keep the shared object holding fn loaded until the process ends. PETSc
 * closes the libraries of -dll_append in PetscFinalize, before MPI_Finalize,
 * which then runs the delete callbacks of the attributes halo caches on
 * communicators (its contexts): their code must still be there. */
static void HaloPetscPin(void *fn) {
  Dl_info info;

  if (dladdr(fn, &info) && info.dli_fname)
    (void)dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

PetscErrorCode HaloPetscInitialize(void) {
  PetscFunctionBegin;
  if (halo_petsc_initialized) PetscFunctionReturn(0);
  HaloPetscPin((void *)halo_version);
  HaloPetscPin((void *)HaloPetscInitialize);
  PetscCall(HaloPetscCheckVersion());
  PetscCall(HaloPetscReadOptions());
  PetscCall(HaloPetscSFRegister());
  PetscCall(HaloPetscMatRegister());
  if (halo_petsc_config.view) PetscCall(HaloPetscPhaseStart()); /* the view's solve phase */
  PetscCall(PetscRegisterFinalize(HaloPetscFinalize));
  halo_petsc_initialized = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* PETSc's entry point for -dll_append, named after the library's file:
 * PetscDLLibraryRegister_halo_petsc, or _halo_petsc<suffix> for another PETSc build's
 * adapter (HALO_PETSC_LIBNAME, set by the build) */
#ifndef HALO_PETSC_LIBNAME
#define HALO_PETSC_LIBNAME halo_petsc
#endif
#define HALO_PETSC_CAT2_(a, b) a##b
#define HALO_PETSC_CAT_(a, b) HALO_PETSC_CAT2_(a, b)
#define HALO_PETSC_ENTRY HALO_PETSC_CAT_(PetscDLLibraryRegister_, HALO_PETSC_LIBNAME)
PETSC_EXTERN PetscErrorCode HALO_PETSC_ENTRY(void);
PetscErrorCode HALO_PETSC_ENTRY(void) {
  PetscFunctionBegin;
  PetscCall(HaloPetscInitialize());
  PetscFunctionReturn(0);
}
