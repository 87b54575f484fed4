/*
 * The interface between the two halves of commbench's GPU stand-in: the
 * CUDA driver double (cuda.c, built as libcuda.so.1) and the NCCL double
 * (nccl.c, built as libnccl.so.2, linked against the former). Nothing here
 * is part of CUDA's or NCCL's API; every name starts with
 * commbench_standin_. Test code only: see README.md.
 */
#ifndef COMMBENCH_STANDIN_H
#define COMMBENCH_STANDIN_H

#include <stddef.h>
#include <stdint.h>

#define STANDIN_MAX_GPUS 64

/* How two GPUs of the described machine reach each other. */
enum standin_link {
    STANDIN_LINK_NONE = 0,   /* no peer access: copies go through the host */
    STANDIN_LINK_NVLINK = 1, /* NVLink (or NVSwitch) lanes */
    STANDIN_LINK_PCIE = 2,   /* peer access over PCIe */
};

struct standin_gpu {
    char name[256];
    uint64_t memory_bytes;
    int cc_major, cc_minor;
    unsigned pci_domain, pci_bus, pci_device, pci_function;
    int numa;
    int multiprocessors;
};

/* The described machine, as the config file says it. Rates are in bytes
 * per nanosecond (= GB/s, 10^9 bytes per second); latencies in ns. */
struct standin_machine {
    char path[512];
    char name[128];
    int ngpus;
    struct standin_gpu gpu[STANDIN_MAX_GPUS];
    unsigned char link[STANDIN_MAX_GPUS][STANDIN_MAX_GPUS];    /* enum standin_link */
    unsigned char nvlinks[STANDIN_MAX_GPUS][STANDIN_MAX_GPUS]; /* lanes, for NVLink */
    double h2d_pinned, h2d_pageable, d2h_pinned, d2h_pageable;
    double d2d, nvlink, pcie_peer, staged_peer;
    double copy_latency_ns, nccl_latency_ns;
    int nvlink_version; /* major version (nvlink.version, default 2), for NVML */
    int nvswitch;       /* the NVLinks go through NVSwitches (nvlink.switch=1) */
    /* Kernels (cuLaunchKernel): copy kernels run at the copy path's rate
     * times sm_copy_factor (rate.sm_copy_factor, default 1); a pointer
     * chase takes one access latency per load, by where it starts
     * (latency.device_access_ns 500, host_access_ns 900, peer_access_ns
     * 1200 by default). */
    double sm_copy_factor;
    double device_access_ns, host_access_ns, peer_access_ns;
};

/* Memory kinds as the allocation table knows them. */
enum standin_mem {
    STANDIN_MEM_HOST = 0,    /* not in the table: ordinary (pageable) host memory */
    STANDIN_MEM_DEVICE = 1,  /* cuMemAlloc: not dereferenceable by the host */
    STANDIN_MEM_MANAGED = 2, /* cuMemAllocManaged: host-accessible */
    STANDIN_MEM_PINNED = 3,  /* cuMemHostAlloc: host memory, page-locked */
};

/* Work a stream runs for NCCL: called on the stream's worker thread with
 * the operation's modelled start (CLOCK_MONOTONIC ns) and, in *event_ns,
 * its start on the event clock (README.md, Time: the device's own time,
 * which host delays do not move); returns its modelled end and leaves its
 * end on the event clock in *event_ns. With skip set (the context has a
 * sticky error) it must only release what it holds and return start,
 * *event_ns untouched. It owns `arg`. */
typedef int64_t (*standin_run_fn)(void *arg, int64_t start_ns, int64_t *event_ns, int skip);

/* For an operation queued while its stream captures (cuStreamBeginCapture):
 * the stream keeps `arg` as the graph's template instead of running it.
 * Each launch of an instantiated graph (cuGraphLaunch) asks `clone` for a
 * fresh arg for one more run, which it queues with `run` as any stream
 * operation (and, should that fail, hands to `run` with skip set). The
 * template itself never runs: `drop` releases it once the graph and every
 * executable graph made from it are destroyed (they share it; templates
 * must not change after capture). Both are called with the CUDA
 * stand-in's lock held, so they must not call back into libcuda. */
typedef void *(*standin_clone_fn)(void *arg); /* a fresh arg for one more run of a captured operation (NULL: out of memory) */
typedef void (*standin_drop_fn)(void *arg);   /* releases a captured template that will never run */

/* The machine, once cuInit has read it; NULL before or when it failed. */
const struct standin_machine *commbench_standin_machine(void);

/* The machine as its file says it, whatever CUDA_VISIBLE_DEVICES shows
 * (reading it as cuInit does, once); NULL when it cannot be read. For the
 * NVML stand-in, which sees every GPU as NVML does. */
const struct standin_machine *commbench_standin_machine_file(void);

/* COMMBENCH_STANDIN_TIME_SCALE (1 when unset). */
double commbench_standin_time_scale(void);

/* CLOCK_MONOTONIC in ns. */
int64_t commbench_standin_now_ns(void);

/* Sleeps until CLOCK_MONOTONIC reaches `deadline_ns`: nanosleep, then
 * yields for the last tens of microseconds. */
void commbench_standin_sleep_until(int64_t deadline_ns);

/* Peer rate between two machine GPUs in bytes/ns: their NVLink lanes
 * times the per-lane rate, the PCIe peer rate, or the host-staged rate. */
double commbench_standin_pair_rate(int machine_a, int machine_b);

/* The device of the calling thread's current context (initialising the
 * driver, and using visible device 0 as the CUDA runtime would, when no
 * context is current): its machine index and its visible ordinal.
 * Returns a CUresult. */
int commbench_standin_current_device(int *machine_index, int *ordinal);

/* The visible ordinal of a machine GPU in this process, or -1. */
int commbench_standin_ordinal_of(int machine_index);

/* Checks that [ptr, ptr + bytes) lies inside one allocation of this
 * process (device, managed or pinned) or is ordinary host memory, and
 * translates it. `kind` gets enum standin_mem, `machine_index` the GPU of
 * device memory (-1 otherwise). Returns a CUresult (1, invalid value,
 * for a range that leaves its allocation or a device address that is
 * not allocated). */
int commbench_standin_resolve(uint64_t ptr, size_t bytes, void **host, int *kind, int *machine_index);

/* Queues `run(arg, ...)` on `stream` (0, 1 and 2 mean the legacy stream
 * of `machine_index`'s context) as one stream operation. The stream must
 * belong to `machine_index`'s context: else CUDA_ERROR_INVALID_HANDLE
 * (400), and *stream_machine says whose it is (-1 when unknown).
 *
 * While the stream captures, the operation becomes a node of the graph
 * being built instead: *captured is set to 1, `arg` is from then on the
 * graph's template (owned by the graph, released through `drop`), and
 * `run` is not called for it; each launch of the graph runs a clone
 * (`clone`, see above). Without `clone` (NULL) the operation cannot be
 * captured: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (900), and the capture
 * is invalidated. Otherwise *captured is 0 (queued, or refused).
 *
 * Returns a CUresult; on failure `run` is not called and `arg` stays the
 * caller's. */
int commbench_standin_enqueue(void *stream, int machine_index, standin_run_fn run, standin_clone_fn clone,
                              standin_drop_fn drop, void *arg, int *stream_machine, int *captured);

/* CUDA's name for a result code ("CUDA_ERROR_LAUNCH_FAILED"). */
const char *commbench_standin_cuda_error_name(int code);

#endif
