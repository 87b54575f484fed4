/*
 * Checks of the CUDA driver stand-in, one scenario per subcommand, run by
 * tests/it/gpu_standin.rs with COMMBENCH_STANDIN_MACHINE set. Each prints
 * what the Rust side compares (lines of `key value ...`) and exits 0, or
 * prints `FAIL: ...` on stderr and exits 1.
 */
#define _GNU_SOURCE
#include "api.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        fprintf(stderr, "FAIL: ");                                                                                     \
        fprintf(stderr, __VA_ARGS__);                                                                                  \
        fputc('\n', stderr);                                                                                           \
        exit(1);                                                                                                       \
    } while (0)
#define CK(x)                                                                                                          \
    do {                                                                                                               \
        int rc_ = (x);                                                                                                 \
        if (rc_)                                                                                                       \
            FAIL("line %d: %s returned %d", __LINE__, #x, rc_);                                                        \
    } while (0)
#define EXPECT_RC(want, x)                                                                                             \
    do {                                                                                                               \
        int rc_ = (x);                                                                                                 \
        if (rc_ != (want))                                                                                             \
            FAIL("line %d: %s returned %d, expected %d", __LINE__, #x, rc_, (want));                                   \
    } while (0)
#define EXPECT(c, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(c))                                                                                                      \
            FAIL(__VA_ARGS__);                                                                                         \
    } while (0)

#define MiB ((size_t)1 << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static CUcontext ctx_of[64];

static CUcontext open_gpu(int ordinal)
{
    CUdevice d;
    CK(cuDeviceGet(&d, ordinal));
    if (!ctx_of[ordinal])
        CK(cuDevicePrimaryCtxRetain(&ctx_of[ordinal], d));
    CK(cuCtxSetCurrent(ctx_of[ordinal]));
    return ctx_of[ordinal];
}

static double scale(void)
{
    const char *s = getenv("COMMBENCH_STANDIN_TIME_SCALE");
    return s && *s ? atof(s) : 1.0;
}

/* ------------------------------------------------------------------ info */

static int cmd_init(void)
{
    int rc = cuInit(0);
    int n = -1;
    if (rc == 0)
        CK(cuDeviceGetCount(&n));
    const char *name = NULL;
    cuGetErrorName(rc, &name);
    printf("init %d %s count %d\n", rc, name ? name : "?", n);
    if (rc != 0)
        EXPECT_RC(3, cuDeviceGetCount(&n)); /* not initialised */
    return 0;
}

static int cmd_info(void)
{
    CK(cuInit(0));
    int n, v;
    CK(cuDeviceGetCount(&n));
    CK(cuDriverGetVersion(&v));
    printf("count %d\ndriver %d\n", n, v);
    for (int i = 0; i < n; i++) {
        CUdevice d;
        char name[256], bus[64];
        size_t mem;
        int major, minor, numa, pci_bus;
        CK(cuDeviceGet(&d, i));
        CK(cuDeviceGetName(name, sizeof name, d));
        CK(cuDeviceGetPCIBusId(bus, sizeof bus, d));
        CK(cuDeviceTotalMem_v2(&mem, d));
        CK(cuDeviceGetAttribute(&major, 75, d));
        CK(cuDeviceGetAttribute(&minor, 76, d));
        CK(cuDeviceGetAttribute(&numa, 134, d));
        CK(cuDeviceGetAttribute(&pci_bus, 33, d));
        printf("gpu %d bus=%s mem=%zu cc=%d.%d numa=%d pcibus=%d name=%s\n", i, bus, mem, major, minor, numa, pci_bus,
               name);
    }
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (a == b) {
                int can, x;
                CK(cuDeviceCanAccessPeer(&can, a, b));
                EXPECT(can == 0, "a GPU cannot access itself as a peer");
                EXPECT_RC(101, cuDeviceGetP2PAttribute(&x, 1, a, b));
                continue;
            }
            int can, rank, access, atomics, array;
            CK(cuDeviceCanAccessPeer(&can, a, b));
            CK(cuDeviceGetP2PAttribute(&rank, 1, a, b));
            CK(cuDeviceGetP2PAttribute(&access, 2, a, b));
            CK(cuDeviceGetP2PAttribute(&atomics, 3, a, b));
            CK(cuDeviceGetP2PAttribute(&array, 4, a, b));
            printf("peer %d %d can=%d access=%d atomics=%d array=%d rank=%d\n", a, b, can, access, atomics, array,
                   rank);
        }
    EXPECT_RC(101, cuDeviceGet(&v, n));
    return 0;
}

/* ---------------------------------------------------------------- memory */

static int cmd_deref(void)
{
    CK(cuInit(0));
    open_gpu(0);
    CUdeviceptr managed, dev;
    void *pinned;
    CK(cuMemAllocManaged(&managed, 4096, 1));
    CK(cuMemHostAlloc(&pinned, 4096, 0));
    ((volatile char *)(uintptr_t)managed)[10] = 3;
    ((volatile char *)pinned)[10] = 4;
    EXPECT(((volatile char *)(uintptr_t)managed)[10] == 3 && ((volatile char *)pinned)[10] == 4,
           "managed and pinned memory are host memory");
    CK(cuMemAlloc_v2(&dev, 4096));
    printf("device pointer %#llx\n", dev);
    fflush(stdout);
    volatile char *p = (volatile char *)(uintptr_t)dev;
    char c = p[0]; /* faults, as a host read of GPU memory does */
    printf("read %d: the host read device memory\n", c);
    return 0;
}

static int cmd_bounds(void)
{
    CK(cuInit(0));
    open_gpu(0);
    CUdeviceptr a, b;
    CK(cuMemAlloc_v2(&a, 1000));
    CK(cuMemAlloc_v2(&b, 1000));
    char host[4096] = {0};
    CK(cuMemcpyHtoD_v2(a, host, 1000));
    EXPECT_RC(1, cuMemcpyHtoD_v2(a, host, 1001));
    EXPECT_RC(1, cuMemcpyHtoD_v2(a + 1, host, 1000));
    EXPECT_RC(1, cuMemcpyDtoH_v2(host, a + 500, 501));
    EXPECT_RC(1, cuMemcpyDtoD_v2(b, a, 1001));
    EXPECT_RC(1, cuMemsetD8_v2(a + 999, 0, 2));
    EXPECT_RC(1, cuMemcpyHtoD_v2(a + 4096, host, 1)); /* in the gap after it */
    EXPECT_RC(1, cuMemcpyHtoD_v2(0x4000000000000000ULL + (7ULL << 40), host, 1)); /* never allocated */
    EXPECT_RC(1, cuMemcpyDtoH_v2(host, (CUdeviceptr)(uintptr_t)host, 16)); /* a host pointer as device memory */
    EXPECT_RC(1, cuMemcpyHtoD_v2(a, (void *)(uintptr_t)b, 16));              /* device memory as host memory */
    EXPECT_RC(1, cuMemFree_v2(a + 8));                                      /* not an allocation's start */
    void *pinned;
    CK(cuMemHostAlloc(&pinned, 100, 0));
    EXPECT_RC(1, cuMemcpyHtoD_v2(a, pinned, 101)); /* leaves its pinned allocation */
    CK(cuMemFreeHost(pinned));
    CK(cuMemFree_v2(a));
    EXPECT_RC(1, cuMemcpyHtoD_v2(a, host, 1)); /* freed */
    EXPECT_RC(1, cuMemFree_v2(a));
    CK(cuMemFree_v2(b));
    EXPECT_RC(1, cuMemAlloc_v2(&a, 0));
    CK(cuCtxSetCurrent(NULL));
    EXPECT_RC(201, cuMemAlloc_v2(&a, 16)); /* no current context */
    printf("bounds ok\n");
    return 0;
}

static int cmd_oom(void)
{
    CK(cuInit(0));
    open_gpu(0);
    size_t total, free_bytes;
    CK(cuDeviceTotalMem_v2(&total, 0));
    CUdeviceptr a, b, c;
    CK(cuMemAlloc_v2(&a, total / 4 * 3));
    EXPECT_RC(2, cuMemAlloc_v2(&b, total / 2));
    CK(cuMemAlloc_v2(&c, total / 4));
    CK(cuMemGetInfo_v2(&free_bytes, &total));
    EXPECT(free_bytes == total - total / 4 * 3 - total / 4, "cuMemGetInfo: %zu free of %zu", free_bytes, total);
    EXPECT_RC(2, cuMemAlloc_v2(&b, total - total / 4 * 3 - total / 4 + 1));
    CK(cuMemFree_v2(a));
    CK(cuMemAlloc_v2(&b, total / 2));
    /* Memory of another GPU is its own. */
    open_gpu(1);
    CK(cuMemAlloc_v2(&a, total / 4 * 3));
    printf("oom total %zu\n", total);
    return 0;
}

/* ------------------------------------------------------------ ordering */

static void sleepy(void *arg)
{
    struct timespec ts = {0, (long)(intptr_t)arg};
    nanosleep(&ts, NULL);
}

static int cmd_order(void)
{
    CK(cuInit(0));
    open_gpu(0);
    /* Run with COMMBENCH_STANDIN_TIME_SCALE=1000, so that a writer's
     * modelled time dwarfs the host's own copying and the outcome of each
     * race is fixed: a 256 KiB pageable copy lands after about 41 ms, a
     * 4 MiB memset after 15 ms, a 4 KiB read after 4 ms. */
    const size_t n = 256 << 10, big = 4 * MiB;
    CUdeviceptr d, e;
    CUstream nb, blocking;
    CK(cuMemAlloc_v2(&d, big));
    CK(cuMemAlloc_v2(&e, n));
    CK(cuStreamCreate(&nb, 1));
    CK(cuStreamCreate(&blocking, 0));
    unsigned char *h = malloc(n), *out = malloc(n);
    EXPECT(h && out, "malloc");
    int stale;

    /* Pageable cuMemcpyHtoD returns once the source is staged; a copy on a
     * non-blocking stream right after reads what was there before. */
    stale = 0;
    for (int t = 1; t <= 3; t++) {
        CK(cuMemsetD8_v2(d, 0, n));
        CK(cuCtxSynchronize());
        memset(h, t, n);
        CK(cuMemcpyHtoD_v2(d, h, n));
        CK(cuMemcpyDtoDAsync_v2(e, d, 4096, nb));
        CK(cuStreamSynchronize(nb));
        CK(cuMemcpyDtoH_v2(out, e, 4096));
        stale += out[0] != t;
        CK(cuCtxSynchronize());
    }
    printf("stale htod-pageable then non-blocking %d of 3\n", stale);

    /* The same with cuCtxSynchronize in between: always the new data. */
    stale = 0;
    for (int t = 1; t <= 3; t++) {
        memset(h, 10 + t, n);
        CK(cuMemcpyHtoD_v2(d, h, n));
        CK(cuCtxSynchronize());
        CK(cuMemcpyDtoDAsync_v2(e, d, 4096, nb));
        CK(cuStreamSynchronize(nb));
        CK(cuMemcpyDtoH_v2(out, e, 4096));
        stale += out[0] != 10 + t;
    }
    printf("stale htod-pageable synchronised %d of 3\n", stale);

    /* A synchronous memset of device memory returns at once: it has not
     * landed when a non-blocking stream reads. */
    stale = 0;
    for (int t = 1; t <= 3; t++) {
        CK(cuMemsetD8_v2(d, (unsigned char)(20 + t), big));
        CK(cuMemcpyDtoDAsync_v2(e, d, 4096, nb));
        CK(cuStreamSynchronize(nb));
        CK(cuMemcpyDtoH_v2(out, e, 4096));
        stale += out[0] != 20 + t;
        CK(cuCtxSynchronize());
    }
    printf("stale memset then non-blocking %d of 3\n", stale);

    /* The legacy stream and a blocking stream wait for each other. */
    stale = 0;
    for (int t = 1; t <= 3; t++) {
        CK(cuMemsetD8_v2(d, (unsigned char)(30 + t), big));
        CK(cuMemcpyDtoDAsync_v2(e, d, 4096, blocking));
        CK(cuStreamSynchronize(blocking));
        CK(cuMemcpyDtoH_v2(out, e, 4096));
        stale += out[0] != 30 + t;
    }
    printf("stale memset then blocking %d of 3\n", stale);
    stale = 0;
    for (int t = 1; t <= 3; t++) {
        CK(cuMemsetD8Async(d, (unsigned char)(40 + t), big, blocking));
        CK(cuMemcpyDtoH_v2(out, d, 4096)); /* legacy: after the blocking stream's memset */
        stale += out[0] != 40 + t;
    }
    printf("stale blocking then legacy %d of 3\n", stale);
    stale = 0;
    for (int t = 1; t <= 3; t++) {
        CK(cuMemsetD8Async(d, (unsigned char)(50 + t), big, nb));
        CK(cuMemcpyDtoH_v2(out, d, 4096)); /* legacy: does not wait for a non-blocking stream */
        stale += out[0] != 50 + t;
        CK(cuStreamSynchronize(nb));
    }
    printf("stale non-blocking then legacy %d of 3\n", stale);

    /* An event orders two non-blocking streams. */
    CUstream nb2;
    CUevent ev;
    CK(cuStreamCreate(&nb2, 1));
    CK(cuEventCreate(&ev, 2));
    stale = 0;
    for (int t = 1; t <= 3; t++) {
        CK(cuMemsetD8Async(d, (unsigned char)(60 + t), big, nb));
        CK(cuEventRecord(ev, nb));
        CK(cuStreamWaitEvent(nb2, ev, 0));
        CK(cuMemcpyDtoDAsync_v2(e, d, 4096, nb2));
        CK(cuStreamSynchronize(nb2));
        CK(cuMemcpyDtoH_v2(out, e, 4096));
        stale += out[0] != 60 + t;
    }
    printf("stale across an event %d of 3\n", stale);

    /* cuStreamQuery and cuEventQuery say not ready while work is queued. */
    CK(cuLaunchHostFunc(nb, sleepy, (void *)(intptr_t)50000000));
    CK(cuEventRecord(ev, nb));
    int q1 = cuStreamQuery(nb), q2 = cuEventQuery(ev);
    CK(cuEventSynchronize(ev));
    int q3 = cuStreamQuery(nb), q4 = cuEventQuery(ev);
    printf("query busy %d %d idle %d %d\n", q1, q2, q3, q4);

    /* Handles once destroyed are refused. */
    CK(cuStreamDestroy_v2(nb2));
    EXPECT_RC(400, cuStreamQuery(nb2));
    CK(cuEventDestroy_v2(ev));
    EXPECT_RC(400, cuEventQuery(ev));
    return 0;
}

/* ---------------------------------------------------------------- timing */

/* A gate: a host function that holds its stream until the host has
 * queued everything behind it, so that event timings measure the copies
 * and not the host queueing them (host scheduling noise on a busy
 * machine would otherwise count). */
static volatile int g_gate_open;

static void gate(void *arg)
{
    (void)arg;
    while (!g_gate_open) {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

static void close_gate(CUstream s)
{
    g_gate_open = 0;
    CK(cuLaunchHostFunc(s, gate, NULL));
}

/* GB/s of `reps` copies of `bytes` between events a and b, once the gate
 * opens. */
static double gated_gbs(CUevent a, CUevent b, size_t bytes, int reps)
{
    float ms;
    g_gate_open = 1;
    CK(cuEventSynchronize(b));
    CK(cuEventElapsedTime(&ms, a, b));
    return (double)bytes * reps / ((double)ms * 1e-3) / 1e9;
}

static int cmd_timing(void)
{
    CK(cuInit(0));
    CUcontext c0 = open_gpu(0);
    const size_t n = 32 * MiB;
    CUdeviceptr d, d2;
    void *pinned;
    CUstream s;
    CUevent a, b;
    CK(cuMemAlloc_v2(&d, n));
    CK(cuMemAlloc_v2(&d2, n));
    CK(cuMemHostAlloc(&pinned, n, 1));
    memset(pinned, 1, n);
    CK(cuStreamCreate(&s, 1));
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));

    close_gate(s);
    CK(cuEventRecord(a, s));
    CK(cuMemcpyHtoDAsync_v2(d, pinned, n, s));
    CK(cuEventRecord(b, s));
    printf("h2d_pinned_gbs %.6f\n", gated_gbs(a, b, n, 1));

    close_gate(s);
    CK(cuEventRecord(a, s));
    CK(cuMemcpyDtoHAsync_v2(pinned, d, n, s));
    CK(cuEventRecord(b, s));
    printf("d2h_pinned_gbs %.6f\n", gated_gbs(a, b, n, 1));

    close_gate(s);
    CK(cuEventRecord(a, s));
    for (int i = 0; i < 4; i++)
        CK(cuMemcpyDtoDAsync_v2(d2, d, n, s));
    CK(cuEventRecord(b, s));
    printf("d2d_gbs %.6f\n", gated_gbs(a, b, n, 4));

    /* Host-timed synchronous copies take at least the modelled time. */
    double t = now_s();
    CK(cuMemcpyHtoD_v2(d, pinned, n));
    printf("host_h2d_pinned_s %.6f\n", now_s() - t);
    unsigned char *pageable = malloc(n);
    EXPECT(pageable, "malloc");
    memset(pageable, 2, n);
    t = now_s();
    CK(cuMemcpyHtoD_v2(d, pageable, n));
    CK(cuCtxSynchronize());
    printf("host_h2d_pageable_s %.6f\n", now_s() - t);
    t = now_s();
    CK(cuMemcpyDtoH_v2(pageable, d, n));
    printf("host_d2h_pageable_s %.6f\n", now_s() - t);
    EXPECT(pageable[0] == 2 && pageable[n - 1] == 2, "the pageable round trip kept the data");

    /* Between GPUs: staged through the host without peer access, the
     * link's rate with it; no access across the sockets. */
    CUcontext c3 = open_gpu(3);
    CUdeviceptr p3;
    CK(cuMemAlloc_v2(&p3, n));
    CK(cuCtxSetCurrent(c0));
    close_gate(s);
    CK(cuEventRecord(a, s));
    CK(cuMemcpyPeerAsync(p3, c3, d, c0, n, s));
    CK(cuEventRecord(b, s));
    printf("peer_0_3_off_gbs %.6f\n", gated_gbs(a, b, n, 1));
    CK(cuCtxEnablePeerAccess(c3, 0));
    EXPECT_RC(704, cuCtxEnablePeerAccess(c3, 0));
    close_gate(s);
    CK(cuEventRecord(a, s));
    CK(cuMemcpyPeerAsync(p3, c3, d, c0, n, s));
    CK(cuEventRecord(b, s));
    printf("peer_0_3_on_gbs %.6f\n", gated_gbs(a, b, n, 1));
    CK(cuCtxDisablePeerAccess(c3));
    EXPECT_RC(705, cuCtxDisablePeerAccess(c3));
    CUcontext c5 = open_gpu(5);
    CK(cuCtxSetCurrent(c0));
    printf("peer_0_5_enable %d\n", cuCtxEnablePeerAccess(c5, 0));
    EXPECT_RC(201, cuCtxEnablePeerAccess(c0, 0));

    /* A stream of another context is refused for copies. */
    CK(cuCtxSetCurrent(c3));
    EXPECT_RC(201, cuMemcpyDtoDAsync_v2(d2, d, 16, s));
    CK(cuCtxSetCurrent(c0));

    /* Events: not ready before they happen, refused without timing. */
    CUevent untimed, fresh;
    CK(cuEventCreate(&untimed, 2));
    CK(cuEventCreate(&fresh, 0));
    float ms;
    EXPECT_RC(400, cuEventElapsedTime(&ms, a, fresh)); /* never recorded */
    CK(cuEventRecord(untimed, s));
    CK(cuEventSynchronize(untimed));
    EXPECT_RC(400, cuEventElapsedTime(&ms, a, untimed));
    CK(cuLaunchHostFunc(s, sleepy, (void *)(intptr_t)30000000));
    CK(cuEventRecord(b, s));
    EXPECT_RC(600, cuEventElapsedTime(&ms, a, b));
    CK(cuStreamSynchronize(s));
    CK(cuEventElapsedTime(&ms, a, b));
    printf("scale %.3f\n", scale());
    return 0;
}

/* The event clock across streams: work that waits for other work starts
 * on the event clock where that work ended, whether it was still running
 * or already done when the wait was queued. A loaded host queues late, and
 * how late must not move device time. Prints, per case, the event-clock
 * time from the awaited event to an event recorded right after the wait
 * on a stream whose own clock is behind (0.000 when the clock carries). */
static void print_gap(const char *what, CUevent awaited, CUevent after)
{
    float ms;
    CK(cuEventSynchronize(after));
    CK(cuEventElapsedTime(&ms, awaited, after));
    printf("%s %.3f\n", what, ms);
}

static int cmd_clock(void)
{
    CK(cuInit(0));
    open_gpu(0);
    const size_t n = 32 * MiB;
    CUdeviceptr d, d2;
    CUstream s1, s2, s3, blocking;
    CUevent e, b, f, g, l, m;
    CK(cuMemAlloc_v2(&d, n));
    CK(cuMemAlloc_v2(&d2, n));
    CK(cuStreamCreate(&s1, 1));
    CK(cuStreamCreate(&s2, 1));
    CK(cuStreamCreate(&s3, 1));
    CUevent *evs[] = {&e, &b, &f, &g, &l, &m};
    for (size_t i = 0; i < sizeof evs / sizeof *evs; i++)
        CK(cuEventCreate(evs[i], 0));

    /* Done before the wait is queued. */
    CK(cuMemcpyDtoDAsync_v2(d2, d, n, s1));
    CK(cuEventRecord(e, s1));
    CK(cuEventSynchronize(e));
    CK(cuStreamWaitEvent(s2, e, 0));
    CK(cuEventRecord(b, s2));
    print_gap("wait-done", e, b);

    /* Still held (behind a gate) when the wait is queued. */
    close_gate(s1);
    CK(cuMemcpyDtoDAsync_v2(d2, d, n, s1));
    CK(cuEventRecord(f, s1));
    CK(cuStreamWaitEvent(s3, f, 0));
    CK(cuEventRecord(g, s3));
    g_gate_open = 1;
    print_gap("wait-pending", f, g);

    /* A blocking stream after the legacy stream's finished work. */
    CK(cuMemcpyDtoDAsync_v2(d2, d, n, 0));
    CK(cuEventRecord(l, 0));
    CK(cuEventSynchronize(l));
    CK(cuStreamCreate(&blocking, 0));
    CK(cuEventRecord(m, blocking));
    print_gap("legacy-done", l, m);
    return 0;
}

/* ----------------------------------------------------------------- faults */

static int cmd_sticky(void)
{
    CK(cuInit(0));
    open_gpu(0);
    CUdeviceptr d;
    CUstream s;
    char host[64] = {0};
    CK(cuMemAlloc_v2(&d, 64));
    CK(cuStreamCreate(&s, 1));
    /* COMMBENCH_STANDIN_CUDA_FAIL=after=3: three stream operations work. */
    CK(cuMemcpyHtoD_v2(d, host, 64));
    CK(cuMemsetD8Async(d, 1, 64, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(host, d, 64));
    int r4 = cuMemcpyHtoDAsync_v2(d, host, 64, s);
    int q = cuStreamQuery(s), y = cuStreamSynchronize(s), c = cuCtxSynchronize();
    CUdeviceptr e;
    int m = cuMemAlloc_v2(&e, 64);
    const char *name = NULL;
    cuGetErrorName(r4, &name);
    printf("sticky %d %s query %d sync %d ctx %d alloc %d\n", r4, name ? name : "?", q, y, c, m);
    return 0;
}

/* -------------------------------------------------------------- kernels */

/* A module defines what its image defines and the stand-in knows; a
 * launch's bad pointer faults the context at the next synchronisation,
 * as a real kernel's does; a block over 1024 threads is refused. */
static int cmd_kernels(void)
{
    CK(cuInit(0));
    open_gpu(0);
    static const char ptx[] = ".version 8.0\n.target sm_70\n.address_size 64\n"
                              ".visible .entry commbench_copy_simple(\n.param .u64 a\n)\n{\nret;\n}\n"
                              ".visible .entry not_a_commbench_kernel()\n{\nret;\n}\n";
    CUmodule m;
    CUfunction f, g;
    EXPECT_RC(200, cuModuleLoadData(&m, "not an image"));
    CK(cuModuleLoadData(&m, ptx));
    printf("unknown %d\n", cuModuleGetFunction(&g, m, "not_a_commbench_kernel"));
    printf("undefined %d\n", cuModuleGetFunction(&g, m, "commbench_fill_pattern"));
    CK(cuModuleGetFunction(&f, m, "commbench_copy_simple"));
    CUdeviceptr a, b;
    CUstream s;
    CK(cuMemAlloc_v2(&a, 4096));
    CK(cuMemAlloc_v2(&b, 4096));
    CK(cuStreamCreate(&s, 1));
    unsigned long long loops = 1;
    void *params[] = {&loops, &a, &b};
    printf("block 1025 %d\n", cuLaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, s, params, NULL));
    /* 4096 bytes are 256 elements: one block of 256 fits, of 257 not. */
    CK(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, s, params, NULL));
    CK(cuStreamSynchronize(s));
    int launch = cuLaunchKernel(f, 1, 1, 1, 257, 1, 1, 0, s, params, NULL);
    int sync = cuStreamSynchronize(s);
    printf("overrun launch %d sync %d after %d\n", launch, sync, cuMemsetD8Async(a, 0, 16, s));
    return 0;
}

/* Dynamic shared memory of 64 bytes per thread. */
static size_t smem_per_thread(int block)
{
    return (size_t)block * 64;
}

/* The occupancy calculator's launch for a kernel on GPU 0 (a V100: 80 SMs
 * of 2048 threads and 96 KiB of shared memory): plain, with a block
 * limit, with dynamic shared memory fixed or per block size, with too much
 * of it, and for a handle that is no function. */
static int cmd_occupancy(void)
{
    CK(cuInit(0));
    open_gpu(0);
    static const char ptx[] = ".version 8.0\n.target sm_70\n.address_size 64\n"
                              ".visible .entry commbench_copy_grid_stride(\n.param .u64 a\n)\n{\nret;\n}\n";
    CUmodule m;
    CUfunction f;
    CK(cuModuleLoadData(&m, ptx));
    CK(cuModuleGetFunction(&f, m, "commbench_copy_grid_stride"));
    int grid = -1, block = -1;
    CK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 0));
    printf("plain %d %d\n", grid, block);
    CK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 100));
    printf("limit 100 %d %d\n", grid, block);
    CK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 40000, 0));
    printf("smem 40000 %d %d\n", grid, block);
    CK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, smem_per_thread, 0, 0));
    printf("smem per thread %d %d\n", grid, block);
    CK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 60000, 0));
    printf("smem 60000 %d %d\n", grid, block);
    printf("bad handle %d null %d\n", cuOccupancyMaxPotentialBlockSize(&grid, &block, &grid, NULL, 0, 0),
           cuOccupancyMaxPotentialBlockSize(NULL, &block, f, NULL, 0, 0));
    return 0;
}

/* -------------------------------------------------------------- capture */

static volatile int g_hostfn_runs;

static void count_run(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&g_hostfn_runs, 1, __ATOMIC_SEQ_CST);
}

/* What a helper thread got, and its argument. */
static CUresult g_thread_rc;

static void *end_elsewhere(void *arg)
{
    CUgraph g = NULL;
    g_thread_rc = cuStreamEndCapture((CUstream)arg, &g);
    if (g_thread_rc == 0)
        CK(cuGraphDestroy(g));
    return NULL;
}

static void *alloc_elsewhere(void *arg)
{
    CK(cuCtxSetCurrent((CUcontext)arg));
    CUdeviceptr p;
    g_thread_rc = cuMemAlloc_v2(&p, 4096);
    if (g_thread_rc == 0)
        CK(cuMemFree_v2(p));
    return NULL;
}

static void in_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, fn, arg) == 0, "pthread_create");
    pthread_join(t, NULL);
}

/* The first and last byte of device memory. */
static void ends(CUdeviceptr d, size_t n, unsigned char out[2])
{
    CK(cuMemcpyDtoH_v2(&out[0], d, 1));
    CK(cuMemcpyDtoH_v2(&out[1], d + n - 1, 1));
}

/* Ends a capture that must have worked and drops its graph. */
static int end_and_drop(CUstream s)
{
    CUgraph g = NULL;
    int rc = cuStreamEndCapture(s, &g);
    if (rc == 0)
        CK(cuGraphDestroy(g));
    else
        EXPECT(g == NULL, "a failed cuStreamEndCapture gave a graph");
    return rc;
}

/* Stream capture and graph replay: a memset and a device-to-device copy
 * captured on a non-blocking stream run only when launched, as often as
 * launched, each launch taking the model's time; then what CUDA refuses
 * during a capture and what the stand-in does not model. */
static int cmd_capture(void)
{
    CK(cuInit(0));
    CUcontext c0 = open_gpu(0);
    const size_t n = 32 * MiB;
    CUdeviceptr d, e;
    CUstream s, blocking;
    CUevent a, b;
    unsigned char pd[2], pe[2];
    CK(cuMemAlloc_v2(&d, n));
    CK(cuMemAlloc_v2(&e, n));
    CK(cuStreamCreate(&s, 1));
    CK(cuStreamCreate(&blocking, 0));
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    CK(cuMemsetD8_v2(d, 1, n));
    CK(cuMemsetD8_v2(e, 2, n));
    CK(cuCtxSynchronize());
    CK(cuEventRecord(a, s));

    CUgraph g = NULL;
    CUgraphExec x;
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(cuMemsetD8Async(d, 7, n, s));
    CK(cuMemcpyDtoDAsync_v2(e, d, n, s));
    CK(cuStreamEndCapture(s, &g));
    EXPECT(g != NULL, "no graph");
    CK(cuStreamSynchronize(s));
    CK(cuCtxSynchronize());
    ends(d, n, pd);
    ends(e, n, pe);
    printf("before %d %d %d %d\n", pd[0], pd[1], pe[0], pe[1]);
    CK(cuGraphInstantiateWithFlags(&x, g, 0));
    CK(cuGraphDestroy(g)); /* the executable graph does without it */
    CK(cuGraphLaunch(x, s));
    CK(cuStreamSynchronize(s));
    ends(e, n, pe);
    printf("first %d %d\n", pe[0], pe[1]);
    CK(cuMemsetD8_v2(d, 1, n));
    CK(cuMemsetD8_v2(e, 2, n));
    CK(cuCtxSynchronize());
    CK(cuGraphLaunch(x, s));
    CK(cuEventRecord(b, s));
    CK(cuEventSynchronize(b));
    ends(d, n, pd);
    ends(e, n, pe);
    printf("second %d %d %d %d\n", pd[0], pd[1], pe[0], pe[1]);
    float ms;
    CK(cuEventElapsedTime(&ms, a, b));
    printf("graph_ms %.6f\n", ms);

    /* A host function, launched three times on the legacy stream. */
    CUgraphExec hx;
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuLaunchHostFunc(s, count_run, NULL));
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphInstantiateWithFlags(&hx, g, 0));
    CK(cuCtxSynchronize());
    int runs_before = g_hostfn_runs;
    for (int i = 0; i < 3; i++)
        CK(cuGraphLaunch(hx, NULL));
    CK(cuCtxSynchronize());
    printf("hostfn %d %d\n", runs_before, g_hostfn_runs);
    CK(cuGraphExecDestroy(hx)); /* before its graph */
    CK(cuGraphDestroy(g));

    /* Refusals. */
    int r1, r2, r3, r4;
    CUdeviceptr p;
    printf("legacy_begin %d\n", cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));

    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(cuMemsetD8Async(d, 3, 4096, s));
    r1 = cuStreamSynchronize(s);
    r2 = cuStreamQuery(s);
    r3 = cuMemsetD8Async(d, 4, 4096, s);
    g = (CUgraph)&r4;
    r4 = cuStreamEndCapture(s, &g);
    printf("sync %d query %d then %d end %d graph %s\n", r1, r2, r3, r4, g ? "given" : "null");

    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    in_thread(end_elsewhere, s);
    r1 = g_thread_rc;
    printf("wrong_thread %d end %d\n", r1, end_and_drop(s));
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    in_thread(end_elsewhere, s);
    printf("relaxed_other_thread %d\n", g_thread_rc);
    printf("end_without_begin %d\n", cuStreamEndCapture(s, &g));
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    r1 = cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    printf("double_begin %d end %d\n", r1, end_and_drop(s));

    /* Unsafe calls: from the capturing thread; from another thread only
     * in global mode; never in relaxed mode. */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    r1 = cuMemAlloc_v2(&p, 4096);
    printf("alloc %d end %d\n", r1, end_and_drop(s));
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    in_thread(alloc_elsewhere, c0);
    r1 = g_thread_rc;
    printf("alloc_other_thread %d end %d\n", r1, end_and_drop(s));
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    in_thread(alloc_elsewhere, c0);
    r1 = g_thread_rc;
    printf("alloc_other_thread_global %d end %d\n", r1, end_and_drop(s));
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    r1 = cuMemAlloc_v2(&p, 4096);
    if (r1 == 0)
        CK(cuMemFree_v2(p));
    printf("alloc_relaxed %d end %d\n", r1, end_and_drop(s));
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    r1 = cuCtxSynchronize();
    printf("ctx_sync %d end %d\n", r1, end_and_drop(s));

    /* The legacy stream's implicit synchronisation with blocking streams. */
    CK(cuStreamBeginCapture_v2(blocking, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    r1 = cuMemsetD8Async(d, 5, 4096, NULL);
    printf("legacy_work %d end %d\n", r1, end_and_drop(blocking));
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    r1 = cuMemsetD8Async(d, 5, 4096, NULL);
    printf("legacy_work_non_blocking %d end %d\n", r1, end_and_drop(s));
    CK(cuCtxSynchronize());

    /* What the stand-in does not model. */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    r1 = cuEventRecord(a, s);
    r2 = cuMemsetD8Async(d, 0, 4096, s);
    printf("record %d then %d end %d\n", r1, r2, end_and_drop(s));
    static char pageable[4096];
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    r1 = cuMemcpyHtoDAsync_v2(d, pageable, sizeof pageable, s);
    printf("pageable %d end %d\n", r1, end_and_drop(s));

    /* Launches: into another GPU's stream, into a capture. */
    open_gpu(1);
    CUstream s1;
    CK(cuStreamCreate(&s1, 1));
    r1 = cuGraphLaunch(x, s1);
    CK(cuCtxSetCurrent(c0));
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    r2 = cuGraphLaunch(x, s);
    printf("launch_other_gpu %d into_capture %d end %d\n", r1, r2, end_and_drop(s));

    /* A capturing stream destroyed. */
    CUstream t;
    CK(cuStreamCreate(&t, 1));
    CK(cuStreamBeginCapture_v2(t, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(cuMemsetD8Async(d, 0, 4096, t));
    r1 = cuStreamDestroy_v2(t);
    printf("destroy_capturing %d end %d\n", r1, cuStreamEndCapture(t, &g));

    /* Handles: an empty graph works; wrong and stale handles do not. */
    CUgraph empty;
    CUgraphExec ex;
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(cuStreamEndCapture(s, &empty));
    CK(cuGraphInstantiateWithFlags(&ex, empty, 0));
    r1 = cuGraphLaunch(ex, s);
    CK(cuStreamSynchronize(s));
    CK(cuGraphExecDestroy(ex));
    printf("empty %d\n", r1);
    int h[7];
    h[0] = cuGraphInstantiateWithFlags(&ex, NULL, 0);
    h[1] = cuGraphInstantiateWithFlags(&ex, (CUgraph)x, 0);
    h[2] = cuGraphLaunch((CUgraphExec)empty, s);
    CK(cuGraphDestroy(empty));
    h[3] = cuGraphDestroy(empty);
    CK(cuGraphExecDestroy(x));
    h[4] = cuGraphExecDestroy(x);
    h[5] = cuGraphLaunch(x, s);
    h[6] = cuGraphInstantiateWithFlags(NULL, empty, 0);
    printf("handles %d %d %d %d %d %d %d\n", h[0], h[1], h[2], h[3], h[4], h[5], h[6]);

    CK(cuCtxSynchronize());
    int codes[] = {401, 900, 901, 908};
    for (int i = 0; i < 4; i++) {
        const char *name = NULL, *text = NULL;
        CK(cuGetErrorName(codes[i], &name));
        CK(cuGetErrorString(codes[i], &text));
        printf("error %d %s: %s\n", codes[i], name, text);
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        FAIL("usage: cuda_check init|info|deref|bounds|oom|order|timing|sticky|clock|capture|kernels|occupancy");
    const char *c = argv[1];
    if (!strcmp(c, "init"))
        return cmd_init();
    if (!strcmp(c, "info"))
        return cmd_info();
    if (!strcmp(c, "deref"))
        return cmd_deref();
    if (!strcmp(c, "bounds"))
        return cmd_bounds();
    if (!strcmp(c, "oom"))
        return cmd_oom();
    if (!strcmp(c, "order"))
        return cmd_order();
    if (!strcmp(c, "timing"))
        return cmd_timing();
    if (!strcmp(c, "sticky"))
        return cmd_sticky();
    if (!strcmp(c, "clock"))
        return cmd_clock();
    if (!strcmp(c, "capture"))
        return cmd_capture();
    if (!strcmp(c, "kernels"))
        return cmd_kernels();
    if (!strcmp(c, "occupancy"))
        return cmd_occupancy();
    FAIL("unknown subcommand %s", c);
}
