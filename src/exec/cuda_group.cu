/* The reverse exchange's additions grouped by destination on the device, at plan
 * time: a stable radix sort of (destination, reference) pairs, the run-length
 * encoding of the sorted destinations and the scan of their counts (cub). The
 * host sort it replaces took most of a reverse executor's set-up on a rank with a
 * million additions. */
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" cudaError_t halo_cuda_group_adds(int32_t *dst, int32_t *ref, int64_t n, int end_bit,
                                            int32_t *u_ptr, int64_t *u_p, cudaStream_t s) {
  *u_p = 0;
  if (n <= 0) return cudaSuccess;
  if (n > INT32_MAX) return cudaErrorInvalidValue;
  const int m = (int)n;
  size_t b_sort = 0, b_rle = 0, b_scan = 0;
  cudaError_t e =
      cub::DeviceRadixSort::SortPairs(nullptr, b_sort, dst, dst, ref, ref, m, 0, end_bit, s);
  if (e == cudaSuccess)
    e = cub::DeviceRunLengthEncode::Encode(nullptr, b_rle, dst, dst, dst, (int *)nullptr, m, s);
  if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(nullptr, b_scan, dst, u_ptr, m + 1, s);
  if (e != cudaSuccess) return e;
  size_t b_tmp = b_sort > b_rle ? b_sort : b_rle;
  if (b_scan > b_tmp) b_tmp = b_scan;
  b_tmp = (b_tmp + 255) / 256 * 256;
  const size_t b_arr = ((size_t)m + 1) * sizeof(int32_t);
  const size_t b_arr_r = (b_arr + 255) / 256 * 256;
  char *base = nullptr;
  e = cudaMalloc((void **)&base, b_tmp + 3 * b_arr_r + 256);
  if (e != cudaSuccess) return e;
  void *tmp = base;
  int32_t *keys = (int32_t *)(base + b_tmp), *vals = (int32_t *)(base + b_tmp + b_arr_r);
  int32_t *counts = (int32_t *)(base + b_tmp + 2 * b_arr_r);
  int *n_runs = (int *)(base + b_tmp + 3 * b_arr_r);
  int runs = 0;
  size_t b = b_tmp;
  /* stable: each destination keeps its references' order */
  e = cub::DeviceRadixSort::SortPairs(tmp, b, dst, keys, ref, vals, m, 0, end_bit, s);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(ref, vals, (size_t)m * sizeof(int32_t), cudaMemcpyDeviceToDevice, s);
  b = b_tmp;
  if (e == cudaSuccess)
    e = cub::DeviceRunLengthEncode::Encode(tmp, b, keys, dst, counts, n_runs, m, s);
  if (e == cudaSuccess) e = cudaMemcpyAsync(&runs, n_runs, sizeof runs, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  /* the offsets: the counts' exclusive scan, one more for the end */
  if (e == cudaSuccess) e = cudaMemsetAsync(counts + runs, 0, sizeof(int32_t), s);
  b = b_tmp;
  if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, b, counts, u_ptr, runs + 1, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  cudaFree(base);
  if (e == cudaSuccess) *u_p = runs;
  return e;
}
