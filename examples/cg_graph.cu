// Conjugate gradients on the 27-point Laplacian with the whole iteration in
// one CUDA graph: the distributed product (halo_spmv_async over NCCL), two
// dot products (a fixed-order reduction on each GPU, then ncclAllReduce) and
// the vector updates, with every scalar on the GPU, so that the host launches
// one graph per iteration and never waits.
//
// The program runs the same iterations twice from x = 0, b = 1: first eagerly
// (each call enqueued on the stream), then as one captured graph launched once
// per iteration. The residual histories and the solutions must agree bit for
// bit. It prints the first and last residual and rank 0's time per iteration
// of each road (events around the iterations on its stream).
//
//   mpirun -n 2 examples/cg_graph [N=128] [ITERATIONS=50]
//
// One rank per GPU (NCCL). Exit 0 when the two roads agree, 1 when they do
// not, 2 on an error.
#include <cuda_runtime.h>
#include <halo.h>
#include <halo/io.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA(call)                                                                                 \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) fail(#call, cudaGetErrorString(e_));                                    \
  } while (0)
#define NCCL(call)                                                                                 \
  do {                                                                                             \
    ncclResult_t r_ = (call);                                                                      \
    if (r_ != ncclSuccess) fail(#call, ncclGetErrorString(r_));                                    \
  } while (0)
#define HALO(call)                                                                                 \
  do {                                                                                             \
    if ((call) != HALO_SUCCESS) fail(#call, halo_last_error());                                    \
  } while (0)

static void fail(const char *call, const char *why) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "rank %d: %s: %s\n", rank, call, why);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

constexpr int kThreads = 256, kBlocks = 256;

// partial[blockIdx.x] = the block's part of sum a[i]*b[i], in a fixed order
__global__ void dot_partial(const double *a, const double *b, int64_t n, double *partial) {
  __shared__ double s[kThreads];
  double v = 0.0;
  for (int64_t i = blockIdx.x * (int64_t)kThreads + threadIdx.x; i < n;
       i += (int64_t)kBlocks * kThreads)
    v += a[i] * b[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

// *out = the sum of the partials, in a fixed order (one block)
__global__ void dot_final(const double *partial, double *out) {
  __shared__ double s[kBlocks];
  s[threadIdx.x] = partial[threadIdx.x];
  __syncthreads();
  for (int w = kBlocks / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = s[0];
}

// the scalars of an iteration, on the GPU
struct scalars {
  double rr, pq, rr_new;
  long long it; // iterations done
};

// x += alpha p, r -= alpha q with alpha = rr / pq
__global__ void update_xr(double *x, double *r, const double *p, const double *q, int64_t n,
                          const scalars *sc) {
  const double alpha = sc->rr / sc->pq;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    x[i] += alpha * p[i];
    r[i] -= alpha * q[i];
  }
}

// p = r + beta p with beta = rr_new / rr
__global__ void update_p(double *p, const double *r, int64_t n, const scalars *sc) {
  const double beta = sc->rr_new / sc->rr;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    p[i] = r[i] + beta * p[i];
}

// rr = rr_new; history[it++] = rr
__global__ void next_iteration(scalars *sc, double *history) {
  sc->rr = sc->rr_new;
  history[sc->it++] = sc->rr;
}

struct cg {
  halo_plan plan;
  ncclComm_t nccl;
  cudaStream_t s;
  int64_t n;
  double *x, *r, *p, *q, *partial, *history;
  scalars *sc;
};

static void dot(const cg &c, const double *a, const double *b, double *out) {
  dot_partial<<<kBlocks, kThreads, 0, c.s>>>(a, b, c.n, c.partial);
  dot_final<<<1, kBlocks, 0, c.s>>>(c.partial, out);
  NCCL(ncclAllReduce(out, out, 1, ncclDouble, ncclSum, c.nccl, c.s));
}

// one CG iteration, enqueued on c.s
static void iteration(const cg &c) {
  const int64_t blocks = (c.n + kThreads - 1) / kThreads;
  const unsigned grid = (unsigned)(blocks < 1 ? 1 : blocks < 4096 ? blocks : 4096);
  HALO(halo_spmv_async(c.plan, c.s, 1.0, c.p, 0.0, c.q));
  dot(c, c.p, c.q, &c.sc->pq);
  update_xr<<<grid, kThreads, 0, c.s>>>(c.x, c.r, c.p, c.q, c.n, c.sc);
  dot(c, c.r, c.r, &c.sc->rr_new);
  update_p<<<grid, kThreads, 0, c.s>>>(c.p, c.r, c.n, c.sc);
  next_iteration<<<1, 1, 0, c.s>>>(c.sc, c.history);
}

// x = 0, r = p = b = 1, rr = r.r, it = 0
static void start(const cg &c, const double *ones) {
  CUDA(cudaMemsetAsync(c.x, 0, (size_t)c.n * sizeof(double), c.s));
  CUDA(cudaMemcpyAsync(c.r, ones, (size_t)c.n * sizeof(double), cudaMemcpyDeviceToDevice, c.s));
  CUDA(cudaMemcpyAsync(c.p, ones, (size_t)c.n * sizeof(double), cudaMemcpyDeviceToDevice, c.s));
  CUDA(cudaMemsetAsync(c.sc, 0, sizeof(scalars), c.s));
  dot(c, c.r, c.r, &c.sc->rr_new);
  next_iteration<<<1, 1, 0, c.s>>>(c.sc, c.history); // history[0] = r.r
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, local = 0, n_dev = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int N = argc > 1 ? atoi(argv[1]) : 128, iters = argc > 2 ? atoi(argv[2]) : 50;
  halo_transport tr = HALO_TRANSPORT_NCCL; // the transports a graph can replay: nccl, nvshmem
  if (N < 2 || iters < 1 || (argc > 3 && halo_transport_from_name(argv[3], &tr) != HALO_SUCCESS))
    fail("arguments", "usage: cg_graph [N >= 2] [ITERATIONS >= 1] [nccl|nvshmem]");
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  CUDA(cudaGetDeviceCount(&n_dev));
  CUDA(cudaSetDevice(local % n_dev));

  // the matrix, this rank's rows, and a plan over NCCL on our stream
  char spec[64];
  snprintf(spec, sizeof spec, "lap3d27:%d", N);
  halo_gen g;
  halo_csr rows;
  int64_t *rb;
  HALO(halo_gen_parse(spec, &g));
  HALO(halo_gen_distributed(MPI_COMM_WORLD, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
  cg c;
  memset(&c, 0, sizeof c);
  const int64_t b = rb[rank];
  c.n = rb[rank + 1] - b;
  halo_matrix A;
  HALO(halo_matrix_create_csr(MPI_COMM_WORLD, b, b + c.n, b, b + c.n, rows.row_ptr, rows.col_ids,
                              rows.values, HALO_MEMORY_HOST, &A));
  CUDA(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
  halo_plan_options o = halo_plan_options_default();
  o.memory = HALO_MEMORY_DEVICE;
  o.strategy = HALO_STRATEGY_STANDARD;
  o.transport = tr;
  o.stream = c.s;
  HALO(halo_plan_create(A, &o, &c.plan));
  // our own NCCL communicator for the dot products
  ncclUniqueId id;
  if (rank == 0) NCCL(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  NCCL(ncclCommInitRank(&c.nccl, size, id, rank));

  const size_t bytes = (size_t)(c.n > 0 ? c.n : 1) * sizeof(double);
  double *ones = NULL;
  CUDA(cudaMalloc((void **)&c.x, bytes));
  CUDA(cudaMalloc((void **)&c.r, bytes));
  CUDA(cudaMalloc((void **)&c.p, bytes));
  CUDA(cudaMalloc((void **)&c.q, bytes));
  CUDA(cudaMalloc((void **)&ones, bytes));
  CUDA(cudaMalloc((void **)&c.partial, kBlocks * sizeof(double)));
  CUDA(cudaMalloc((void **)&c.history, (size_t)(iters + 1) * sizeof(double)));
  CUDA(cudaMalloc((void **)&c.sc, sizeof(scalars)));
  double *h1 = (double *)malloc(bytes), *h2 = (double *)malloc(bytes);
  for (int64_t i = 0; i < c.n; i++) h1[i] = 1.0;
  CUDA(cudaMemcpy(ones, h1, bytes, cudaMemcpyHostToDevice));
  double *hist1 = (double *)malloc((size_t)(iters + 1) * sizeof(double)),
         *hist2 = (double *)malloc((size_t)(iters + 1) * sizeof(double));
  cudaEvent_t t0, t1;
  CUDA(cudaEventCreate(&t0));
  CUDA(cudaEventCreate(&t1));
  float ms_eager = 0, ms_graph = 0;

  // eagerly: every call enqueued on the stream
  start(c, ones);
  iteration(c); // NCCL's connections, outside the timing
  start(c, ones);
  CUDA(cudaStreamSynchronize(c.s));
  MPI_Barrier(MPI_COMM_WORLD);
  CUDA(cudaEventRecord(t0, c.s));
  for (int k = 0; k < iters; k++) iteration(c);
  CUDA(cudaEventRecord(t1, c.s));
  CUDA(cudaStreamSynchronize(c.s));
  CUDA(cudaEventElapsedTime(&ms_eager, t0, t1));
  CUDA(cudaMemcpy(hist1, c.history, (size_t)(iters + 1) * sizeof(double), cudaMemcpyDeviceToHost));
  CUDA(cudaMemcpy(h1, c.x, bytes, cudaMemcpyDeviceToHost));

  // one iteration captured into a graph, launched once per iteration
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  start(c, ones);
  CUDA(cudaStreamSynchronize(c.s));
  CUDA(cudaStreamBeginCapture(c.s, cudaStreamCaptureModeRelaxed));
  iteration(c);
  CUDA(cudaStreamEndCapture(c.s, &graph));
  CUDA(cudaGraphInstantiate(&exec, graph, 0));
  MPI_Barrier(MPI_COMM_WORLD);
  CUDA(cudaEventRecord(t0, c.s));
  for (int k = 0; k < iters; k++) CUDA(cudaGraphLaunch(exec, c.s));
  CUDA(cudaEventRecord(t1, c.s));
  CUDA(cudaStreamSynchronize(c.s));
  CUDA(cudaEventElapsedTime(&ms_graph, t0, t1));
  CUDA(cudaMemcpy(hist2, c.history, (size_t)(iters + 1) * sizeof(double), cudaMemcpyDeviceToHost));
  CUDA(cudaMemcpy(h2, c.x, bytes, cudaMemcpyDeviceToHost));

  int same = memcmp(hist1, hist2, (size_t)(iters + 1) * sizeof(double)) == 0 &&
             (c.n == 0 || memcmp(h1, h2, bytes) == 0);
  int all_same = 0;
  MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("cg_graph: lap3d27:%d on %d ranks (%s), %d iterations: |r|^2 from %.6e to %.6e\n", N,
           size, halo_transport_name(tr), iters, hist1[0], hist1[iters]);
    printf("cg_graph: eager %.1f us per iteration, graph %.1f us per iteration (%.3fx)\n",
           1e3 * ms_eager / iters, 1e3 * ms_graph / iters, ms_graph / ms_eager);
    printf("cg_graph: residual histories and solutions %s\n",
           all_same ? "identical, bit for bit" : "DIFFER");
  }
  CUDA(cudaGraphExecDestroy(exec));
  CUDA(cudaGraphDestroy(graph));
  NCCL(ncclCommDestroy(c.nccl));
  halo_plan_destroy(&c.plan);
  CUDA(cudaStreamDestroy(c.s));
  halo_matrix_destroy(&A);
  halo_csr_free(&rows);
  halo_io_free(rb);
  cudaFree(c.x), cudaFree(c.r), cudaFree(c.p), cudaFree(c.q), cudaFree(ones);
  cudaFree(c.partial), cudaFree(c.history), cudaFree(c.sc);
  free(h1), free(h2), free(hist1), free(hist2);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return all_same ? 0 : 1;
}
