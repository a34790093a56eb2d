/**
 * @file
 * halo for PETSc: the halo exchange of MatMult through halo's plans.
 *
 * libhalo_petsc.so is a PETSc dynamic library. An unmodified PETSc program
 * gets halo from the command line:
 *
 *   mpirun -n 8 ./app -dll_append /path/libhalo_petsc.so -halo_sf [options]
 *
 * (or the same in PETSC_OPTIONS). Loading the library alone changes nothing:
 * -halo_sf turns it on. With it, PETSc's PetscSF type "basic" is wrapped: a
 * star forest made by VecScatterCreate (the scatter of MatMult of MATMPIAIJ
 * among them) whose Bcast inserts doubles and whose Reduce adds them is run
 * by a halo plan, made from its graph at its first such call; every other
 * star forest, unit, operation and memory type goes to PETSc's own basic
 * implementation untouched. The decision is collective: a star forest goes
 * through halo on all of its ranks or on none.
 *
 * Options (PETSc's options database, listed by -help):
 * @code{.unparsed}
 *   -halo_sf                      on/off (default off)
 *   -halo_sf_strategy <s>         standard, 2step, 3step, split, auto
 *   -halo_sf_transport <t>        auto, staged, nccl, ipc, mpi-device (device memory)
 *   -halo_sf_ranks_per_node <k>   virtual nodes of k consecutive ranks (0: from MPI)
 *   -halo_sf_message_cap <bytes>  Split's largest inter-node message
 *   -halo_sf_params <name|file>   the model's machine parameters (strategy auto)
 *   -halo_sf_verify               run PETSc's basic too and compare (a check, slow)
 *   -halo_sf_view                 at PetscFinalize: every plan, its messages,
 *                                 bytes, modeled time and calls through halo
 * @endcode
 * The same plan options serve the Mat type MATMPIAIJHALO.
 *
 * Built against one PETSc version and loaded only into that version (checked
 * at load): the private structures it uses change between releases.
 */
#ifndef HALO_PETSC_H
#define HALO_PETSC_H

#include <petscmat.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The Mat type whose products run halo_spmv (a subtype of MATMPIAIJ:
 *  -mat_type mpiaijhalo for programs that call MatSetFromOptions). */
#define MATMPIAIJHALO "mpiaijhalo"

/**
 * Register halo with PETSc: the star forest type "halo", the Mat type
 * MATMPIAIJHALO, and, when -halo_sf is set, the wrapper of the type "basic".
 * Reads the -halo_sf_* options. Call after PetscInitialize(); calling it again
 * does nothing. The library's PETSc entry point (-dll_append) calls it.
 * Errors: a PETSc version other than the one it was built against, an option
 * halo does not accept.
 * @return 0, or a PETSc error code
 */
PETSC_EXTERN PetscErrorCode HaloPetscInitialize(void);

/**
 * Make the products of a MATMPIAIJ matrix (MatMult, MatMultAdd,
 * MatMultTranspose, MatMultTransposeAdd) run through a halo plan and halo's
 * kernels, with the plan options of -halo_sf_*. The plan is made at the first
 * product after assembly and follows the matrix: new values are copied in,
 * a new nonzero pattern makes a new plan. Collective. MatDuplicate and
 * MatConvert give matrices without it (use the type MATMPIAIJHALO to keep it).
 * @param A  the matrix, of type MATMPIAIJ
 * @return 0, or a PETSc error code
 */
PETSC_EXTERN PetscErrorCode HaloPetscMatAttach(Mat A);

/** PETSc's entry point for -dll_append: HaloPetscInitialize(). (The adapter for
 *  another PETSc build, libhalo_petsc<suffix>.so, names its own
 *  PetscDLLibraryRegister_halo_petsc<suffix>, as PETSc looks it up by file name.)
 *  @return 0, or a PETSc error code */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_halo_petsc(void);

#ifdef __cplusplus
}
#endif

#endif /* HALO_PETSC_H */
