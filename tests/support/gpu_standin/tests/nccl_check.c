/*
 * Checks of the NCCL stand-in across processes: the parent makes the
 * unique id and forks one process per rank (rank r on visible GPU
 * gpu_of(r)); each rank runs the scenario and exits 0, or prints
 * `FAIL rank R: ...` and exits 1; the parent exits 0 only when every rank
 * did. Lines on stdout are `rank R key value ...` for the Rust side.
 */
#define _GNU_SOURCE
#include "api.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int g_rank = -1, g_n = 0;

#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        fprintf(stderr, "FAIL rank %d: ", g_rank);                                                                     \
        fprintf(stderr, __VA_ARGS__);                                                                                  \
        fputc('\n', stderr);                                                                                           \
        exit(1);                                                                                                       \
    } while (0)
#define CK(x)                                                                                                          \
    do {                                                                                                               \
        int rc_ = (x);                                                                                                 \
        if (rc_)                                                                                                       \
            FAIL("line %d: %s returned %d (%s)", __LINE__, #x, rc_, ncclGetLastError(NULL));                           \
    } while (0)
#define EXPECT(c, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(c))                                                                                                      \
            FAIL(__VA_ARGS__);                                                                                         \
    } while (0)

static const size_t TSIZE[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
static const char *const TNAME[] = {"int8", "uint8", "int32", "uint32", "int64",
                                    "uint64", "float16", "float32", "float64", "bfloat16"};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* --------------------------------------------------------------- values */

/* Small integers, exact in every type and summed without overflow. */
static int value(int rank, size_t i)
{
    return (int)((rank * 5 + 3 + i * 7) % 9) - 4;
}

static uint16_t to_half(float f)
{
    /* Exact for the small integers used here. */
    if (f == 0)
        return 0;
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)(((x >> 16) & 0x8000) | ((((x >> 23) & 0xff) - 112) << 10) | ((x >> 13) & 0x3ff));
}

static float from_half(uint16_t h)
{
    if ((h & 0x7fff) == 0)
        return 0;
    uint32_t x = ((uint32_t)(h & 0x8000) << 16) | ((((h >> 10) & 0x1f) + 112) << 23) | ((uint32_t)(h & 0x3ff) << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static void put(void *buf, size_t i, int t, double v)
{
    switch (t) {
    case ncclInt8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case ncclUint8: ((uint8_t *)buf)[i] = (uint8_t)(int)v; break;
    case ncclInt32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case ncclUint32: ((uint32_t *)buf)[i] = (uint32_t)(int64_t)v; break;
    case ncclInt64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case ncclUint64: ((uint64_t *)buf)[i] = (uint64_t)(int64_t)v; break;
    case ncclFloat16: ((uint16_t *)buf)[i] = to_half((float)v); break;
    case ncclFloat32: ((float *)buf)[i] = (float)v; break;
    case ncclFloat64: ((double *)buf)[i] = v; break;
    case ncclBfloat16: {
        float f = (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        ((uint16_t *)buf)[i] = (uint16_t)(x >> 16);
        break;
    }
    }
}

static double get(const void *buf, size_t i, int t)
{
    switch (t) {
    case ncclInt8: return ((const int8_t *)buf)[i];
    case ncclUint8: return (int8_t)((const uint8_t *)buf)[i];
    case ncclInt32: return ((const int32_t *)buf)[i];
    case ncclUint32: return (int32_t)((const uint32_t *)buf)[i];
    case ncclInt64: return (double)((const int64_t *)buf)[i];
    case ncclUint64: return (double)(int64_t)((const uint64_t *)buf)[i];
    case ncclFloat16: return from_half(((const uint16_t *)buf)[i]);
    case ncclFloat32: return ((const float *)buf)[i];
    case ncclFloat64: return ((const double *)buf)[i];
    case ncclBfloat16: {
        uint32_t x = (uint32_t)((const uint16_t *)buf)[i] << 16;
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
    }
    return NAN;
}

/* ---------------------------------------------------------------- setup */

typedef struct {
    ncclComm_t comm;
    CUstream s;
    CUcontext ctx;
    int ordinal;
} rankenv;

static int gpu_of(int rank)
{
    const char *map = getenv("STANDIN_GPU_MAP"); /* "0,0" puts ranks on GPUs by hand */
    if (map && *map) {
        const char *p = map;
        for (int r = 0; r < rank && p; r++) {
            p = strchr(p, ',');
            if (p)
                p++;
        }
        return p ? atoi(p) : rank;
    }
    return rank;
}

static ncclResult_t join(rankenv *e, ncclUniqueId id)
{
    CK(cuInit(0));
    CUdevice d;
    e->ordinal = gpu_of(g_rank);
    CK(cuDeviceGet(&d, e->ordinal));
    CK(cuDevicePrimaryCtxRetain(&e->ctx, d));
    CK(cuCtxSetCurrent(e->ctx));
    CK(cuStreamCreate(&e->s, 1));
    return ncclCommInitRank(&e->comm, g_n, id, g_rank);
}

static CUdeviceptr dalloc(size_t bytes)
{
    CUdeviceptr p;
    CK(cuMemAlloc_v2(&p, bytes ? bytes : 1));
    return p;
}

/* Fills device memory from the host, synchronised before NCCL reads it. */
static void upload(CUdeviceptr d, const void *h, size_t bytes)
{
    CK(cuMemcpyHtoD_v2(d, h, bytes));
    CK(cuCtxSynchronize());
}

static void download(void *h, CUdeviceptr d, size_t bytes, CUstream s)
{
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(h, d, bytes));
}

/* --------------------------------------------------------------- values */

static long long g_checked;

static void check_elem(const char *what, int t, size_t count, const void *buf, size_t i, double want)
{
    double got = get(buf, i, t);
    if (got != want)
        FAIL("%s %s count %zu: element %zu is %g, expected %g", what, TNAME[t], count, i, got, want);
    g_checked++;
}

static double sum_at(size_t i)
{
    double s = 0;
    for (int r = 0; r < g_n; r++)
        s += value(r, i);
    return s;
}

/* Every collective and the grouped all-to-all, out of place and in place,
 * for one type and count. */
static void values_for(rankenv *e, int t, size_t count, int do_alltoall)
{
    size_t es = TSIZE[t], n = (size_t)g_n, total = count * n;
    char *h = malloc(total * es), *out = malloc(total * es);
    EXPECT(h && out, "malloc");
    CUdeviceptr a = dalloc(total * es), b = dalloc(total * es);
    int me = g_rank;

    for (int place = 0; place < 2; place++) {
        const char *tag = place ? "in-place" : "out-of-place";
        char what[64];
        /* allreduce */
        for (size_t i = 0; i < count; i++)
            put(h, i, t, value(me, i));
        upload(a, h, count * es);
        CK(ncclAllReduce((void *)a, (void *)(place ? a : b), count, t, ncclSum, e->comm, e->s));
        download(out, place ? a : b, count * es, e->s);
        snprintf(what, sizeof what, "allreduce %s", tag);
        for (size_t i = 0; i < count; i++)
            check_elem(what, t, count, out, i, sum_at(i));
        /* allgather: in place the input is block `me` of the output */
        for (size_t i = 0; i < count; i++)
            put(h, i, t, value(me, i));
        CUdeviceptr src = place ? b + me * count * es : a;
        upload(src, h, count * es);
        CK(ncclAllGather((void *)src, (void *)b, count, t, e->comm, e->s));
        download(out, b, total * es, e->s);
        snprintf(what, sizeof what, "allgather %s", tag);
        for (int r = 0; r < g_n; r++)
            for (size_t i = 0; i < count; i++)
                check_elem(what, t, count, out, r * count + i, value(r, i));
        /* reduce_scatter: in place the output is block `me` of the input */
        for (size_t j = 0; j < total; j++)
            put(h, j, t, value(me, j));
        upload(a, h, total * es);
        CUdeviceptr dst = place ? a + me * count * es : b;
        CK(ncclReduceScatter((void *)a, (void *)dst, count, t, ncclSum, e->comm, e->s));
        download(out, dst, count * es, e->s);
        snprintf(what, sizeof what, "reduce_scatter %s", tag);
        for (size_t i = 0; i < count; i++)
            check_elem(what, t, count, out, i, sum_at(me * count + i));
        /* broadcast from the last rank */
        int root = g_n - 1;
        for (size_t i = 0; i < count; i++)
            put(h, i, t, value(me, i));
        upload(a, h, count * es);
        CK(cuMemsetD8_v2(b, 0x77, count * es));
        CK(cuCtxSynchronize());
        CK(ncclBroadcast((void *)a, (void *)(place ? a : b), count, t, root, e->comm, e->s));
        download(out, place ? a : b, count * es, e->s);
        snprintf(what, sizeof what, "broadcast %s", tag);
        for (size_t i = 0; i < count; i++)
            check_elem(what, t, count, out, i, value(root, i));
        /* reduce to rank 0 */
        upload(a, h, count * es);
        CK(ncclReduce((void *)a, (void *)(place ? a : b), count, t, ncclSum, 0, e->comm, e->s));
        download(out, place ? a : b, count * es, e->s);
        snprintf(what, sizeof what, "reduce %s", tag);
        if (me == 0)
            for (size_t i = 0; i < count; i++)
                check_elem(what, t, count, out, i, sum_at(i));
    }
    if (do_alltoall) {
        /* all-to-all of grouped sends and receives, sends posted first */
        for (size_t j = 0; j < total; j++)
            put(h, j, t, value(me, j));
        upload(a, h, total * es);
        CK(ncclGroupStart());
        for (int p = 0; p < g_n; p++)
            CK(ncclSend((void *)(a + p * count * es), count, t, p, e->comm, e->s));
        CK(ncclGroupStart()); /* nested */
        for (int p = 0; p < g_n; p++)
            CK(ncclRecv((void *)(b + p * count * es), count, t, p, e->comm, e->s));
        CK(ncclGroupEnd());
        CK(ncclGroupEnd());
        download(out, b, total * es, e->s);
        for (int r = 0; r < g_n; r++)
            for (size_t i = 0; i < count; i++)
                check_elem("alltoall", t, count, out, r * count + i, value(r, me * count + i));
    }
    CK(cuMemFree_v2(a));
    CK(cuMemFree_v2(b));
    free(h);
    free(out);
}

static int rank_values(ncclUniqueId id)
{
    rankenv e;
    CK(join(&e, id));
    int count_, rank_, dev_;
    CK(ncclCommCount(e.comm, &count_));
    CK(ncclCommUserRank(e.comm, &rank_));
    CK(ncclCommCuDevice(e.comm, &dev_));
    EXPECT(count_ == g_n && rank_ == g_rank && dev_ == e.ordinal, "comm says %d ranks, rank %d, device %d", count_,
           rank_, dev_);
    /* From one element up; 300007 floats span two chunks of the shared
     * segment (a reduce-scatter's blocks more). */
    const int types[] = {ncclInt8, ncclInt32, ncclFloat32};
    const size_t counts[3][4] = {{1, 3, 1000, 70001}, {1, 3, 1000, 70001}, {1, 3, 1000, 300007}};
    for (size_t ti = 0; ti < 3; ti++)
        for (size_t ci = 0; ci < 4; ci++)
            values_for(&e, types[ti], counts[ti][ci], 1);
    /* The other types, once each. */
    const int more[] = {ncclUint8, ncclUint32, ncclInt64, ncclUint64, ncclFloat16, ncclFloat64, ncclBfloat16};
    for (size_t ti = 0; ti < 7; ti++)
        values_for(&e, more[ti], 777, 0);
    /* Tens of MiB: a float allreduce and an int8 all-to-all. */
    {
        size_t count = (size_t)6 << 20, bytes = count * 4;
        float *h = malloc(bytes), *out = malloc(bytes);
        EXPECT(h && out, "malloc");
        CUdeviceptr a = dalloc(bytes);
        for (size_t i = 0; i < count; i++)
            h[i] = (float)value(g_rank, i);
        upload(a, h, bytes);
        CK(ncclAllReduce((void *)a, (void *)a, count, ncclFloat32, ncclSum, e.comm, e.s));
        download(out, a, bytes, e.s);
        for (size_t i = 0; i < count; i++)
            if (out[i] != (float)sum_at(i))
                FAIL("allreduce 24 MiB: element %zu is %g, expected %g", i, out[i], sum_at(i));
        g_checked += (long long)count;
        CK(cuMemFree_v2(a));
        free(h);
        free(out);
    }
    size_t big = ((size_t)24 << 20) / (size_t)g_n;
    {
        size_t total = big * (size_t)g_n;
        char *h = malloc(total), *out = malloc(total);
        EXPECT(h && out, "malloc");
        CUdeviceptr a = dalloc(total), b = dalloc(total);
        for (size_t j = 0; j < total; j++)
            h[j] = (char)value(g_rank, j);
        upload(a, h, total);
        CK(ncclGroupStart());
        for (int p = 0; p < g_n; p++) {
            CK(ncclSend((void *)(a + p * big), big, ncclInt8, p, e.comm, e.s));
            CK(ncclRecv((void *)(b + p * big), big, ncclInt8, p, e.comm, e.s));
        }
        CK(ncclGroupEnd());
        download(out, b, total, e.s);
        for (int r = 0; r < g_n; r++)
            for (size_t i = 0; i < big; i++)
                check_elem("alltoall 24 MiB", ncclInt8, big, out, r * big + i, value(r, g_rank * big + i));
        free(h);
        free(out);
    }
    /* Other reductions. */
    {
        size_t count = 100;
        int32_t h[100], out[100];
        CUdeviceptr a = dalloc(sizeof h), b = dalloc(sizeof h);
        for (size_t i = 0; i < count; i++)
            h[i] = value(g_rank, i);
        upload(a, h, sizeof h);
        const int ops[] = {ncclProd, ncclMax, ncclMin, ncclAvg};
        for (int k = 0; k < 4; k++) {
            CK(ncclAllReduce((void *)a, (void *)b, count, ncclInt32, ops[k], e.comm, e.s));
            download(out, b, sizeof out, e.s);
            for (size_t i = 0; i < count; i++) {
                long long want = ops[k] == ncclProd ? 1 : ops[k] == ncclMax ? -100 : ops[k] == ncclMin ? 100 : 0;
                for (int r = 0; r < g_n; r++) {
                    int v = value(r, i);
                    want = ops[k] == ncclProd ? want * v
                           : ops[k] == ncclMax ? (v > want ? v : want)
                           : ops[k] == ncclMin ? (v < want ? v : want)
                                               : want + v;
                }
                if (ops[k] == ncclAvg)
                    want /= g_n;
                EXPECT(out[i] == want, "allreduce op %d element %zu: %d, expected %lld", ops[k], i, out[i], want);
            }
        }
    }
    ncclResult_t state;
    CK(ncclCommGetAsyncError(e.comm, &state));
    EXPECT(state == 0, "async error %d after correct work", state);
    CK(ncclCommDestroy(e.comm));
    printf("rank %d checked %lld elements\n", g_rank, g_checked);
    return 0;
}

/* ----------------------------------------------------------- bus bandwidth */

/* Holds a stream until the host has queued everything behind it (so that
 * host scheduling on a busy machine does not leave gaps between the
 * timed operations). */
static volatile int g_gate_open;

static void gate(void *arg)
{
    (void)arg;
    while (!g_gate_open)
        sleep_ms(1);
}

/* Event-timed: behind a gate, a warm-up, then the start event, `reps`
 * operations and the stop event, so that every rank's events fall at the
 * same modelled times (the warm-up's end is the same on every rank). */
static int rank_busbw(ncclUniqueId id)
{
    rankenv e;
    CK(join(&e, id));
    const char *bytes_env = getenv("STANDIN_BYTES");
    size_t bytes = bytes_env ? (size_t)atoll(bytes_env) : ((size_t)8 << 20);
    size_t n = (size_t)g_n, count = bytes / 4;
    CUdeviceptr a = dalloc(bytes * n), b = dalloc(bytes * n);
    CUevent start, stop;
    CK(cuEventCreate(&start, 0));
    CK(cuEventCreate(&stop, 0));
    const int reps = 3;
    const char *names[] = {"allreduce", "allgather", "reduce_scatter", "broadcast", "reduce", "alltoall"};
    for (int k = 0; k < 6; k++) {
        size_t per = k == 1 || k == 2 || k == 5 ? count / n : count; /* per-rank block */
        g_gate_open = 0;
        CK(cuLaunchHostFunc(e.s, gate, NULL));
        for (int i = 0; i <= reps; i++) {
            if (i == 1)
                CK(cuEventRecord(start, e.s));
            switch (k) {
            case 0: CK(ncclAllReduce((void *)a, (void *)b, count, ncclFloat32, ncclSum, e.comm, e.s)); break;
            case 1: CK(ncclAllGather((void *)a, (void *)b, per, ncclFloat32, e.comm, e.s)); break;
            case 2: CK(ncclReduceScatter((void *)a, (void *)b, per, ncclFloat32, ncclSum, e.comm, e.s)); break;
            case 3: CK(ncclBroadcast((void *)a, (void *)b, count, ncclFloat32, 0, e.comm, e.s)); break;
            case 4: CK(ncclReduce((void *)a, (void *)b, count, ncclFloat32, ncclSum, 0, e.comm, e.s)); break;
            case 5:
                CK(ncclGroupStart());
                for (int p = 0; p < g_n; p++) {
                    CK(ncclSend((void *)(a + p * per * 4), per, ncclFloat32, p, e.comm, e.s));
                    CK(ncclRecv((void *)(b + p * per * 4), per, ncclFloat32, p, e.comm, e.s));
                }
                CK(ncclGroupEnd());
                break;
            }
        }
        CK(cuEventRecord(stop, e.s));
        g_gate_open = 1;
        CK(cuEventSynchronize(stop));
        float ms;
        CK(cuEventElapsedTime(&ms, start, stop));
        double t = (double)ms * 1e-3 / reps;
        /* nccl-tests' sizes and bus factors */
        double size = (double)per * 4 * (k == 1 || k == 2 || k == 5 ? (double)n : 1.0);
        double factor = k == 0 ? 2.0 * ((double)n - 1) / (double)n
                        : k == 3 || k == 4 ? 1.0
                                           : ((double)n - 1) / (double)n;
        printf("rank %d busbw %s %.6f bytes %.0f seconds %.9f\n", g_rank, names[k], size / t * factor / 1e9, size,
               t);
    }
    /* Host-timed (where the host keeps up: run with a large time scale). */
    if (getenv("STANDIN_HOST_TIMED")) {
        CK(cuStreamSynchronize(e.s));
        CK(ncclAllReduce((void *)a, (void *)b, count, ncclFloat32, ncclSum, e.comm, e.s));
        CK(cuStreamSynchronize(e.s));
        double t0 = now_s();
        for (int i = 0; i < reps; i++)
            CK(ncclAllReduce((void *)a, (void *)b, count, ncclFloat32, ncclSum, e.comm, e.s));
        CK(cuStreamSynchronize(e.s));
        double t = (now_s() - t0) / reps;
        printf("rank %d hostbw allreduce %.6f seconds %.9f\n", g_rank,
               (double)bytes / t * 2.0 * ((double)n - 1) / (double)n / 1e9, t);
    }
    CK(ncclCommDestroy(e.comm));
    return 0;
}

/* ---------------------------------------------------------------- faults */

/* COMMBENCH_STANDIN_NCCL_CORRUPT=rank=1,op=2: rank 1's outputs from its
 * second operation on have their first element flipped. */
static int rank_corrupt(ncclUniqueId id)
{
    rankenv e;
    CK(join(&e, id));
    const size_t count = 64;
    int32_t h[64 * 8], out[64 * 8];
    CUdeviceptr a = dalloc(sizeof h), b = dalloc(sizeof h);
    for (size_t i = 0; i < count; i++)
        h[i] = value(g_rank, i);
    upload(a, h, count * 4);
    for (int op = 1; op <= 3; op++) {
        if (op < 3)
            CK(ncclAllReduce((void *)a, (void *)b, count, ncclInt32, ncclSum, e.comm, e.s));
        else
            CK(ncclAllGather((void *)a, (void *)b, count, ncclInt32, e.comm, e.s));
        size_t m = op < 3 ? count : count * (size_t)g_n;
        download(out, b, m * 4, e.s);
        int wrong = 0;
        for (size_t i = 0; i < m; i++) {
            int32_t want = op < 3 ? (int32_t)sum_at(i) : value((int)(i / count), i % count);
            wrong += out[i] != want;
            if (i == 0 && out[i] != want)
                EXPECT(out[0] == ~want, "the first element is %d, not the flipped %d", out[0], ~want);
        }
        printf("rank %d op %d wrong %d\n", g_rank, op, wrong);
    }
    CK(ncclCommDestroy(e.comm));
    return 0;
}

/* COMMBENCH_STANDIN_NCCL_FAIL=rank=1,op=2: rank 1's second operation never
 * completes; ncclCommAbort on each rank lets its stream drain. */
static int rank_fail(ncclUniqueId id)
{
    rankenv e;
    CK(join(&e, id));
    CUdeviceptr a = dalloc(4096), b = dalloc(4096);
    CK(ncclAllReduce((void *)a, (void *)b, 1024, ncclInt32, ncclSum, e.comm, e.s));
    CK(cuStreamSynchronize(e.s));
    CK(ncclAllReduce((void *)a, (void *)b, 1024, ncclInt32, ncclSum, e.comm, e.s));
    ncclResult_t state = -1;
    for (int i = 0; i < 6; i++) { /* polled while it hangs */
        sleep_ms(50);
        CK(ncclCommGetAsyncError(e.comm, &state));
    }
    int busy = cuStreamQuery(e.s);
    const char *last = ncclGetLastError(NULL);
    printf("rank %d busy %d async %d injected %d\n", g_rank, busy, state, strstr(last, "injected") != NULL);
    double t0 = now_s();
    CK(ncclCommAbort(e.comm));
    CK(cuStreamSynchronize(e.s));
    printf("rank %d drained %.3f\n", g_rank, now_s() - t0);
    return 0;
}

static int rank_dup(ncclUniqueId id)
{
    rankenv e;
    ncclResult_t rc = join(&e, id);
    printf("rank %d init %d duplicate %d\n", g_rank, rc, strstr(ncclGetLastError(NULL), "duplicate GPU") != NULL);
    if (rc == 0)
        CK(ncclCommDestroy(e.comm));
    return 0;
}

/* Rank 0 calls an allreduce where rank 1 calls a broadcast; then, on a
 * second communicator, a send of 4096 bytes meets a receive of 2048. */
static int rank_mismatch(ncclUniqueId id)
{
    rankenv e;
    CK(join(&e, id));
    CUdeviceptr a = dalloc(4096), b = dalloc(4096);
    if (g_rank == 0)
        CK(ncclAllReduce((void *)a, (void *)b, 1024, ncclInt32, ncclSum, e.comm, e.s));
    else
        CK(ncclBroadcast((void *)a, (void *)b, 1024, ncclInt32, 0, e.comm, e.s));
    CK(cuStreamSynchronize(e.s));
    ncclResult_t state;
    CK(ncclCommGetAsyncError(e.comm, &state));
    const char *last = ncclGetLastError(NULL);
    int names = strstr(last, "ncclAllReduce") && strstr(last, "ncclBroadcast");
    int next = ncclAllReduce((void *)a, (void *)b, 1024, ncclInt32, ncclSum, e.comm, e.s);
    printf("rank %d collective async %d names %d next %d\n", g_rank, state, names, next);
    CK(ncclCommDestroy(e.comm));
    return 0;
}

static int rank_p2p_mismatch(ncclUniqueId id)
{
    rankenv e;
    CK(join(&e, id));
    CUdeviceptr a = dalloc(4096);
    if (g_rank == 0)
        CK(ncclSend((void *)a, 1024, ncclInt32, 1, e.comm, e.s));
    else
        CK(ncclRecv((void *)a, 512, ncclInt32, 0, e.comm, e.s));
    CK(cuStreamSynchronize(e.s));
    ncclResult_t state;
    CK(ncclCommGetAsyncError(e.comm, &state));
    printf("rank %d p2p async %d sizes %d\n", g_rank, state,
           strstr(ncclGetLastError(NULL), "4096") && strstr(ncclGetLastError(NULL), "2048"));
    CK(ncclCommDestroy(e.comm));
    return 0;
}

/* Call-time checks: buffers that are not device memory of the comm's GPU
 * or too small, bad types, roots and peers. */
static int rank_args(ncclUniqueId id)
{
    rankenv e;
    CK(join(&e, id));
    CUdeviceptr a = dalloc(4096);
    static char host[4096];
    int r[8];
    r[0] = ncclAllReduce((void *)a, (void *)a, 1025, ncclInt32, ncclSum, e.comm, e.s);
    r[1] = ncclAllReduce(host, (void *)a, 16, ncclInt32, ncclSum, e.comm, e.s);
    r[2] = ncclAllReduce((void *)a, (void *)a, 16, 42, ncclSum, e.comm, e.s);
    r[3] = ncclBroadcast((void *)a, (void *)a, 16, ncclInt32, g_n, e.comm, e.s);
    r[4] = ncclSend((void *)a, 16, ncclInt32, -1, e.comm, e.s);
    r[5] = ncclAllGather((void *)a, (void *)a, 4096 / 4 / g_n + 1, ncclInt32, e.comm, e.s);
    r[6] = ncclGroupEnd();
    r[7] = ncclAllReduce((void *)a, (void *)a, 0, ncclInt32, ncclSum, e.comm, e.s); /* empty: nothing to do */
    printf("rank %d args %d %d %d %d %d %d %d %d\n", g_rank, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
    CK(cuStreamSynchronize(e.s));
    CK(ncclCommDestroy(e.comm));
    return 0;
}

/* Large messages: a 1 GiB broadcast through shared memory of a few MiB,
 * then both ranks send 64 MiB to each other first, in one group. Only a
 * few pages around each probed offset are filled (first touch of memory
 * is what costs on this host; the rest reads as zeros): the root's with
 * its pattern, the other rank's with 0xee, which the broadcast must
 * overwrite. */
static int rank_big(ncclUniqueId id)
{
    rankenv e;
    CK(join(&e, id));
    size_t gib = (size_t)1 << 30, half = gib / 2, p2p = (size_t)64 << 20, page = 4096;
    CUdeviceptr a = dalloc(gib), s = dalloc(p2p), r = dalloc(p2p);
    int peer = 1 - g_rank;
    size_t at[5] = {0, 12345678, half - page, half + 999 * page, gib - page};
    unsigned char pattern[5] = {0x10, 0x11, 0x12, 0x30, 0x31};
    for (int i = 0; i < 5; i++)
        CK(cuMemsetD8_v2(a + at[i], g_rank == 0 ? pattern[i] : 0xee, page));
    CK(cuMemsetD8_v2(s, (unsigned char)(0x50 + g_rank), p2p));
    CK(cuCtxSynchronize());
    CK(ncclBroadcast((void *)a, (void *)a, gib, ncclInt8, 0, e.comm, e.s));
    CK(ncclGroupStart());
    CK(ncclSend((void *)s, p2p, ncclInt8, peer, e.comm, e.s));
    CK(ncclRecv((void *)r, p2p, ncclInt8, peer, e.comm, e.s));
    CK(ncclGroupEnd());
    CK(cuStreamSynchronize(e.s));
    unsigned char probe[2];
    for (int i = 0; i < 5; i++) {
        CK(cuMemcpyDtoH_v2(&probe[0], a + at[i], 1));
        CK(cuMemcpyDtoH_v2(&probe[1], a + at[i] + page - 1, 1));
        EXPECT(probe[0] == pattern[i] && probe[1] == pattern[i], "broadcast bytes at %zu are %#x %#x, not %#x", at[i],
               probe[0], probe[1], pattern[i]);
    }
    CK(cuMemcpyDtoH_v2(&probe[0], a + half + 3 * page, 1));
    EXPECT(probe[0] == 0, "an unfilled byte is %#x", probe[0]);
    size_t rat[3] = {0, p2p / 2 + 12345, p2p - 1};
    for (int i = 0; i < 3; i++) {
        CK(cuMemcpyDtoH_v2(&probe[0], r + rat[i], 1));
        EXPECT(probe[0] == 0x50 + peer, "received byte %zu is %#x", rat[i], probe[0]);
    }
    printf("rank %d big ok\n", g_rank);
    CK(ncclCommDestroy(e.comm));
    return 0;
}

/* Stream capture (nccl-tests' -G): K in-place float sums captured on the
 * rank's stream run only when the graph is launched, and L launches make
 * L*K sums. From rank r's r + 1, in-place sums of n ranks give
 * n(n + 1)/2 * n^(L*K - 1): integers, exact in float. */
static int rank_graph(ncclUniqueId id)
{
    rankenv e;
    CK(join(&e, id));
    const size_t count = 4096;
    const int K = 3, L = 2;
    float *h = malloc(count * sizeof *h), *out = malloc(count * sizeof *out);
    EXPECT(h && out, "malloc");
    CUdeviceptr a = dalloc(count * sizeof *h);
    for (size_t i = 0; i < count; i++)
        h[i] = (float)(g_rank + 1);
    upload(a, h, count * sizeof *h);
    CUgraph g = NULL;
    CUgraphExec x;
    CK(cuStreamBeginCapture_v2(e.s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    for (int k = 0; k < K; k++)
        CK(ncclAllReduce((void *)a, (void *)a, count, ncclFloat32, ncclSum, e.comm, e.s));
    CK(cuStreamEndCapture(e.s, &g));
    download(out, a, count * sizeof *out, e.s);
    EXPECT(out[0] == (float)(g_rank + 1) && out[count - 1] == (float)(g_rank + 1),
           "the captured allreduces ran before the launch: %g", out[0]);
    CK(cuGraphInstantiateWithFlags(&x, g, 0));
    for (int l = 0; l < L; l++)
        CK(cuGraphLaunch(x, e.s));
    download(out, a, count * sizeof *out, e.s);
    double want = g_n * (g_n + 1) / 2.0 * pow(g_n, L * K - 1);
    for (size_t i = 0; i < count; i++)
        EXPECT(out[i] == want, "element %zu is %g after %d launches, expected %g", i, out[i], L, want);
    printf("rank %d graph %g\n", g_rank, out[0]);
    CK(cuGraphExecDestroy(x));
    CK(cuGraphDestroy(g));
    CK(cuMemFree_v2(a));
    CK(ncclCommDestroy(e.comm));
    free(h);
    free(out);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3)
        FAIL("usage: nccl_check values|busbw|corrupt|fail|dup|mismatch|p2p-mismatch|args|big|graph NRANKS");
    const char *cmd = argv[1];
    g_n = atoi(argv[2]);
    int (*body)(ncclUniqueId) = NULL;
    if (!strcmp(cmd, "values"))
        body = rank_values;
    else if (!strcmp(cmd, "busbw"))
        body = rank_busbw;
    else if (!strcmp(cmd, "corrupt"))
        body = rank_corrupt;
    else if (!strcmp(cmd, "fail"))
        body = rank_fail;
    else if (!strcmp(cmd, "dup"))
        body = rank_dup;
    else if (!strcmp(cmd, "mismatch"))
        body = rank_mismatch;
    else if (!strcmp(cmd, "p2p-mismatch"))
        body = rank_p2p_mismatch;
    else if (!strcmp(cmd, "args"))
        body = rank_args;
    else if (!strcmp(cmd, "big"))
        body = rank_big;
    else if (!strcmp(cmd, "graph"))
        body = rank_graph;
    else
        FAIL("unknown subcommand %s", cmd);
    int v;
    CK(ncclGetVersion(&v));
    ncclUniqueId id;
    CK(ncclGetUniqueId(&id));
    pid_t pids[64];
    for (int r = 0; r < g_n; r++) {
        pids[r] = fork();
        if (pids[r] < 0)
            FAIL("fork");
        if (pids[r] == 0) {
            g_rank = r;
            const char *vis = getenv("STANDIN_VISIBLE_PER_RANK"); /* each rank sees only GPU r */
            if (vis && *vis) {
                char one[16];
                snprintf(one, sizeof one, "%d", r);
                setenv("CUDA_VISIBLE_DEVICES", one, 1);
                setenv("STANDIN_GPU_MAP", "0,0,0,0,0,0,0,0", 1);
            }
            exit(body(id));
        }
    }
    /* A rank that fails leaves its peers waiting for it, as NCCL would:
     * the first failure ends the others. */
    int ok = 1;
    for (int left = g_n; left > 0; left--) {
        int st;
        pid_t pid = wait(&st);
        if (pid < 0)
            break;
        int r = 0;
        while (r < g_n && pids[r] != pid)
            r++;
        pids[r] = 0;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "FAIL: rank %d ended with status %#x\n", r, st);
            if (ok)
                for (int k = 0; k < g_n; k++)
                    if (pids[k] > 0)
                        kill(pids[k], SIGKILL);
            ok = 0;
        }
    }
    printf("version %d ranks %d %s\n", v, g_n, ok ? "ok" : "failed");
    return ok ? 0 : 1;
}
