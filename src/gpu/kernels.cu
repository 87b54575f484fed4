// commbench's SM copy and latency kernels, compiled at run time by NVRTC
// (src/gpu/nvrtc_lib.rs) and launched by src/gpu_bw/kernels.rs, which
// holds each signature below in its argument layout. The GPU stand-in
// (tests/support/gpu_standin/cuda.c) runs the same semantics on host
// memory; a change here is a change there.
//
// Elements are 16 bytes (uint4). A thread's index is
// blockIdx.x * blockDim.x + threadIdx.x; its warp is that index / 32 and
// its lane that index % 32. Loads and stores of the looping copies go
// through L2 only (cache-global), so repeated loops measure the path, not
// L1; the grid-stride copy uses plain ones, as the CUDA sample it stands
// in for does.

typedef unsigned long long u64;

// Each thread copies its own element, `loops` times. The launcher sizes
// the grid so that grid * block elements are copied.
extern "C" __global__ void commbench_copy_simple(u64 loops, uint4 *dst, const uint4 *src)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (u64 n = 0; n < loops; n++)
        __stcg(dst + i, __ldcg(src + i));
}

// p2pBandwidthLatencyTest's copy (--sm_copy): elements 0..n-1 once, each
// thread starting at its own index and stepping by the grid's thread count,
// so whatever grid the launcher picks covers all n. The loop is unrolled
// five times, as the sample's is.
extern "C" __global__ void commbench_copy_grid_stride(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t n)
{
    const size_t step = (size_t)gridDim.x * blockDim.x;
#pragma unroll 5
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dst[i] = src[i];
}

// Loads kept in flight per thread before their stores.
#define COMMBENCH_BATCH 12

// Thread t of `threads` copies elements t, t + threads, t + 2 * threads,
// ..., `per_thread` of them, `loops` times: COMMBENCH_BATCH loads issued
// together, then their stores, so each SM keeps many requests outstanding.
extern "C" __global__ void commbench_copy_strided(unsigned int threads, u64 loops, uint4 *dst, const uint4 *src,
                                                  size_t per_thread)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads)
        return;
    const size_t stride = threads;
    for (u64 n = 0; n < loops; n++) {
        size_t k = 0;
        for (; k + COMMBENCH_BATCH <= per_thread; k += COMMBENCH_BATCH) {
            uint4 held[COMMBENCH_BATCH];
#pragma unroll
            for (int j = 0; j < COMMBENCH_BATCH; j++)
                held[j] = __ldcg(src + t + (k + j) * stride);
#pragma unroll
            for (int j = 0; j < COMMBENCH_BATCH; j++)
                __stcg(dst + t + (k + j) * stride, held[j]);
        }
        for (; k < per_thread; k++)
            __stcg(dst + t + k * stride, __ldcg(src + t + k * stride));
    }
}

// Both ways at once between two buffers: odd warps copy their elements
// from b to a, even warps from a to b (the launcher passes a = dst,
// b = src), `loops` times.
extern "C" __global__ void commbench_copy_split_warp(u64 loops, uint4 *a, uint4 *b)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int odd = (int)((i / 32) & 1);
    uint4 *to = odd ? a : b;
    const uint4 *from = odd ? b : a;
    for (u64 n = 0; n < loops; n++)
        __stcg(to + i, __ldcg(from + i));
}

// Latency: block `target_block` alone (one thread per block) follows the
// chain p = *p `accesses` times from `start`. A null end traps, so the
// loads cannot be dropped; volatile loads are not served from L1.
extern "C" __global__ void commbench_pointer_chase(void **start, unsigned int accesses, unsigned int target_block)
{
    if (blockIdx.x != target_block || threadIdx.x != 0)
        return;
    void **p = start;
    for (unsigned int k = 0; k < accesses; k++)
        p = (void **)*(void *volatile *)p;
    if (p == 0)
        __trap();
}

// buf[i] = pattern[i % pattern_len] for every i < n (grid-stride).
extern "C" __global__ void commbench_fill_pattern(unsigned int *buf, const unsigned int *pattern, u64 n,
                                                  unsigned int pattern_len)
{
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        buf[i] = pattern[i % pattern_len];
}

// Adds to *wrong the number of i < n with buf[i] != pattern[i % pattern_len]
// (grid-stride; one atomic per thread that found any).
extern "C" __global__ void commbench_count_mismatches(const unsigned int *buf, const unsigned int *pattern, u64 n,
                                                      unsigned int pattern_len, u64 *wrong)
{
    const u64 step = (u64)gridDim.x * blockDim.x;
    u64 mine = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        mine += buf[i] != pattern[i % pattern_len];
    if (mine)
        atomicAdd(wrong, mine);
}

// Zeroes the element of every thread whose warp's parity is `odd` (1: odd
// warps, 0: even ones), to prepare the check of a split-warp copy.
extern "C" __global__ void commbench_clear_warp_parity(uint4 *buf, int odd)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if ((int)((i / 32) & 1) == (odd != 0))
        buf[i] = make_uint4(0, 0, 0, 0);
}
