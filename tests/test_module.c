/* halo's CUDA module is loaded only when a device object is made.
 *
 *   test_module present   a host SpMV leaves libhalo_cuda, libcudart,
 *                         libcusparse, libnccl and NVSHMEM unmapped (read from
 *                         /proc/self/maps); then a device matrix loads the
 *                         module and the CUDA libraries; with a GPU on every
 *                         rank, the device SpMV gives the host's values bit
 *                         for bit; without one, halo says why (a CUDA error,
 *                         not a missing module)
 *   test_module missing   the module is not beside libhalo.so: a device
 *                         matrix fails with HALO_ERR_NOT_COMPILED naming
 *                         libhalo_cuda.so, on every rank
 * A build without CUDA expects "not compiled in" for both. The program links
 * no CUDA library: it finds the runtime's functions with dlopen, once halo
 * has loaded it. */
#include <dlfcn.h>
#include <halo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

/* Whether a mapping of this process names one of the libraries. */
static int mapped(const char *const *libs, char *which, size_t len) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  if (!f) {
    fprintf(stderr, "rank %d: cannot read /proc/self/maps\n", rank);
    exit(2);
  }
  while (!found && fgets(line, sizeof line, f))
    for (int i = 0; libs[i]; i++)
      if (strstr(line, libs[i])) {
        snprintf(which, len, "%s", libs[i]);
        found = 1;
        break;
      }
  fclose(f);
  return found;
}

static const char *const device_libs[] = {"libhalo_cuda.so", "libcudart.so", "libcusparse.so",
                                          "libnccl.so",      "nvshmem",      NULL};

typedef int (*cuda_malloc_fn)(void **, size_t);
typedef int (*cuda_memcpy_fn)(void *, const void *, size_t, int);
typedef int (*cuda_free_fn)(void *);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size, fail = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int missing = argc > 1 && strcmp(argv[1], "missing") == 0;
  const int64_t n = 600, b = rank * n / size, e = (rank + 1) * n / size, m = e - b;
  int64_t *row_ptr = malloc((size_t)(m + 1) * sizeof *row_ptr),
          *cols = malloc(3 * (size_t)(m + 1) * sizeof *cols);
  double *vals = malloc(3 * (size_t)(m + 1) * sizeof *vals),
         *x = malloc((size_t)(m + 1) * sizeof *x), *y = malloc((size_t)(m + 1) * sizeof *y),
         *yd = malloc((size_t)(m + 1) * sizeof *yd);
  int64_t k = 0;
  for (int64_t i = b; i < e; i++) {
    row_ptr[i - b] = k;
    if (i > 0) cols[k] = i - 1, vals[k++] = -1.0;
    cols[k] = i, vals[k++] = 2.0 + (double)(i % 7);
    if (i + 1 < n) cols[k] = i + 1, vals[k++] = -0.5;
    x[i - b] = (double)(i % 13) - 6.0;
  }
  row_ptr[m] = k;

  /* 1. host memory: no device library */
  halo_matrix A = NULL;
  halo_plan plan = NULL;
  halo_status st =
      halo_matrix_create_csr(MPI_COMM_WORLD, b, e, b, e, row_ptr, cols, vals, HALO_MEMORY_HOST, &A);
  if (st == HALO_SUCCESS) st = halo_plan_create(A, NULL, &plan);
  if (st == HALO_SUCCESS) st = halo_spmv(plan, 1.0, x, 0.0, y);
  if (st != HALO_SUCCESS) {
    fprintf(stderr, "rank %d: host SpMV: %s\n", rank, halo_last_error());
    fail = 1;
  }
  for (int64_t i = b; i < e && !fail; i++) { /* the serial product, the same order of terms */
    double r = 0.0;
    for (int64_t j = row_ptr[i - b]; j < row_ptr[i - b + 1]; j++)
      r += vals[j] * ((double)(cols[j] % 13) - 6.0);
    if (r != y[i - b])
      fprintf(stderr, "rank %d: host row %lld: %g, not %g\n", rank, (long long)i, y[i - b], r),
          fail = 1;
  }
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  char which[64] = "";
  if (mapped(device_libs, which, sizeof which)) {
    fprintf(stderr, "rank %d: a host SpMV mapped %s\n", rank, which);
    fail = 1;
  }

  /* 2. device memory: the module loads (or says why not) */
  void *rt = NULL;
  cuda_malloc_fn cmalloc = NULL;
  cuda_memcpy_fn cmemcpy = NULL;
  cuda_free_fn cfree = NULL;
  int64_t *d_rp = NULL, *d_cols = NULL;
  double *d_vals = NULL, *d_x = NULL, *d_y = NULL;
  int gpu = 0;
  if (!missing && HALO_HAVE_CUDA) { /* the runtime halo's module brings: any GPU here? */
    rt = dlopen("libcudart.so." HALO_TEST_CUDART_MAJOR, RTLD_NOW | RTLD_NOLOAD);
    if (!rt) rt = dlopen("libcudart.so." HALO_TEST_CUDART_MAJOR, RTLD_NOW);
    if (rt) {
      cmalloc = (cuda_malloc_fn)(uintptr_t)dlsym(rt, "cudaMalloc");
      cmemcpy = (cuda_memcpy_fn)(uintptr_t)dlsym(rt, "cudaMemcpy");
      cfree = (cuda_free_fn)(uintptr_t)dlsym(rt, "cudaFree");
      gpu = cmalloc && cmemcpy && cfree && cmalloc((void **)&d_rp, (size_t)(m + 1) * 8) == 0 &&
            cmalloc((void **)&d_cols, 3 * (size_t)(m + 1) * 8) == 0 &&
            cmalloc((void **)&d_vals, 3 * (size_t)(m + 1) * 8) == 0 &&
            cmalloc((void **)&d_x, (size_t)(m + 1) * 8) == 0 &&
            cmalloc((void **)&d_y, (size_t)(m + 1) * 8) == 0;
      if (gpu)
        gpu = cmemcpy(d_rp, row_ptr, (size_t)(m + 1) * 8, 1) == 0 &&
              cmemcpy(d_cols, cols, (size_t)k * 8, 1) == 0 &&
              cmemcpy(d_vals, vals, (size_t)k * 8, 1) == 0 &&
              cmemcpy(d_x, x, (size_t)(m + 1) * 8, 1) == 0;
    }
    int all = gpu;
    MPI_Allreduce(&gpu, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    gpu = all;
  }
  /* without a GPU the device matrix gets host pointers: the module must load to find that out */
  st = halo_matrix_create_csr(MPI_COMM_WORLD, b, e, b, e, gpu ? d_rp : row_ptr, gpu ? d_cols : cols,
                              gpu ? d_vals : vals, HALO_MEMORY_DEVICE, &A);
  if (st == HALO_SUCCESS) st = halo_plan_create(A, NULL, &plan);
  if (st == HALO_SUCCESS) st = halo_spmv(plan, 1.0, d_x, 0.0, d_y);
  const char *msg = halo_last_error();
  if (!HALO_HAVE_CUDA) {
    if (st != HALO_ERR_NOT_COMPILED || !strstr(msg, "rebuild with HALO_ENABLE_CUDA=ON"))
      fprintf(stderr, "rank %d: without CUDA: %s: %s\n", rank, halo_status_string(st), msg),
          fail = 1;
  } else if (missing) {
    if (st != HALO_ERR_NOT_COMPILED || !strstr(msg, "libhalo_cuda.so"))
      fprintf(stderr, "rank %d: module missing: expected its name, got %s: %s\n", rank,
              halo_status_string(st), msg),
          fail = 1;
    if (mapped(device_libs, which, sizeof which))
      fprintf(stderr, "rank %d: module missing, yet %s mapped\n", rank, which), fail = 1;
  } else {
    static const char *const module_lib[] = {"libhalo_cuda.so", NULL};
    static const char *const runtime_lib[] = {"libcudart.so", NULL};
    if (!mapped(module_lib, which, sizeof which) || !mapped(runtime_lib, which, sizeof which))
      fprintf(stderr, "rank %d: a device matrix did not load the module and the runtime\n", rank),
          fail = 1;
    if (gpu) {
      if (st != HALO_SUCCESS)
        fprintf(stderr, "rank %d: device SpMV: %s\n", rank, msg), fail = 1;
      else if (cmemcpy(yd, d_y, (size_t)m * 8, 2) != 0)
        fprintf(stderr, "rank %d: copy back failed\n", rank), fail = 1;
      else
        for (int64_t i = 0; i < m && !fail; i++)
          if (yd[i] != y[i])
            fprintf(stderr, "rank %d: device row %lld: %.17g, host %.17g\n", rank,
                    (long long)(b + i), yd[i], y[i]),
                fail = 1;
    } else if (st == HALO_SUCCESS || st == HALO_ERR_NOT_COMPILED) {
      fprintf(stderr, "rank %d: without a GPU: expected a CUDA error, got %s: %s\n", rank,
              halo_status_string(st), msg);
      fail = 1;
    } else if (rank == 0) {
      printf("without a GPU, as expected: %s: %s\n", halo_status_string(st), msg);
    }
  }
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  if (cfree) {
    cfree(d_rp), cfree(d_cols), cfree(d_vals), cfree(d_x), cfree(d_y);
  }
  int any = fail;
  MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("%s%s\n", any ? "FAILED" : "passed", gpu ? " (device SpMV on a GPU)" : "");
  free(row_ptr), free(cols), free(vals), free(x), free(y), free(yd);
  MPI_Finalize();
  return any ? 1 : 0;
}
