/*
 * A test double of the CUDA driver (libcuda.so.1) for commbench's tests:
 * the driver calls commbench makes, with the machine they pretend to run
 * on read from the file named by COMMBENCH_STANDIN_MACHINE. Test code
 * only, never shipped; its timings are a model, never measurements. See
 * README.md for what is modelled and what is not.
 *
 * Device memory is host memory behind addresses the host cannot
 * dereference; every stream runs its work in order on a thread of its
 * own, with a modelled device clock; the legacy default stream keeps
 * CUDA's implicit synchronisation with blocking streams. A stream can
 * capture its work into a graph, which launches replay in capture order.
 */
#define _GNU_SOURCE
#include "standin.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void (*CUhostFn)(void *);

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_ILLEGAL_STATE = 401,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
};

/* CUstreamCaptureMode */
enum { CAPTURE_GLOBAL = 0, CAPTURE_THREAD_LOCAL = 1, CAPTURE_RELAXED = 2 };

#define CU_STREAM_NON_BLOCKING 0x1u
#define CU_EVENT_BLOCKING_SYNC 0x1u
#define CU_EVENT_DISABLE_TIMING 0x2u
#define CU_EVENT_INTERPROCESS 0x4u
#define CU_MEMHOSTALLOC_ALL 0x7u
#define CU_MEM_ATTACH_GLOBAL 0x1u
#define CU_MEM_ATTACH_HOST 0x2u

/* Device addresses: bit 62 set, which no x86-64 (4- or 5-level paging)
 * or AArch64 user address has, so a host dereference faults. GPU g owns
 * [DEV_BASE + g * DEV_SPAN, + DEV_SPAN). */
#define DEV_BASE 0x4000000000000000ULL
#define DEV_SPAN (1ULL << 40)
#define DEV_GAP (64ULL << 10)

/* Pageable host-to-device copies up to this size are staged and return
 * before landing; larger ones wait for the copy (bounded staging). */
#define STAGE_MAX ((size_t)64 << 20)

/* The worker sleeps to a deadline less this, then yields. */
#define SPIN_NS 40000

static const char *const ME = "cuda stand-in";

/* ---------------------------------------------------------------- state */

typedef struct op op_t;
typedef struct stream stream_t;
typedef struct event event_t;
typedef struct ctx ctx_t;
typedef struct graph graph_t;

struct ctx {
    uint32_t magic;
    int ordinal;        /* visible ordinal */
    int machine;        /* index in the described machine */
    int retained;       /* primary context retain count */
    int active;         /* retained since the last reset */
    CUresult sticky;    /* sticky error, 0 if none */
    stream_t *legacy;   /* the legacy default stream, made on first use */
    unsigned char peer[STANDIN_MAX_GPUS]; /* access enabled to ordinal i */
    uint64_t used;      /* device bytes allocated */
    uint64_t next_off;  /* next-fit cursor in this GPU's address span */
};

enum op_kind { OP_COPY, OP_MEMSET, OP_HOSTFN, OP_RECORD, OP_WAIT, OP_CUSTOM, OP_KERNEL };

typedef struct kernel_run kernel_run_t;

struct op {
    op_t *next;          /* in its stream's queue */
    int refs;
    int kind;
    int done;
    int64_t enq_ns;      /* when it was queued */
    int64_t end_ns;      /* modelled end, once done */
    int64_t vend_ns;     /* end on the event clock, once done */
    op_t **deps;         /* ops it waits for (retained until it ends) */
    int64_t after_ns;    /* ends of awaited ops already done when queued */
    int64_t vafter_ns;   /* the same on the event clock */
    int ndeps, capdeps;
    void *dst;
    const void *src;
    size_t bytes;
    int value;
    double rate;         /* bytes per ns */
    void *staging;       /* freed when done */
    CUhostFn fn;
    void *arg;
    standin_run_fn run;
    standin_clone_fn clone; /* OP_CUSTOM: how a capture keeps it (NULL: it cannot) */
    standin_drop_fn drop;
    int corrupt;         /* OP_COPY: write one wrong word (COMMBENCH_STANDIN_CORRUPT) */
    kernel_run_t *kernel; /* OP_KERNEL: what it runs (freed with the op) */
};

struct stream {
    uint32_t magic;
    ctx_t *ctx;
    unsigned flags;
    int legacy;
    int destroyed;       /* no new work; the worker exits once idle */
    op_t *head, *tail;   /* queued, not yet done (head is running) */
    op_t *last;          /* last queued (retained), for implicit sync */
    int pending;
    int64_t clock;       /* modelled end of its last operation */
    int64_t vclock;      /* the same on the event clock */
    pthread_cond_t cv;
    int started;
    /* Stream capture (cuStreamBeginCapture_v2): the graph being built,
     * NULL when not capturing; whether an error invalidated it; its mode
     * and the thread that began it. */
    graph_t *capture;
    int cap_invalid;
    int cap_mode;
    pthread_t cap_thread;
    stream_t *next;
};

/* A captured NCCL operation: the template each launch clones, shared by
 * the graph and the executable graphs made from it, dropped with the last
 * of them. */
typedef struct tmpl {
    int refs;
    void *arg;
    standin_run_fn run;
    standin_clone_fn clone;
    standin_drop_fn drop;
} tmpl_t;

/* One node of a graph: an operation as it would have been queued. */
typedef struct gnode {
    int kind; /* OP_COPY, OP_MEMSET, OP_HOSTFN or OP_CUSTOM */
    void *dst;
    const void *src;
    size_t bytes;
    int value;
    double rate;
    CUhostFn fn;
    void *arg;
    tmpl_t *t; /* OP_CUSTOM's */
} gnode_t;

/* A graph (CUgraph: what a capture made) or an executable graph
 * (CUgraphExec: an independent copy of one). Nodes run in capture order;
 * the stand-in keeps a capture's order, not a dependency graph. */
struct graph {
    uint32_t magic;  /* GRAPH_MAGIC or EXEC_MAGIC */
    ctx_t *ctx;      /* the capturing stream's context; NULL once it was reset */
    gnode_t *nodes;
    int n, capn;
    graph_t *next;   /* in g_graphs, once the capture ended */
};

struct event {
    uint32_t magic;
    ctx_t *ctx;
    unsigned flags;
    op_t *rec;           /* last recording (retained) */
    event_t *next;
};

typedef struct alloc {
    uint64_t base;
    size_t size;
    size_t map_size;
    char *host;
    int kind;
    ctx_t *ctx;
    int machine;
} alloc_t;

static pthread_mutex_t G = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t G_done = PTHREAD_COND_INITIALIZER;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CUresult g_init_rc = CUDA_ERROR_NOT_INITIALIZED;
static _Atomic int g_inited; /* set once, inside pthread_once */
static _Atomic int g_loaded; /* the machine file was read, whatever the visible devices */
static struct standin_machine g_m;
static int g_nvis;
static int g_vis[STANDIN_MAX_GPUS]; /* ordinal -> machine index */
static ctx_t g_ctx[STANDIN_MAX_GPUS];
static double g_scale = 1.0;
static long long g_fail_after = -1;
static CUresult g_fail_code = CUDA_ERROR_LAUNCH_FAILED;
static long long g_stream_ops;
static long long g_corrupt_at = -1; /* COMMBENCH_STANDIN_CORRUPT: the copy (1-based) that writes one wrong word */
static long long g_copies;          /* copies and copy kernels of 4 KiB or more queued so far */
static double g_ns_per_byte = 0.25; /* host memcpy speed, learnt */
static int g_trace = -1;            /* COMMBENCH_STANDIN_TRACE: where each operation's line goes (-1: nowhere) */

static stream_t *g_streams;
static event_t *g_events;
static graph_t *g_graphs; /* graphs and executable graphs */
static alloc_t *g_allocs;
static size_t g_nallocs, g_capallocs;

static __thread ctx_t *t_cur;

#define CTX_MAGIC 0x43545831u
#define STREAM_MAGIC 0x53545231u
#define EVENT_MAGIC 0x45564e31u
#define GRAPH_MAGIC 0x47525048u
#define EXEC_MAGIC 0x47455845u

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", ME, line);
}

/* ----------------------------------------------------------------- time */

API int64_t commbench_standin_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

API void commbench_standin_sleep_until(int64_t deadline)
{
    int64_t now = commbench_standin_now_ns();
    if (deadline - now > SPIN_NS) {
        int64_t t = deadline - SPIN_NS;
        struct timespec ts = {.tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
    while (commbench_standin_now_ns() < deadline)
        sched_yield();
}

API double commbench_standin_time_scale(void)
{
    return g_scale;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Modelled duration of a copy of `bytes` at `rate` bytes/ns. */
static int64_t copy_ns(size_t bytes, double rate)
{
    double ns = g_m.copy_latency_ns + (rate > 0 ? (double)bytes / rate : 0.0);
    return (int64_t)(ns * g_scale + 0.5);
}

/* --------------------------------------------------------------- config */

static int parse_bus_id(const char *s, struct standin_gpu *g)
{
    unsigned d, b, v, f;
    char tail;
    if (sscanf(s, "%x:%x:%x.%x%c", &d, &b, &v, &f, &tail) != 4)
        return -1;
    if (b > 0xff || v > 0x1f || f > 7)
        return -1;
    g->pci_domain = d;
    g->pci_bus = b;
    g->pci_device = v;
    g->pci_function = f;
    return 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

static int parse_double(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *trim(end) != 0 || !(d >= 0))
        return -1;
    *out = d;
    return 0;
}

static int parse_long(const char *v, long long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *trim(end) != 0)
        return -1;
    *out = x;
    return 0;
}

/* Reads the machine file; on failure says why (one line) and returns -1. */
static int load_machine(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        say("cannot read the machine file %s (COMMBENCH_STANDIN_MACHINE): %s", path, strerror(errno));
        return -1;
    }
    memset(&g_m, 0, sizeof g_m);
    snprintf(g_m.path, sizeof g_m.path, "%s", path);
    enum { R_H2D_PINNED, R_H2D_PAGEABLE, R_D2H_PINNED, R_D2H_PAGEABLE, R_D2D, R_NVLINK, R_PCIE, R_STAGED, R_COPY_LAT,
           R_NCCL_LAT, R_COUNT };
    static const char *const rate_keys[R_COUNT] = {
        "rate.h2d_pinned_gbs", "rate.h2d_pageable_gbs", "rate.d2h_pinned_gbs", "rate.d2h_pageable_gbs",
        "rate.d2d_gbs",        "rate.nvlink_gbs",       "rate.pcie_peer_gbs",  "rate.staged_peer_gbs",
        "latency.copy_us",     "latency.nccl_us",
    };
    double rates[R_COUNT];
    int have_rate[R_COUNT] = {0};
    enum { G_NAME = 1, G_MEM = 2, G_CC = 4, G_BUS = 8, G_ALL = 15 };
    int have_gpu[STANDIN_MAX_GPUS] = {0};
    int have_count = 0;
    char line[1024];
    int lineno = 0, bad = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = trim(line);
        if (*s == 0 || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            say("%s:%d: expected key=value", path, lineno);
            bad = 1;
            break;
        }
        *eq = 0;
        char *key = trim(s), *val = trim(eq + 1);
        long long n;
        int gi;
        char field[64];
        if (strcmp(key, "machine") == 0) {
            snprintf(g_m.name, sizeof g_m.name, "%s", val);
        } else if (strcmp(key, "gpus") == 0) {
            if (parse_long(val, &n) || n < 0 || n > STANDIN_MAX_GPUS) {
                say("%s:%d: gpus must be 0 to %d", path, lineno, STANDIN_MAX_GPUS);
                bad = 1;
            } else {
                g_m.ngpus = (int)n;
                have_count = 1;
            }
        } else if (sscanf(key, "gpu.%d.%63s", &gi, field) == 2) {
            if (!have_count || gi < 0 || gi >= g_m.ngpus) {
                say("%s:%d: GPU %d is not below gpus= (given first)", path, lineno, gi);
                bad = 1;
                continue;
            }
            struct standin_gpu *g = &g_m.gpu[gi];
            if (strcmp(field, "name") == 0) {
                snprintf(g->name, sizeof g->name, "%s", val);
                have_gpu[gi] |= G_NAME;
            } else if (strcmp(field, "memory_bytes") == 0) {
                if (parse_long(val, &n) || n <= 0) {
                    say("%s:%d: memory_bytes must be a positive integer", path, lineno);
                    bad = 1;
                }
                g->memory_bytes = (uint64_t)n;
                have_gpu[gi] |= G_MEM;
            } else if (strcmp(field, "compute_capability") == 0) {
                char tail;
                if (sscanf(val, "%d.%d%c", &g->cc_major, &g->cc_minor, &tail) != 2) {
                    say("%s:%d: compute_capability must be MAJOR.MINOR", path, lineno);
                    bad = 1;
                }
                have_gpu[gi] |= G_CC;
            } else if (strcmp(field, "pci_bus_id") == 0) {
                if (parse_bus_id(val, g)) {
                    say("%s:%d: pci_bus_id must be DDDD:BB:DD.F", path, lineno);
                    bad = 1;
                }
                have_gpu[gi] |= G_BUS;
            } else if (strcmp(field, "numa") == 0) {
                if (parse_long(val, &n)) {
                    say("%s:%d: numa must be an integer", path, lineno);
                    bad = 1;
                }
                g->numa = (int)n;
            } else if (strcmp(field, "multiprocessors") == 0) {
                if (parse_long(val, &n) || n <= 0) {
                    say("%s:%d: multiprocessors must be a positive integer", path, lineno);
                    bad = 1;
                }
                g->multiprocessors = (int)n;
            } else {
                say("%s:%d: unknown GPU field '%s'", path, lineno, field);
                bad = 1;
            }
        } else if (strcmp(key, "nvlink.version") == 0) {
            if (parse_long(val, &n) || n < 1 || n > 5) {
                say("%s:%d: nvlink.version must be 1 to 5", path, lineno);
                bad = 1;
            } else {
                g_m.nvlink_version = (int)n;
            }
        } else if (strcmp(key, "nvlink.switch") == 0) {
            if (parse_long(val, &n) || n < 0 || n > 1) {
                say("%s:%d: nvlink.switch must be 0 or 1", path, lineno);
                bad = 1;
            } else {
                g_m.nvswitch = (int)n;
            }
        } else if (strcmp(key, "rate.sm_copy_factor") == 0 || strcmp(key, "latency.device_access_ns") == 0 ||
                   strcmp(key, "latency.host_access_ns") == 0 || strcmp(key, "latency.peer_access_ns") == 0) {
            double d;
            if (parse_double(val, &d) || d <= 0) {
                say("%s:%d: %s must be a positive number", path, lineno, key);
                bad = 1;
            } else if (key[0] == 'r') {
                g_m.sm_copy_factor = d;
            } else if (strcmp(key, "latency.device_access_ns") == 0) {
                g_m.device_access_ns = d;
            } else if (strcmp(key, "latency.host_access_ns") == 0) {
                g_m.host_access_ns = d;
            } else {
                g_m.peer_access_ns = d;
            }
        } else if (strcmp(key, "link") == 0) {
            int a, b, lanes = 0, used = 0;
            char kind[16];
            if (sscanf(val, "%d,%d,%15[a-z]%n", &a, &b, kind, &used) != 3 || a < 0 || b < 0 ||
                a >= g_m.ngpus || b >= g_m.ngpus || a == b) {
                say("%s:%d: link must be A,B,nvlink,LANES or A,B,pcie with two GPUs below gpus=", path, lineno);
                bad = 1;
                continue;
            }
            const char *rest = val + used;
            if (strcmp(kind, "nvlink") == 0 && sscanf(rest, ",%d", &lanes) == 1 && lanes > 0 && lanes < 256) {
                g_m.link[a][b] = g_m.link[b][a] = STANDIN_LINK_NVLINK;
                g_m.nvlinks[a][b] = g_m.nvlinks[b][a] = (unsigned char)lanes;
            } else if (strcmp(kind, "pcie") == 0 && *rest == 0) {
                g_m.link[a][b] = g_m.link[b][a] = STANDIN_LINK_PCIE;
            } else {
                say("%s:%d: link must be A,B,nvlink,LANES or A,B,pcie", path, lineno);
                bad = 1;
            }
        } else {
            int k;
            for (k = 0; k < R_COUNT; k++)
                if (strcmp(key, rate_keys[k]) == 0)
                    break;
            if (k == R_COUNT) {
                say("%s:%d: unknown key '%s'", path, lineno, key);
                bad = 1;
            } else if (parse_double(val, &rates[k]) || (k < R_COPY_LAT && rates[k] <= 0)) {
                say("%s:%d: %s must be a number (rates > 0)", path, lineno, key);
                bad = 1;
            } else {
                have_rate[k] = 1;
            }
        }
    }
    fclose(f);
    if (bad)
        return -1;
    if (!have_count) {
        say("%s: no gpus= line", path);
        return -1;
    }
    for (int i = 0; i < g_m.ngpus; i++) {
        if (have_gpu[i] != G_ALL) {
            say("%s: GPU %d lacks one of name, memory_bytes, compute_capability, pci_bus_id", path, i);
            return -1;
        }
        if (!g_m.gpu[i].multiprocessors)
            g_m.gpu[i].multiprocessors = g_m.gpu[i].cc_major >= 9 ? 132 : g_m.gpu[i].cc_major >= 8 ? 108 : 80;
    }
    for (int k = 0; k < R_COUNT; k++)
        if (!have_rate[k]) {
            say("%s: no %s line", path, rate_keys[k]);
            return -1;
        }
    g_m.h2d_pinned = rates[R_H2D_PINNED];
    g_m.h2d_pageable = rates[R_H2D_PAGEABLE];
    g_m.d2h_pinned = rates[R_D2H_PINNED];
    g_m.d2h_pageable = rates[R_D2H_PAGEABLE];
    g_m.d2d = rates[R_D2D];
    g_m.nvlink = rates[R_NVLINK];
    g_m.pcie_peer = rates[R_PCIE];
    g_m.staged_peer = rates[R_STAGED];
    if (!g_m.nvlink_version)
        g_m.nvlink_version = 2;
    if (!g_m.sm_copy_factor)
        g_m.sm_copy_factor = 1.0;
    if (!g_m.device_access_ns)
        g_m.device_access_ns = 500;
    if (!g_m.host_access_ns)
        g_m.host_access_ns = 900;
    if (!g_m.peer_access_ns)
        g_m.peer_access_ns = 1200;
    g_m.copy_latency_ns = rates[R_COPY_LAT] * 1e3;
    g_m.nccl_latency_ns = rates[R_NCCL_LAT] * 1e3;
    return 0;
}

/* CUDA_VISIBLE_DEVICES: indices, renumbered from 0; the list stops at the
 * first entry that is not a GPU of the machine (or repeats one), as the
 * real driver's does. */
static void parse_visible(void)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    g_nvis = 0;
    if (!v) {
        for (int i = 0; i < g_m.ngpus; i++)
            g_vis[g_nvis++] = i;
        return;
    }
    const char *p = v;
    while (*p && g_nvis < STANDIN_MAX_GPUS) {
        while (isspace((unsigned char)*p))
            p++;
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 0 || x >= g_m.ngpus)
            break;
        int dup = 0;
        for (int i = 0; i < g_nvis; i++)
            dup |= g_vis[i] == x;
        if (dup)
            break;
        g_vis[g_nvis++] = (int)x;
        p = end;
        while (isspace((unsigned char)*p))
            p++;
        if (*p != ',')
            break;
        p++;
    }
}

static void read_faults(void)
{
    const char *s = getenv("COMMBENCH_STANDIN_TRACE");
    /* "1": stderr; a path: appended to that file, each line one write, so
       the lines of every process stay whole (a launcher that forwards
       several ranks' stderr can cut their lines and interleave them). */
    if (s && *s && strcmp(s, "0") != 0) {
        g_trace = strcmp(s, "1") == 0 ? 2 : open(s, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (g_trace < 0)
            say("cannot open the trace file %s: %s", s, strerror(errno));
    }
    s = getenv("COMMBENCH_STANDIN_TIME_SCALE");
    if (s && *s) {
        double d;
        if (parse_double(s, &d) || d <= 0)
            say("COMMBENCH_STANDIN_TIME_SCALE=%s is not a positive number; using 1", s);
        else
            g_scale = d;
    }
    s = getenv("COMMBENCH_STANDIN_CORRUPT");
    if (s && *s) {
        long long n;
        char buf[64];
        snprintf(buf, sizeof buf, "%s", s);
        if (strlen(s) >= sizeof buf || parse_long(buf, &n) || n < 1)
            say("COMMBENCH_STANDIN_CORRUPT=%s: expected a copy's number N (1 or more); nothing corrupted", s);
        else
            g_corrupt_at = n;
    }
    s = getenv("COMMBENCH_STANDIN_CUDA_FAIL");
    if (s && *s) {
        long long after = -1, code = CUDA_ERROR_LAUNCH_FAILED;
        char buf[128];
        snprintf(buf, sizeof buf, "%s", s);
        int ok = 1;
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            if (strncmp(tok, "after=", 6) == 0)
                ok &= parse_long(tok + 6, &after) == 0 && after >= 0;
            else if (strncmp(tok, "code=", 5) == 0)
                ok &= parse_long(tok + 5, &code) == 0 && code > 0;
            else
                ok = 0;
        }
        if (!ok || after < 0)
            say("COMMBENCH_STANDIN_CUDA_FAIL=%s: expected after=K[,code=C]; no failure injected", s);
        else {
            g_fail_after = after;
            g_fail_code = (CUresult)code;
        }
    }
}

/* Reads the machine file once, for cuInit and for the NVML stand-in. */
static pthread_once_t g_machine_once = PTHREAD_ONCE_INIT;
static void machine_once(void)
{
    const char *path = getenv("COMMBENCH_STANDIN_MACHINE");
    if (path && *path && load_machine(path) == 0)
        g_loaded = 1;
}

static void init_once(void)
{
    read_faults();
    pthread_once(&g_machine_once, machine_once);
    if (!g_loaded) {
        g_init_rc = CUDA_ERROR_NO_DEVICE;
        return;
    }
    parse_visible();
    for (int i = 0; i < g_nvis; i++) {
        g_ctx[i].magic = CTX_MAGIC;
        g_ctx[i].ordinal = i;
        g_ctx[i].machine = g_vis[i];
    }
    g_init_rc = g_nvis > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
    g_inited = g_init_rc == CUDA_SUCCESS;
}

/* -------------------------------------------------------------- errors */

/* CUDA's names for its result codes; the descriptions are the stand-in's
 * own words, but for the stream-capture codes (401, 900, 901, 908), which
 * are CUDA's. */
static const struct {
    CUresult code;
    const char *name;
    const char *text;
} ERRORS[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "an argument is invalid"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "device memory is exhausted"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "the driver is not initialised (cuInit first)"},
    {4, "CUDA_ERROR_DEINITIALIZED", "the driver is shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "this driver is a stub"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "the device is busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA device found"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "no device has that ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "the module image is neither PTX nor a CUBIN"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "no usable context (none is current, or it was reset)"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "these two devices cannot be peers"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "not a live stream or event"},
    {401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {500, "CUDA_ERROR_NOT_FOUND", "not found"},
    {600, "CUDA_ERROR_NOT_READY", "work is still pending"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "a kernel or copy touched memory it may not"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "a launch asked for too many resources"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "a launch ran too long"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already on"},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access is not on"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "the context was destroyed"},
    {710, "CUDA_ERROR_ASSERT", "a device-side assertion failed"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "the device's call stack broke"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction ran"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", "an address was misaligned"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "a launch failed; the context is unusable"},
    {800, "CUDA_ERROR_NOT_PERMITTED", "not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "not supported"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "the system is not ready"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "the driver does not match the system"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {909, "CUDA_ERROR_TIMEOUT", "a wait timed out"},
    {999, "CUDA_ERROR_UNKNOWN", "an unknown error"},
};

API CUresult cuGetErrorName(CUresult error, const char **out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof ERRORS / sizeof ERRORS[0]; i++)
        if (ERRORS[i].code == error) {
            *out = ERRORS[i].name;
            return CUDA_SUCCESS;
        }
    *out = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult error, const char **out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof ERRORS / sizeof ERRORS[0]; i++)
        if (ERRORS[i].code == error) {
            *out = ERRORS[i].text;
            return CUDA_SUCCESS;
        }
    *out = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

API const char *commbench_standin_cuda_error_name(int code)
{
    const char *name = NULL;
    cuGetErrorName(code, &name);
    return name ? name : "an unknown CUDA error";
}

/* ------------------------------------------------------- initialisation */

API CUresult cuInit(unsigned int flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&g_once, init_once);
    return g_init_rc;
}

/* The driver's private tables, which NVRTC (it opens libcuda.so.1 when
 * loaded) asks for by id: the stand-in has none. Without this symbol
 * NVRTC 12.9 dereferences a null table and crashes. */
API CUresult cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    if (table)
        *table = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}

API CUresult cuDriverGetVersion(int *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 12080;
    return CUDA_SUCCESS;
}

API const struct standin_machine *commbench_standin_machine(void)
{
    return g_inited ? &g_m : NULL;
}

API const struct standin_machine *commbench_standin_machine_file(void)
{
    pthread_once(&g_machine_once, machine_once);
    return g_loaded ? &g_m : NULL;
}

#define NEED_INIT()                                                                                                    \
    do {                                                                                                               \
        if (!g_inited)                                                                                                 \
            return CUDA_ERROR_NOT_INITIALIZED;                                                                         \
    } while (0)

static int valid_device(CUdevice d)
{
    return d >= 0 && d < g_nvis;
}

static const struct standin_gpu *gpu_of(CUdevice d)
{
    return &g_m.gpu[g_vis[d]];
}

/* --------------------------------------------------------------- device */

API CUresult cuDeviceGetCount(int *count)
{
    NEED_INIT();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = g_nvis;
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    NEED_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    NEED_INIT();
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", gpu_of(dev)->name);
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice dev)
{
    NEED_INIT();
    if (!id || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    const struct standin_gpu *g = gpu_of(dev);
    /* The driver's form: 8 hex digits of domain, upper case. */
    snprintf(id, (size_t)len, "%08X:%02X:%02X.%X", g->pci_domain, g->pci_bus, g->pci_device, g->pci_function);
    return CUDA_SUCCESS;
}

API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    NEED_INIT();
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)gpu_of(dev)->memory_bytes;
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev)
{
    NEED_INIT();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    const struct standin_gpu *g = gpu_of(dev);
    int hopper = g->cc_major >= 9;
    int v;
    switch (attrib) {
    case 1: v = 1024; break;                           /* max threads per block */
    case 2: case 3: v = 1024; break;                   /* max block dim x, y */
    case 4: v = 64; break;                             /* max block dim z */
    case 5: v = INT_MAX; break;                        /* max grid dim x */
    case 6: case 7: v = 65535; break;                  /* max grid dim y, z */
    case 8: v = 49152; break;                          /* shared memory per block */
    case 9: v = 65536; break;                          /* total constant memory */
    case 10: v = 32; break;                            /* warp size */
    case 11: v = INT_MAX; break;                       /* max pitch */
    case 12: v = 65536; break;                         /* registers per block */
    case 13: v = hopper ? 1980000 : 1530000; break;    /* clock rate, kHz */
    case 14: v = 512; break;                           /* texture alignment */
    case 15: v = 1; break;                             /* gpu overlap */
    case 16: v = g->multiprocessors; break;            /* multiprocessor count */
    case 17: v = 0; break;                             /* kernel exec timeout */
    case 18: v = 0; break;                             /* integrated */
    case 19: v = 1; break;                             /* can map host memory */
    case 20: v = 0; break;                             /* compute mode default */
    case 31: v = 1; break;                             /* concurrent kernels */
    case 32: v = 1; break;                             /* ECC enabled */
    case 33: v = (int)g->pci_bus; break;               /* PCI bus id */
    case 34: v = (int)g->pci_device; break;            /* PCI device id */
    case 35: v = 0; break;                             /* TCC driver */
    case 36: v = hopper ? 2619000 : 877000; break;     /* memory clock, kHz */
    case 37: v = hopper ? 5120 : 4096; break;          /* memory bus width */
    case 38: v = hopper ? 52428800 : 6291456; break;   /* L2 size */
    case 39: v = 2048; break;                          /* threads per multiprocessor */
    case 40: v = 2; break;                             /* async engines */
    case 41: v = 1; break;                             /* unified addressing */
    case 50: v = (int)g->pci_domain; break;            /* PCI domain */
    case 75: v = g->cc_major; break;                   /* compute capability major */
    case 76: v = g->cc_minor; break;                   /* compute capability minor */
    case 83: v = 1; break;                             /* managed memory */
    case 84: v = 0; break;                             /* multi-GPU board */
    case 86: v = 0; break;                             /* host native atomics */
    case 88: v = 0; break;                             /* pageable memory access */
    case 89: v = 1; break;                             /* concurrent managed access */
    case 130: v = 0; break;                            /* NUMA config: none */
    case 131: v = -1; break;                           /* NUMA id (device memory) */
    case 134: v = g->numa; break;                      /* host NUMA id */
    default:
        if (attrib <= 0 || attrib > 160)
            return CUDA_ERROR_INVALID_VALUE;
        v = 0;
    }
    *value = v;
    return CUDA_SUCCESS;
}

static int link_of(int ma, int mb)
{
    return ma == mb ? STANDIN_LINK_NONE : g_m.link[ma][mb];
}

API double commbench_standin_pair_rate(int a, int b)
{
    if (a < 0 || b < 0 || a >= g_m.ngpus || b >= g_m.ngpus)
        return g_m.staged_peer;
    switch (link_of(a, b)) {
    case STANDIN_LINK_NVLINK: return g_m.nvlink * g_m.nvlinks[a][b];
    case STANDIN_LINK_PCIE: return g_m.pcie_peer;
    default: return g_m.staged_peer;
    }
}

API CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    NEED_INIT();
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev) || !valid_device(peer))
        return CUDA_ERROR_INVALID_DEVICE;
    *can = dev != peer && link_of(g_vis[dev], g_vis[peer]) != STANDIN_LINK_NONE;
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGetP2PAttribute(int *value, int attrib, CUdevice src, CUdevice dst)
{
    NEED_INIT();
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(src) || !valid_device(dst) || src == dst)
        return CUDA_ERROR_INVALID_DEVICE;
    int link = link_of(g_vis[src], g_vis[dst]);
    switch (attrib) {
    case 1: /* performance rank: 0 for NVLink, 1 for PCIe, 0 without access */
        *value = link == STANDIN_LINK_PCIE ? 1 : 0;
        break;
    case 2: /* access supported */
        *value = link != STANDIN_LINK_NONE;
        break;
    case 3: /* native atomics: NVLink only */
        *value = link == STANDIN_LINK_NVLINK;
        break;
    case 4: /* CUDA array access */
        *value = link == STANDIN_LINK_NVLINK;
        break;
    case 5: /* only partial native atomics */
        *value = 0;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* -------------------------------------------------------------- context */

static ctx_t *ctx_handle(const void *h)
{
    for (int i = 0; i < g_nvis; i++)
        if (h == &g_ctx[i])
            return &g_ctx[i];
    return NULL;
}

static ctx_t *ctx_of_machine(int machine)
{
    for (int i = 0; i < g_nvis; i++)
        if (g_ctx[i].machine == machine)
            return &g_ctx[i];
    return NULL;
}

/* The current context, which must be active; its sticky error if any.
 * Call with G held. */
static CUresult current(ctx_t **out)
{
    ctx_t *c = t_cur;
    if (!c || !c->active)
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return c->sticky;
}

static void ctx_reset(ctx_t *c);

API CUresult cuDevicePrimaryCtxRetain(void **pctx, CUdevice dev)
{
    NEED_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&G);
    ctx_t *c = &g_ctx[dev];
    c->retained++;
    c->active = 1;
    *pctx = c;
    pthread_mutex_unlock(&G);
    return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    NEED_INIT();
    if (!valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&G);
    ctx_t *c = &g_ctx[dev];
    CUresult rc = CUDA_SUCCESS;
    if (c->retained == 0)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (--c->retained == 0)
        ctx_reset(c); /* "reset once the last reference is released" */
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuCtxSetCurrent(void *ctx)
{
    NEED_INIT();
    if (!ctx) {
        t_cur = NULL;
        return CUDA_SUCCESS;
    }
    ctx_t *c = ctx_handle(ctx);
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    t_cur = c;
    return CUDA_SUCCESS;
}

API CUresult cuCtxGetCurrent(void **pctx)
{
    NEED_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = t_cur;
    return CUDA_SUCCESS;
}

API CUresult cuCtxGetDevice(CUdevice *dev)
{
    NEED_INIT();
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    ctx_t *c;
    CUresult rc = current(&c);
    if (rc != CUDA_ERROR_INVALID_CONTEXT)
        *dev = t_cur->ordinal, rc = CUDA_SUCCESS;
    pthread_mutex_unlock(&G);
    return rc;
}

API int commbench_standin_current_device(int *machine_index, int *ordinal)
{
    CUresult rc = cuInit(0);
    if (rc)
        return rc;
    pthread_mutex_lock(&G);
    ctx_t *c = t_cur;
    if (!c) {
        /* The CUDA runtime's default: device 0, its primary context. */
        c = &g_ctx[0];
        if (!c->active) {
            c->retained++;
            c->active = 1;
        }
    }
    if (!c->active)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else {
        *machine_index = c->machine;
        *ordinal = c->ordinal;
        rc = c->sticky;
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API int commbench_standin_ordinal_of(int machine_index)
{
    ctx_t *c = ctx_of_machine(machine_index);
    return c ? c->ordinal : -1;
}

/* ------------------------------------------------------------ op helpers */

static op_t *op_new(int kind)
{
    op_t *op = calloc(1, sizeof *op);
    if (op)
        op->kind = kind;
    return op;
}

static void op_release(op_t *op)
{
    if (!op || --op->refs > 0)
        return;
    for (int i = 0; i < op->ndeps; i++)
        op_release(op->deps[i]);
    free(op->deps);
    free(op->staging);
    free(op->kernel);
    free(op);
}

static void op_discard(op_t *op)
{
    op->refs = 1;
    op_release(op);
}

static int op_dep(op_t *op, op_t *dep)
{
    if (!dep)
        return 0;
    if (dep->done) {
        /* Nothing to wait for, but its end still orders `op`: on the
         * event clock above all, where a host that queued late (a busy
         * machine) must not let `op` start before what it waits for. */
        op->after_ns = max64(op->after_ns, dep->end_ns);
        op->vafter_ns = max64(op->vafter_ns, dep->vend_ns);
        return 0;
    }
    if (op->ndeps == op->capdeps) {
        int cap = op->capdeps ? op->capdeps * 2 : 4;
        op_t **d = realloc(op->deps, (size_t)cap * sizeof *d);
        if (!d)
            return -1;
        op->deps = d;
        op->capdeps = cap;
    }
    dep->refs++;
    op->deps[op->ndeps++] = dep;
    return 0;
}

/* Waits (G held) until `op` is done. */
static void op_wait(op_t *op)
{
    while (!op->done)
        pthread_cond_wait(&G_done, &G);
}

/* --------------------------------------------------------------- streams */

static void *worker(void *p);

static stream_t *stream_new(ctx_t *c, unsigned flags, int legacy)
{
    stream_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->magic = STREAM_MAGIC;
    s->ctx = c;
    s->flags = flags;
    s->legacy = legacy;
    pthread_cond_init(&s->cv, NULL);
    s->next = g_streams;
    g_streams = s;
    return s;
}

static stream_t *legacy_of(ctx_t *c)
{
    if (!c->legacy)
        c->legacy = stream_new(c, 0, 1);
    return c->legacy;
}

static int is_legacy_handle(const void *h)
{
    return h == NULL || h == (void *)1 || h == (void *)2;
}

/* A live stream from its handle; the legacy handles (0, CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD) name `c`'s legacy stream. */
static CUresult stream_of(const void *h, ctx_t *c, stream_t **out)
{
    if (is_legacy_handle(h)) {
        if (!c || !c->active)
            return CUDA_ERROR_INVALID_CONTEXT;
        *out = legacy_of(c);
        return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (stream_t *s = g_streams; s; s = s->next)
        if (s == h && !s->destroyed && !s->legacy) {
            if (!s->ctx->active)
                return CUDA_ERROR_INVALID_CONTEXT;
            *out = s;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

/* ---------------------------------------------------------------- capture
 *
 * While a stream captures, what is queued on it becomes a node of its
 * graph instead of running: copies that need no staging, memsets, host
 * functions and NCCL operations (through their clone function). What the
 * stand-in cannot record (a copy involving pageable memory, event records
 * and waits, an NCCL operation without a clone function, a graph launch)
 * is refused with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the
 * capture, as do what CUDA forbids during a capture: synchronising with
 * the capturing stream, the calls CUDA calls unsafe from a thread whose
 * capture is not relaxed (or from any thread while a global-mode capture
 * runs), and work on the legacy stream while a blocking stream of its
 * context captures. Work queued into an invalidated capture returns
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED. All with G held. */

static void tmpl_release(tmpl_t *t)
{
    if (!t || --t->refs > 0)
        return;
    if (t->drop)
        t->drop(t->arg);
    free(t);
}

static void graph_free(graph_t *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++)
        tmpl_release(g->nodes[i].t);
    free(g->nodes);
    g->magic = 0;
    free(g);
}

/* A listed graph (GRAPH_MAGIC) or executable graph (EXEC_MAGIC). */
static graph_t *graph_of(const void *h, uint32_t magic)
{
    if (!h)
        return NULL;
    for (graph_t *g = g_graphs; g; g = g->next)
        if (g == h && g->magic == magic)
            return g;
    return NULL;
}

static void graph_unlist(graph_t *g)
{
    for (graph_t **pp = &g_graphs; *pp; pp = &(*pp)->next)
        if (*pp == g) {
            *pp = g->next;
            return;
        }
}

/* Work the stand-in cannot record: invalidates the capture and says what
 * is not modelled (once: an invalidated capture refuses quietly). */
static CUresult capture_unsupported(stream_t *s, const char *what)
{
    if (s->cap_invalid)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    s->cap_invalid = 1;
    say("%s is not modelled in a stream capture: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and GPU %d's capture is "
        "invalidated",
        what, s->ctx->ordinal);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

/* cuStreamSynchronize, cuStreamQuery on a capturing stream. */
static CUresult capture_sync(stream_t *s, const char *call)
{
    s->cap_invalid = 1;
    say("%s: not permitted on a capturing stream (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED); the capture is "
        "invalidated",
        call);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

/* The calls CUDA deems unsafe during a capture (synchronising the context,
 * synchronous copies and memsets, allocating and freeing): refused, and
 * the captures that forbid them invalidated, when the calling thread
 * captures in global or thread-local mode or any thread in global mode. */
static CUresult capture_forbids(const char *call)
{
    pthread_t self = pthread_self();
    int hit = 0;
    for (stream_t *s = g_streams; s; s = s->next)
        if (s->capture && s->cap_mode != CAPTURE_RELAXED &&
            (s->cap_mode == CAPTURE_GLOBAL || pthread_equal(s->cap_thread, self))) {
            s->cap_invalid = 1;
            hit++;
        }
    if (!hit)
        return CUDA_SUCCESS;
    say("%s: not permitted while this thread captures a stream (or any thread in global mode): "
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and %d capture%s invalidated",
        call, hit, hit == 1 ? " is" : "s are");
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

/* Work for c's legacy stream while a blocking stream of c captures: the
 * implicit synchronisation is not permitted; that capture is invalidated. */
static CUresult legacy_blocked(ctx_t *c)
{
    int hit = 0;
    for (stream_t *t = g_streams; t; t = t->next)
        if (t->ctx == c && !t->legacy && t->capture && !(t->flags & CU_STREAM_NON_BLOCKING)) {
            t->cap_invalid = 1;
            hit++;
        }
    if (!hit)
        return CUDA_SUCCESS;
    say("work queued on GPU %d's legacy stream would synchronise with a capturing blocking stream: "
        "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated",
        c->ordinal);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

/* Makes `op` a node of s's capture instead of queueing it; frees `op`
 * (an OP_CUSTOM's arg then belongs to the graph). */
static CUresult capture_op(stream_t *s, op_t *op, int keep)
{
    graph_t *g = s->capture;
    CUresult rc = CUDA_SUCCESS;
    if (s->cap_invalid)
        rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    else if (op->kind == OP_CUSTOM && !op->clone)
        rc = capture_unsupported(s, "an NCCL operation without a clone function");
    else if (keep || op->staging || (op->kind != OP_COPY && op->kind != OP_MEMSET && op->kind != OP_HOSTFN &&
                                     op->kind != OP_CUSTOM))
        rc = capture_unsupported(s, "an operation the host waits for");
    else if (g->n == g->capn) {
        int cap = g->capn ? g->capn * 2 : 8;
        gnode_t *n = realloc(g->nodes, (size_t)cap * sizeof *n);
        if (!n)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            g->nodes = n;
            g->capn = cap;
        }
    }
    tmpl_t *t = NULL;
    if (!rc && op->kind == OP_CUSTOM) {
        t = calloc(1, sizeof *t);
        if (!t)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else
            *t = (tmpl_t){.refs = 1, .arg = op->arg, .run = op->run, .clone = op->clone, .drop = op->drop};
    }
    if (!rc)
        g->nodes[g->n++] = (gnode_t){.kind = op->kind, .dst = op->dst, .src = op->src, .bytes = op->bytes,
                                     .value = op->value, .rate = op->rate, .fn = op->fn, .arg = op->arg, .t = t};
    op_discard(op);
    return rc;
}

/* Ends s's capture, if any, without a graph. */
static void capture_end(stream_t *s)
{
    graph_free(s->capture);
    s->capture = NULL;
    s->cap_invalid = 0;
}

/* Queues `op` on `s` (G held). `keep` adds a reference for the caller.
 * Counts the operation for COMMBENCH_STANDIN_CUDA_FAIL; adds the legacy
 * stream's implicit dependencies. On failure `op` is freed. While `s`
 * captures, `op` becomes a node of its graph instead (and *captured, when
 * given, is set): it is freed, and counts nothing. */
static CUresult enqueue_ex(stream_t *s, op_t *op, int keep, int *captured)
{
    ctx_t *c = s->ctx;
    if (c->sticky) {
        op_discard(op);
        return c->sticky;
    }
    if (s->capture) {
        CUresult rc = capture_op(s, op, keep);
        if (!rc && captured)
            *captured = 1;
        return rc;
    }
    if (s->legacy) {
        CUresult rc = legacy_blocked(c);
        if (rc) {
            op_discard(op);
            return rc;
        }
    }
    g_stream_ops++;
    if (g_fail_after >= 0 && g_stream_ops > g_fail_after) {
        c->sticky = g_fail_code;
        say("injected failure (COMMBENCH_STANDIN_CUDA_FAIL): stream operation %lld in this process fails; GPU %d's "
            "context now returns %s to every call",
            g_stream_ops, c->ordinal, commbench_standin_cuda_error_name(g_fail_code));
        op_discard(op);
        return c->sticky;
    }
    int fail = 0;
    if (s->legacy) {
        for (stream_t *t = g_streams; t; t = t->next)
            if (t->ctx == c && !t->legacy && !(t->flags & CU_STREAM_NON_BLOCKING))
                fail |= op_dep(op, t->last);
    } else if (!(s->flags & CU_STREAM_NON_BLOCKING) && c->legacy) {
        fail |= op_dep(op, c->legacy->last);
    }
    if (fail) {
        op_discard(op);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (!s->started) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int e = pthread_create(&th, &attr, worker, s);
        pthread_attr_destroy(&attr);
        if (e) {
            op_discard(op);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        s->started = 1;
    }
    op->enq_ns = commbench_standin_now_ns();
    op->refs = 2 + (keep ? 1 : 0); /* the queue, s->last, the caller */
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    op_release(s->last);
    s->last = op;
    s->pending++;
    pthread_cond_signal(&s->cv);
    return CUDA_SUCCESS;
}

static CUresult enqueue(stream_t *s, op_t *op, int keep)
{
    return enqueue_ex(s, op, keep, NULL);
}

static int64_t kernel_prepare(stream_t *s, op_t *op);
static void kernel_run(op_t *op);
static void corrupt_middle(void *dst, size_t bytes);
static void modules_drop(ctx_t *c);

static void *worker(void *p)
{
    stream_t *s = p;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    pthread_mutex_lock(&G);
    for (;;) {
        while (!s->head && !s->destroyed)
            pthread_cond_wait(&s->cv, &G);
        op_t *op = s->head;
        if (!op)
            break;
        for (;;) {
            int ready = 1;
            for (int i = 0; i < op->ndeps; i++)
                ready &= op->deps[i]->done;
            if (ready)
                break;
            pthread_cond_wait(&G_done, &G);
        }
        /* The modelled start: once the stream is free, the operation
         * queued and what it waits for done. On the event clock the
         * same without the queueing: how late the host queued it (its
         * own scheduling, its load) is no device time. */
        int64_t start = max64(max64(s->clock, op->enq_ns), op->after_ns);
        int64_t vstart = max64(s->vclock, op->vafter_ns);
        for (int i = 0; i < op->ndeps; i++) {
            start = max64(start, op->deps[i]->end_ns);
            vstart = max64(vstart, op->deps[i]->vend_ns);
        }
        int64_t vend = vstart;
        int skip = s->ctx->sticky != 0;
        int64_t end = start;
        switch (op->kind) {
        case OP_COPY:
        case OP_MEMSET:
            if (!skip) {
                end = start + copy_ns(op->bytes, op->rate);
                vend = vstart + (end - start);
                /* Land the data near the modelled end: start the host
                 * copy as late as its learnt speed allows. */
                int64_t host_ns = (int64_t)(g_ns_per_byte * 1.25 * (double)op->bytes) + 20000;
                pthread_mutex_unlock(&G);
                commbench_standin_sleep_until(max64(start, end - host_ns));
                int64_t t0 = commbench_standin_now_ns();
                if (op->kind == OP_COPY) {
                    memmove(op->dst, op->src, op->bytes);
                    if (op->corrupt)
                        corrupt_middle(op->dst, op->bytes);
                } else
                    memset(op->dst, op->value, op->bytes);
                int64_t t1 = commbench_standin_now_ns();
                commbench_standin_sleep_until(end);
                pthread_mutex_lock(&G);
                if (op->bytes >= (1u << 20)) {
                    double seen = (double)(t1 - t0) / (double)op->bytes;
                    g_ns_per_byte = 0.5 * g_ns_per_byte + 0.5 * seen;
                }
            }
            break;
        case OP_HOSTFN:
            if (!skip) {
                pthread_mutex_unlock(&G);
                /* On the event clock the function takes what it ran for:
                 * how late this worker got to it (the host's scheduling,
                 * its load) is no device time, as for queueing above. */
                int64_t t0 = commbench_standin_now_ns();
                op->fn(op->arg);
                int64_t t1 = commbench_standin_now_ns();
                end = max64(start, t1);
                vend = vstart + (t1 - t0);
                pthread_mutex_lock(&G);
            }
            break;
        case OP_CUSTOM: {
            standin_run_fn run = op->run;
            void *arg = op->arg;
            op->run = NULL;
            pthread_mutex_unlock(&G);
            vend = vstart;
            end = run(arg, start, &vend, skip);
            if (end < start)
                end = start;
            if (vend < vstart)
                vend = vstart;
            if (!skip)
                commbench_standin_sleep_until(end);
            pthread_mutex_lock(&G);
            break;
        }
        case OP_KERNEL:
            if (!skip) {
                int64_t ns = kernel_prepare(s, op);
                end = start + ns;
                vend = vstart + ns;
                if (!s->ctx->sticky) {
                    pthread_mutex_unlock(&G);
                    kernel_run(op);
                    commbench_standin_sleep_until(end);
                    pthread_mutex_lock(&G);
                }
            }
            break;
        default: /* records and waits take no time */
            break;
        }
        if (g_trace >= 0) {
            static const char *const kinds[] = {"copy", "memset", "hostfn", "record", "wait", "custom", "kernel"};
            char line[512];
            /* CLOCK_MONOTONIC, the same in every process of the machine. */
            int n = snprintf(line, sizeof line,
                             "%s: trace: pid %d GPU %d stream %p%s %s %zu B queued %.3f start %.3f end %.3f done %.3f ms\n",
                             ME, (int)getpid(), s->ctx->machine, (void *)s, s->legacy ? " (legacy)" : "",
                             kinds[op->kind], op->bytes, (double)op->enq_ns / 1e6, (double)start / 1e6,
                             (double)end / 1e6, (double)commbench_standin_now_ns() / 1e6);
            /* One write per line; a trace that cannot be written is only a trace. */
            if (n > 0 && (size_t)n < sizeof line)
                (void)!write(g_trace, line, (size_t)n);
        }
        op->end_ns = end;
        op->vend_ns = vend;
        op->done = 1;
        s->clock = end;
        s->vclock = vend;
        for (int i = 0; i < op->ndeps; i++)
            op_release(op->deps[i]);
        op->ndeps = 0;
        free(op->staging);
        op->staging = NULL;
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        op->next = NULL;
        s->pending--;
        op_release(op);
        pthread_cond_broadcast(&G_done);
    }
    for (stream_t **pp = &g_streams; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    op_release(s->last);
    pthread_cond_destroy(&s->cv);
    s->magic = 0;
    free(s);
    pthread_mutex_unlock(&G);
    return NULL;
}

/* Ends a stream (G held): no new work; its worker frees it once idle. */
static void stream_end(stream_t *s)
{
    s->destroyed = 1;
    if (s->capture) {
        say("a stream of GPU %d was destroyed while capturing: the capture ends and its partial graph is freed",
            s->ctx->ordinal);
        capture_end(s);
    }
    if (!s->started) {
        for (stream_t **pp = &g_streams; *pp; pp = &(*pp)->next)
            if (*pp == s) {
                *pp = s->next;
                break;
            }
        op_release(s->last);
        pthread_cond_destroy(&s->cv);
        free(s);
        return;
    }
    pthread_cond_signal(&s->cv);
}

/* Waits (G held) for the work queued so far on every stream of `c`. */
static void ctx_drain(ctx_t *c)
{
    int n = 0;
    for (stream_t *s = g_streams; s; s = s->next)
        n += s->ctx == c && s->last && !s->last->done;
    if (!n)
        return;
    op_t **ops = calloc((size_t)n, sizeof *ops);
    if (!ops)
        return;
    int k = 0;
    for (stream_t *s = g_streams; s; s = s->next)
        if (s->ctx == c && s->last && !s->last->done) {
            s->last->refs++;
            ops[k++] = s->last;
        }
    for (int i = 0; i < k; i++) {
        op_wait(ops[i]);
        op_release(ops[i]);
    }
    free(ops);
}

static void alloc_remove(size_t i);

/* The primary context's reset when its last reference goes: its work
 * finishes, its streams, events and memory go, peer access is off. */
static void ctx_reset(ctx_t *c)
{
    ctx_drain(c);
    for (stream_t *s = g_streams, *next; s; s = next) {
        next = s->next;
        if (s->ctx == c && !s->destroyed)
            stream_end(s);
    }
    c->legacy = NULL;
    for (graph_t *g = g_graphs; g; g = g->next)
        if (g->ctx == c)
            g->ctx = NULL; /* launching it now: CUDA_ERROR_INVALID_CONTEXT */
    for (event_t **pp = &g_events; *pp;) {
        event_t *e = *pp;
        if (e->ctx == c) {
            *pp = e->next;
            op_release(e->rec);
            free(e);
        } else {
            pp = &e->next;
        }
    }
    for (size_t i = g_nallocs; i-- > 0;)
        if (g_allocs[i].ctx == c)
            alloc_remove(i);
    modules_drop(c);
    memset(c->peer, 0, sizeof c->peer);
    for (int i = 0; i < g_nvis; i++)
        g_ctx[i].peer[c->ordinal] = 0;
    c->used = 0;
    c->next_off = 0;
    c->sticky = 0;
    c->active = 0;
}

API CUresult cuStreamCreate(void **ph, unsigned int flags)
{
    NEED_INIT();
    if (!ph || (flags & ~CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    ctx_t *c;
    CUresult rc = current(&c);
    if (!rc) {
        stream_t *s = stream_new(c, flags, 0);
        if (s)
            *ph = s;
        else
            rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuStreamDestroy_v2(void *h)
{
    NEED_INIT();
    if (is_legacy_handle(h))
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&G);
    stream_t *s;
    CUresult rc = stream_of(h, t_cur, &s);
    if (!rc)
        stream_end(s);
    pthread_mutex_unlock(&G);
    return rc;
}

static CUresult wait_stream(stream_t *s)
{
    op_t *last = s->last;
    if (last && !last->done) {
        last->refs++;
        op_wait(last);
        op_release(last);
    }
    return s->ctx->sticky;
}

API CUresult cuStreamSynchronize(void *h)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    stream_t *s;
    CUresult rc = stream_of(h, t_cur, &s);
    if (!rc)
        rc = s->ctx->sticky ? s->ctx->sticky : s->capture ? capture_sync(s, "cuStreamSynchronize") : wait_stream(s);
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuStreamQuery(void *h)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    stream_t *s;
    CUresult rc = stream_of(h, t_cur, &s);
    if (!rc && !(rc = s->ctx->sticky))
        rc = s->capture ? capture_sync(s, "cuStreamQuery") : s->pending ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuCtxSynchronize(void)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    ctx_t *c;
    CUresult rc = current(&c);
    if (!rc)
        rc = capture_forbids("cuCtxSynchronize");
    if (!rc) {
        ctx_drain(c);
        rc = c->sticky;
    }
    pthread_mutex_unlock(&G);
    return rc;
}

/* A stream for work the caller queues: it must belong to the current
 * context (the driver checks pointers against the current context). */
static CUresult work_stream(const void *h, ctx_t **cur, stream_t **out, const char *call)
{
    CUresult rc = current(cur);
    if (rc)
        return rc;
    rc = stream_of(h, *cur, out);
    if (rc)
        return rc;
    if ((*out)->ctx != *cur) {
        say("%s: the stream belongs to GPU %d's context but GPU %d's is current", call, (*out)->ctx->ordinal,
            (*cur)->ordinal);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    return (*out)->ctx->sticky;
}

API CUresult cuLaunchHostFunc(void *h, CUhostFn fn, void *arg)
{
    NEED_INIT();
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    ctx_t *c;
    stream_t *s;
    CUresult rc = work_stream(h, &c, &s, "cuLaunchHostFunc");
    if (!rc) {
        op_t *op = op_new(OP_HOSTFN);
        if (!op)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            op->fn = fn;
            op->arg = arg;
            rc = enqueue(s, op, 0);
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API int commbench_standin_enqueue(void *h, int machine_index, standin_run_fn run, standin_clone_fn clone,
                                  standin_drop_fn drop, void *arg, int *stream_machine, int *captured)
{
    if (captured)
        *captured = 0;
    if (!g_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (stream_machine)
        *stream_machine = -1;
    pthread_mutex_lock(&G);
    ctx_t *c = ctx_of_machine(machine_index);
    stream_t *s = NULL;
    CUresult rc = c ? stream_of(h, c, &s) : CUDA_ERROR_INVALID_DEVICE;
    if (!rc && stream_machine)
        *stream_machine = s->ctx->machine;
    if (!rc && s->ctx != c)
        rc = CUDA_ERROR_INVALID_HANDLE;
    if (!rc) {
        op_t *op = op_new(OP_CUSTOM);
        if (!op)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            op->run = run;
            op->clone = clone;
            op->drop = drop;
            op->arg = arg;
            rc = enqueue_ex(s, op, 0, captured);
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

/* ---------------------------------------------------------------- events */

static event_t *event_of(const void *h)
{
    for (event_t *e = g_events; e; e = e->next)
        if (e == h)
            return e;
    return NULL;
}

API CUresult cuEventCreate(void **ph, unsigned int flags)
{
    NEED_INIT();
    if (!ph || (flags & ~(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
        return CUDA_ERROR_INVALID_VALUE;
    if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    ctx_t *c;
    CUresult rc = current(&c);
    if (!rc) {
        event_t *e = calloc(1, sizeof *e);
        if (!e)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            e->magic = EVENT_MAGIC;
            e->ctx = c;
            e->flags = flags;
            e->next = g_events;
            g_events = e;
            *ph = e;
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuEventDestroy_v2(void *h)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    CUresult rc = CUDA_ERROR_INVALID_HANDLE;
    for (event_t **pp = &g_events; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            event_t *e = *pp;
            *pp = e->next;
            op_release(e->rec);
            free(e);
            rc = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuEventRecord(void *he, void *hs)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    event_t *e = event_of(he);
    stream_t *s = NULL;
    CUresult rc = e ? e->ctx->sticky : CUDA_ERROR_INVALID_HANDLE;
    if (!rc)
        rc = stream_of(hs, is_legacy_handle(hs) ? t_cur : e->ctx, &s);
    if (!rc && s->ctx != e->ctx)
        rc = CUDA_ERROR_INVALID_HANDLE; /* event and stream of one context */
    if (!rc && s->capture)
        rc = capture_unsupported(s, "cuEventRecord: an event record");
    if (!rc) {
        op_t *op = op_new(OP_RECORD);
        rc = op ? enqueue(s, op, 1) : CUDA_ERROR_OUT_OF_MEMORY;
        if (!rc) {
            op_release(e->rec);
            e->rec = op;
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuEventQuery(void *h)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    event_t *e = event_of(h);
    CUresult rc = !e ? CUDA_ERROR_INVALID_HANDLE
                  : e->ctx->sticky ? e->ctx->sticky
                  : e->rec && !e->rec->done ? CUDA_ERROR_NOT_READY
                                            : CUDA_SUCCESS;
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuEventSynchronize(void *h)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    event_t *e = event_of(h);
    CUresult rc = e ? e->ctx->sticky : CUDA_ERROR_INVALID_HANDLE;
    if (!rc && e->rec) {
        op_t *op = e->rec;
        op->refs++;
        op_wait(op);
        op_release(op);
        rc = e->ctx->sticky;
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuEventElapsedTime(float *ms, void *ha, void *hb)
{
    NEED_INIT();
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    event_t *a = event_of(ha), *b = event_of(hb);
    CUresult rc = CUDA_SUCCESS;
    if (!a || !b)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (a->ctx->sticky || b->ctx->sticky)
        rc = a->ctx->sticky ? a->ctx->sticky : b->ctx->sticky;
    else if (!a->rec || !b->rec || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!a->rec->done || !b->rec->done)
        rc = CUDA_ERROR_NOT_READY;
    else
        *ms = (float)((double)(b->rec->vend_ns - a->rec->vend_ns) / 1e6);
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuStreamWaitEvent(void *hs, void *he, unsigned int flags)
{
    NEED_INIT();
    if (flags > 1)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    stream_t *s;
    event_t *e = event_of(he);
    CUresult rc = stream_of(hs, t_cur, &s);
    if (!rc && !e)
        rc = CUDA_ERROR_INVALID_HANDLE;
    if (!rc)
        rc = s->ctx->sticky;
    if (!rc && s->capture)
        rc = capture_unsupported(s, "cuStreamWaitEvent: an event wait");
    if (!rc && e->rec) {
        op_t *op = op_new(OP_WAIT);
        if (!op || op_dep(op, e->rec)) {
            if (op)
                op_discard(op);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            rc = enqueue(s, op, 0);
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

/* ---------------------------------------------------------------- memory */

static int is_device_range(uint64_t p)
{
    return p >= DEV_BASE && p < DEV_BASE + (uint64_t)STANDIN_MAX_GPUS * DEV_SPAN;
}

/* Index of the allocation holding address p, or -1. */
static long alloc_find(uint64_t p)
{
    size_t lo = 0, hi = g_nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g_allocs[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    alloc_t *a = &g_allocs[lo - 1];
    return p - a->base < a->size ? (long)(lo - 1) : -1;
}

static int alloc_insert(const alloc_t *a)
{
    if (g_nallocs == g_capallocs) {
        size_t cap = g_capallocs ? g_capallocs * 2 : 64;
        alloc_t *n = realloc(g_allocs, cap * sizeof *n);
        if (!n)
            return -1;
        g_allocs = n;
        g_capallocs = cap;
    }
    size_t i = g_nallocs;
    while (i > 0 && g_allocs[i - 1].base > a->base) {
        g_allocs[i] = g_allocs[i - 1];
        i--;
    }
    g_allocs[i] = *a;
    g_nallocs++;
    return 0;
}

static void alloc_remove(size_t i)
{
    alloc_t *a = &g_allocs[i];
    munmap(a->host, a->map_size);
    if (a->kind == STANDIN_MEM_DEVICE)
        a->ctx->used -= a->size;
    memmove(&g_allocs[i], &g_allocs[i + 1], (g_nallocs - i - 1) * sizeof *a);
    g_nallocs--;
}

typedef struct memref {
    int kind;
    int machine; /* device memory's GPU, else -1 */
    char *host;
} memref_t;

/* Resolves [p, p + bytes) (G held). */
static CUresult lookup(uint64_t p, size_t bytes, memref_t *m)
{
    if (p == 0)
        return CUDA_ERROR_INVALID_VALUE;
    long i = alloc_find(p);
    if (i >= 0) {
        alloc_t *a = &g_allocs[i];
        if (bytes > a->size - (p - a->base))
            return CUDA_ERROR_INVALID_VALUE;
        m->kind = a->kind;
        m->machine = a->kind == STANDIN_MEM_DEVICE ? a->machine : -1;
        m->host = a->host + (p - a->base);
        return CUDA_SUCCESS;
    }
    if (is_device_range(p))
        return CUDA_ERROR_INVALID_VALUE;
    if (bytes > UINT64_MAX - p)
        return CUDA_ERROR_INVALID_VALUE;
    m->kind = STANDIN_MEM_HOST;
    m->machine = -1;
    m->host = (char *)(uintptr_t)p;
    return CUDA_SUCCESS;
}

static int on_device(const memref_t *m)
{
    return m->kind == STANDIN_MEM_DEVICE || m->kind == STANDIN_MEM_MANAGED;
}

API int commbench_standin_resolve(uint64_t ptr, size_t bytes, void **host, int *kind, int *machine_index)
{
    if (!g_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&G);
    memref_t m;
    CUresult rc = lookup(ptr, bytes, &m);
    if (!rc) {
        *host = m.host;
        *kind = m.kind;
        *machine_index = m.machine;
    }
    pthread_mutex_unlock(&G);
    return rc;
}

static void *map_memory(size_t bytes, size_t *map_size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (bytes + page - 1) / page * page;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    *map_size = n;
    return p;
}

/* A free device address range of `bytes` on c's GPU (G held), next fit
 * from the cursor so that freed addresses are not reused at once. */
static int device_range(ctx_t *c, size_t bytes, uint64_t *out)
{
    uint64_t span_base = DEV_BASE + (uint64_t)c->machine * DEV_SPAN;
    uint64_t align = bytes >= (2u << 20) ? (2u << 20) : 4096;
    uint64_t need = ((uint64_t)bytes + 4095) / 4096 * 4096 + DEV_GAP;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t off = pass == 0 ? c->next_off : 0;
        for (;;) {
            off = (off + align - 1) / align * align;
            if (off + need > DEV_SPAN)
                break;
            uint64_t lo = span_base + off, hi = lo + need;
            long clash = -1;
            for (size_t i = 0; i < g_nallocs; i++) {
                uint64_t b = g_allocs[i].base, e = b + g_allocs[i].size + DEV_GAP;
                if (b < hi && lo < e) {
                    clash = (long)i;
                    break;
                }
            }
            if (clash < 0) {
                *out = lo;
                c->next_off = off + need;
                return 0;
            }
            off = g_allocs[clash].base + g_allocs[clash].size + DEV_GAP - span_base;
        }
    }
    return -1;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    NEED_INIT();
    if (!dptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    ctx_t *c;
    CUresult rc = current(&c);
    if (!rc)
        rc = capture_forbids("cuMemAlloc");
    if (!rc) {
        const struct standin_gpu *g = &g_m.gpu[c->machine];
        alloc_t a = {0};
        if (bytes > g->memory_bytes - c->used || device_range(c, bytes, &a.base))
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else if (!(a.host = map_memory(bytes, &a.map_size)))
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            a.size = bytes;
            a.kind = STANDIN_MEM_DEVICE;
            a.ctx = c;
            a.machine = c->machine;
            if (alloc_insert(&a)) {
                munmap(a.host, a.map_size);
                rc = CUDA_ERROR_OUT_OF_MEMORY;
            } else {
                c->used += bytes;
                *dptr = a.base;
            }
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

static CUresult host_alloc(void **out, size_t bytes, int kind, const char *call)
{
    ctx_t *c;
    CUresult rc = current(&c);
    if (!rc)
        rc = capture_forbids(call);
    if (rc)
        return rc;
    alloc_t a = {0};
    if (!(a.host = map_memory(bytes, &a.map_size)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    a.base = (uint64_t)(uintptr_t)a.host;
    a.size = bytes;
    a.kind = kind;
    a.ctx = c;
    a.machine = -1;
    if (alloc_insert(&a)) {
        munmap(a.host, a.map_size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = a.host;
    return CUDA_SUCCESS;
}

API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
    NEED_INIT();
    if (!dptr || bytes == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    void *p = NULL;
    CUresult rc = host_alloc(&p, bytes, STANDIN_MEM_MANAGED, "cuMemAllocManaged");
    if (!rc)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
    NEED_INIT();
    if (!pp || bytes == 0 || (flags & ~CU_MEMHOSTALLOC_ALL))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    CUresult rc = host_alloc(pp, bytes, STANDIN_MEM_PINNED, "cuMemHostAlloc");
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuMemAllocHost_v2(void **pp, size_t bytes)
{
    return cuMemHostAlloc(pp, bytes, 0);
}

/* Frees the allocation starting at p of one of `kinds` (a bit mask);
 * like cudaFree, waits for the owning context's queued work first. */
static CUresult free_at(uint64_t p, unsigned kinds, const char *call)
{
    pthread_mutex_lock(&G);
    long i = p ? alloc_find(p) : -1;
    CUresult rc = CUDA_SUCCESS;
    if (i < 0 || g_allocs[i].base != p || !((1u << g_allocs[i].kind) & kinds))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (!g_allocs[i].ctx->active)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (g_allocs[i].ctx->sticky)
        rc = g_allocs[i].ctx->sticky;
    if (!rc)
        rc = capture_forbids(call);
    if (!rc) {
        ctx_drain(g_allocs[i].ctx);
        i = alloc_find(p); /* the table may have changed while waiting */
        if (i >= 0 && g_allocs[i].base == p)
            alloc_remove((size_t)i);
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuMemFree_v2(CUdeviceptr p)
{
    NEED_INIT();
    if (p == 0)
        return CUDA_SUCCESS;
    return free_at(p, (1u << STANDIN_MEM_DEVICE) | (1u << STANDIN_MEM_MANAGED), "cuMemFree");
}

API CUresult cuMemFreeHost(void *p)
{
    NEED_INIT();
    return free_at((uint64_t)(uintptr_t)p, 1u << STANDIN_MEM_PINNED, "cuMemFreeHost");
}

API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    NEED_INIT();
    if (!free_bytes || !total)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    ctx_t *c;
    CUresult rc = current(&c);
    if (!rc) {
        *total = (size_t)g_m.gpu[c->machine].memory_bytes;
        *free_bytes = (size_t)(g_m.gpu[c->machine].memory_bytes - c->used);
    }
    pthread_mutex_unlock(&G);
    return rc;
}

/* ----------------------------------------------------------------- copies */

/* Whether a copy (or copy kernel) moving `bytes` is the one
 * COMMBENCH_STANDIN_CORRUPT names: copies of 4 KiB or more are counted in
 * the order queued (G held). */
static int counts_as_corrupted(size_t bytes)
{
    if (bytes < 4096)
        return 0;
    return ++g_copies == g_corrupt_at;
}

/* Writes one wrong 32-bit word in the middle of `dst` (`bytes` long). */
static void corrupt_middle(void *dst, size_t bytes)
{
    uint32_t *w = (uint32_t *)((char *)dst + (bytes / 2 & ~(size_t)3));
    *w = ~*w;
}

/* Rate of a copy between two GPUs queued on `s`: the link's when the
 * stream's context has peer access to the other GPU, else staged
 * through the host. */
static double peer_rate(stream_t *s, int a, int b)
{
    ctx_t *ca = ctx_of_machine(a), *cb = ctx_of_machine(b);
    int enabled = 0;
    if (ca && cb && s->ctx == ca)
        enabled = ca->peer[cb->ordinal];
    else if (ca && cb && s->ctx == cb)
        enabled = cb->peer[ca->ordinal];
    if (!enabled || link_of(a, b) == STANDIN_LINK_NONE)
        return g_m.staged_peer;
    return commbench_standin_pair_rate(a, b);
}

static double rate_of(stream_t *s, const memref_t *src, const memref_t *dst)
{
    int sd = on_device(src), dd = on_device(dst);
    if (!sd && dd)
        return src->kind == STANDIN_MEM_PINNED ? g_m.h2d_pinned : g_m.h2d_pageable;
    if (sd && !dd)
        return dst->kind == STANDIN_MEM_PINNED ? g_m.d2h_pinned : g_m.d2h_pageable;
    if (!sd && !dd)
        return g_m.h2d_pageable;
    int a = src->machine >= 0 ? src->machine : s->ctx->machine;
    int b = dst->machine >= 0 ? dst->machine : s->ctx->machine;
    return a == b ? g_m.d2d : peer_rate(s, a, b);
}

enum dir { DIR_H2D, DIR_D2H, DIR_D2D, DIR_ANY };

/* How the host waits for a copy: as the stream's own work, after the
 * legacy stream's prior work with the source staged, or until it lands. */
enum sync { SYNC_NONE, SYNC_STAGE, SYNC_WAIT };

/* One copy: checks both ranges against `dir`, picks the rate, queues it
 * on `s` and waits as the driver would for the calling API (G held on
 * entry and exit; the staging copy runs without it). */
static CUresult copy(stream_t *s, uint64_t dst, uint64_t src, size_t bytes, enum dir dir, int async)
{
    memref_t d, m;
    CUresult rc;
    if ((rc = lookup(dst, bytes, &d)) || (rc = lookup(src, bytes, &m)))
        return rc;
    if ((dir == DIR_H2D && (!on_device(&d) || on_device(&m))) || (dir == DIR_D2H && (on_device(&d) || !on_device(&m))) ||
        (dir == DIR_D2D && (!on_device(&d) || !on_device(&m))))
        return CUDA_ERROR_INVALID_VALUE;
    if (bytes == 0)
        return CUDA_SUCCESS;
    enum sync how;
    int from_pageable = !on_device(&m) && m.kind == STANDIN_MEM_HOST && on_device(&d);
    int to_pageable = on_device(&m) && !on_device(&d) && d.kind == STANDIN_MEM_HOST;
    int host_only = !on_device(&m) && !on_device(&d);
    if (async) {
        /* From pageable memory the source is staged at the call; into
         * pageable memory the call returns once the copy is done. */
        how = from_pageable ? SYNC_STAGE : (to_pageable || host_only) ? SYNC_WAIT : SYNC_NONE;
    } else if (from_pageable) {
        how = SYNC_STAGE;
        wait_stream(s); /* "a stream sync is performed before the copy is initiated" */
        if (s->ctx->sticky)
            return s->ctx->sticky;
    } else if (on_device(&m) && on_device(&d)) {
        how = SYNC_NONE; /* device to device: no host synchronisation */
    } else {
        how = SYNC_WAIT; /* pinned to device, device to host: synchronous */
    }
    if (how == SYNC_STAGE && bytes > STAGE_MAX)
        how = SYNC_WAIT; /* bounded staging: the call returns as the last chunk is staged */
    if (s->capture && !s->ctx->sticky && how != SYNC_NONE)
        return capture_unsupported(s, "a copy involving pageable host memory (staged, or waited for)");
    op_t *op = op_new(OP_COPY);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->dst = d.host;
    op->src = m.host;
    op->bytes = bytes;
    op->rate = rate_of(s, &m, &d);
    op->corrupt = counts_as_corrupted(bytes);
    if (how == SYNC_STAGE) {
        pthread_mutex_unlock(&G);
        void *stage = malloc(bytes);
        if (stage)
            memcpy(stage, m.host, bytes);
        pthread_mutex_lock(&G);
        if (!stage) {
            op_discard(op);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        op->staging = stage;
        op->src = stage;
    }
    rc = enqueue(s, op, how == SYNC_WAIT);
    if (!rc && how == SYNC_WAIT) {
        op_wait(op);
        op_release(op);
        rc = s->ctx->sticky;
    }
    return rc;
}

static CUresult copy_api(const void *h, uint64_t dst, uint64_t src, size_t bytes, enum dir dir, int async,
                         const char *call)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    ctx_t *c;
    stream_t *s;
    CUresult rc = work_stream(async ? h : NULL, &c, &s, call);
    if (!rc && !async)
        rc = capture_forbids(call);
    if (!rc)
        rc = copy(s, dst, src, bytes, dir, async);
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
    return copy_api(NULL, dst, (uint64_t)(uintptr_t)src, bytes, DIR_H2D, 0, "cuMemcpyHtoD");
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
    return copy_api(NULL, (uint64_t)(uintptr_t)dst, src, bytes, DIR_D2H, 0, "cuMemcpyDtoH");
}

API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
    return copy_api(NULL, dst, src, bytes, DIR_D2D, 0, "cuMemcpyDtoD");
}

API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
    return copy_api(NULL, dst, src, bytes, DIR_ANY, 0, "cuMemcpy");
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, void *h)
{
    return copy_api(h, dst, (uint64_t)(uintptr_t)src, bytes, DIR_H2D, 1, "cuMemcpyHtoDAsync");
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, void *h)
{
    return copy_api(h, (uint64_t)(uintptr_t)dst, src, bytes, DIR_D2H, 1, "cuMemcpyDtoHAsync");
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, void *h)
{
    return copy_api(h, dst, src, bytes, DIR_D2D, 1, "cuMemcpyDtoDAsync");
}

API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, void *h)
{
    return copy_api(h, dst, src, bytes, DIR_ANY, 1, "cuMemcpyAsync");
}

API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, void *dst_ctx, CUdeviceptr src, void *src_ctx, size_t bytes, void *h)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    ctx_t *c, *dc = ctx_handle(dst_ctx), *sc = ctx_handle(src_ctx);
    stream_t *s;
    memref_t d, m;
    CUresult rc = work_stream(h, &c, &s, "cuMemcpyPeerAsync");
    if (!rc && (!dc || !sc || !dc->active || !sc->active))
        rc = CUDA_ERROR_INVALID_CONTEXT;
    if (!rc && ((rc = lookup(dst, bytes, &d)) == 0) && ((rc = lookup(src, bytes, &m)) == 0)) {
        /* Each pointer must be device memory of the context named with it. */
        if ((d.kind == STANDIN_MEM_DEVICE && d.machine != dc->machine) ||
            (m.kind == STANDIN_MEM_DEVICE && m.machine != sc->machine) || !on_device(&d) || !on_device(&m))
            rc = CUDA_ERROR_INVALID_VALUE;
    }
    if (!rc)
        rc = copy(s, dst, src, bytes, DIR_D2D, 1);
    pthread_mutex_unlock(&G);
    return rc;
}

static CUresult memset_api(const void *h, CUdeviceptr dst, unsigned char value, size_t n, int async, const char *call)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    ctx_t *c;
    stream_t *s;
    memref_t d;
    CUresult rc = work_stream(async ? h : NULL, &c, &s, call);
    if (!rc && !async)
        rc = capture_forbids(call);
    if (!rc)
        rc = lookup(dst, n, &d);
    if (!rc && d.kind == STANDIN_MEM_HOST)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (!rc && n > 0) {
        op_t *op = op_new(OP_MEMSET);
        if (!op)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            op->dst = d.host;
            op->bytes = n;
            op->value = value;
            op->rate = g_m.d2d;
            /* Synchronous memsets return at once on device memory, and
             * wait for the fill on managed and pinned memory. */
            int wait = !async && d.kind != STANDIN_MEM_DEVICE;
            rc = enqueue(s, op, wait);
            if (!rc && wait) {
                op_wait(op);
                op_release(op);
                rc = s->ctx->sticky;
            }
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n)
{
    return memset_api(NULL, dst, value, n, 0, "cuMemsetD8");
}

API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, void *h)
{
    return memset_api(h, dst, value, n, 1, "cuMemsetD8Async");
}

/* ---------------------------------------------------------------- kernels */

/* The kernels of src/gpu/kernels.cu the stand-in knows, by the names their
 * module defines; a launch runs the same semantics on host memory,
 * reading each parameter as the C signature types it. */
enum kernel_id {
    K_COPY_SIMPLE,
    K_COPY_STRIDED,
    K_COPY_SPLIT_WARP,
    K_POINTER_CHASE,
    K_FILL_PATTERN,
    K_COUNT_MISMATCHES,
    K_CLEAR_WARP_PARITY,
    K_COPY_GRID_STRIDE,
    K_COUNT
};

static const char *const KERNEL_NAMES[K_COUNT] = {
    "commbench_copy_simple",       "commbench_copy_strided",     "commbench_copy_split_warp",
    "commbench_pointer_chase",     "commbench_fill_pattern",     "commbench_count_mismatches",
    "commbench_clear_warp_parity", "commbench_copy_grid_stride",
};

#define MODULE_MAGIC 0x4d4f444cu
#define FUNC_MAGIC 0x46554e43u

typedef struct module module_t;

typedef struct func {
    uint32_t magic; /* FUNC_MAGIC once cuModuleGetFunction gave it out */
    int kernel;
    module_t *mod;
} func_t;

struct module {
    uint32_t magic;
    ctx_t *ctx;
    unsigned defined; /* bit k: the image defines KERNEL_NAMES[k] */
    func_t fn[K_COUNT];
    module_t *next;
};

static module_t *g_modules;

/* What one launch runs: its parameters as read at the launch, their host
 * addresses, and its modelled duration. */
struct kernel_run {
    int kernel;
    uint64_t threads_launched; /* grid x block (1-D) */
    uint64_t grid;
    char *host[3];   /* resolved pointers, by the kernel's own order */
    uint64_t ptr[3]; /* the same as the kernel got them */
    uint64_t loops, n, per_thread;
    unsigned threads, len, accesses, target;
    int odd;
    uint64_t elements; /* 16-byte elements a copy covers per loop */
    size_t moved;      /* bytes a copy moves per loop (for COMMBENCH_STANDIN_CORRUPT) */
    int corrupt;
    int64_t ns;       /* modelled duration (a pointer chase's is counted when it runs) */
    CUresult fault;   /* a pointer outside what the kernel may touch: the context faults when it runs */
    char why[256];
};

/* The known kernel named by the `len` bytes at `name`, or -1. */
static int kernel_named(const char *name, size_t len)
{
    for (int k = 0; k < K_COUNT; k++)
        if (strlen(KERNEL_NAMES[k]) == len && memcmp(KERNEL_NAMES[k], name, len) == 0)
            return k;
    return -1;
}

/* The known kernels an ELF CUBIN defines: the function symbols of its
 * symbol tables. -1 when the image is not a 64-bit ELF. */
static long long elf_defined(const unsigned char *img)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff == 0)
        return -1;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    unsigned defined = 0;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        const char *names = (const char *)img + strs->sh_offset;
        const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
        size_t count = sh[i].sh_size / sizeof *sym;
        for (size_t j = 0; j < count; j++) {
            if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC || sym[j].st_name >= strs->sh_size)
                continue;
            const char *name = names + sym[j].st_name;
            int k = kernel_named(name, strnlen(name, strs->sh_size - sym[j].st_name));
            if (k >= 0)
                defined |= 1u << k;
        }
    }
    return defined;
}

/* The known kernels a PTX text defines: its `.entry NAME`s. -1 when the
 * text is not PTX (no `.version` and `.target`). */
static long long ptx_defined(const char *text)
{
    if (!strstr(text, ".version") || !strstr(text, ".target"))
        return -1;
    unsigned defined = 0;
    for (const char *p = strstr(text, ".entry"); p; p = strstr(p, ".entry")) {
        p += 6;
        if (!isspace((unsigned char)*p))
            continue;
        while (isspace((unsigned char)*p))
            p++;
        size_t len = 0;
        while (isalnum((unsigned char)p[len]) || p[len] == '_' || p[len] == '$')
            len++;
        int k = kernel_named(p, len);
        if (k >= 0)
            defined |= 1u << k;
        p += len;
    }
    return defined;
}

API CUresult cuModuleLoadData(module_t **out, const void *image)
{
    NEED_INIT();
    if (!out || !image)
        return CUDA_ERROR_INVALID_VALUE;
    /* strncmp stops at a PTX text's end, however short. */
    long long defined = strncmp(image, ELFMAG, SELFMAG) == 0 ? elf_defined(image) : ptx_defined(image);
    if (defined < 0)
        return CUDA_ERROR_INVALID_IMAGE;
    pthread_mutex_lock(&G);
    ctx_t *c;
    CUresult rc = current(&c);
    module_t *m = NULL;
    if (!rc && !(m = calloc(1, sizeof *m)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (!rc) {
        m->magic = MODULE_MAGIC;
        m->ctx = c;
        m->defined = (unsigned)defined;
        m->next = g_modules;
        g_modules = m;
        *out = m;
    }
    pthread_mutex_unlock(&G);
    return rc;
}

/* A reset context's modules go with it (G held). */
static void modules_drop(ctx_t *c)
{
    for (module_t **pp = &g_modules; *pp;) {
        module_t *m = *pp;
        if (m->ctx == c) {
            *pp = m->next;
            m->magic = 0;
            free(m);
        } else {
            pp = &m->next;
        }
    }
}

static module_t *module_of(const void *h)
{
    for (module_t *m = g_modules; m; m = m->next)
        if (m == h && m->magic == MODULE_MAGIC)
            return m;
    return NULL;
}

API CUresult cuModuleUnload(module_t *h)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    CUresult rc = CUDA_ERROR_INVALID_HANDLE;
    for (module_t **pp = &g_modules; *pp; pp = &(*pp)->next)
        if (*pp == h && h->magic == MODULE_MAGIC) {
            *pp = h->next;
            h->magic = 0;
            free(h);
            rc = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuModuleGetFunction(func_t **out, module_t *h, const char *name)
{
    NEED_INIT();
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    module_t *m = module_of(h);
    CUresult rc = m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    int k = kernel_named(name, strlen(name));
    if (!rc && (k < 0 || !(m->defined & (1u << k))))
        rc = CUDA_ERROR_NOT_FOUND;
    if (!rc) {
        m->fn[k] = (func_t){.magic = FUNC_MAGIC, .kernel = k, .mod = m};
        *out = &m->fn[k];
    }
    pthread_mutex_unlock(&G);
    return rc;
}

static func_t *func_of(const void *h)
{
    for (module_t *m = g_modules; m; m = m->next)
        for (int k = 0; k < K_COUNT; k++)
            if (h == &m->fn[k] && m->fn[k].magic == FUNC_MAGIC)
                return &m->fn[k];
    return NULL;
}

/* Checks that the kernel may touch [p, p + bytes) from a stream of `s`'s
 * GPU: memory the stand-in allocated (device, managed or pinned), wholly
 * inside one allocation, another GPU's only with peer access on. Else
 * notes the fault (CUDA_ERROR_ILLEGAL_ADDRESS, raised when the kernel
 * runs) and returns -1. G held. */
static int kernel_range(stream_t *s, kernel_run_t *k, uint64_t p, size_t bytes, const char *what, memref_t *m)
{
    if (bytes == 0)
        return 0;
    CUresult rc = lookup(p, bytes, m);
    const char *why = NULL;
    if (rc || m->kind == STANDIN_MEM_HOST)
        why = "outside every allocation of this process (or past its end)";
    else if (m->kind == STANDIN_MEM_DEVICE && m->machine != s->ctx->machine) {
        ctx_t *o = ctx_of_machine(m->machine);
        if (!o || !s->ctx->peer[o->ordinal])
            why = "on another GPU without peer access";
    }
    if (!why)
        return 0;
    if (!k->fault) {
        k->fault = CUDA_ERROR_ILLEGAL_ADDRESS;
        snprintf(k->why, sizeof k->why, "%s's %s [0x%llx, +%zu) is %s", KERNEL_NAMES[k->kernel], what,
                 (unsigned long long)p, bytes, why);
    }
    return -1;
}

static int64_t scaled(double ns)
{
    return (int64_t)(ns * g_scale + 0.5);
}

/* Elements of the first n (0-based indices) whose warp is odd. */
static uint64_t odd_warp_elements(uint64_t n)
{
    return n / 64 * 32 + (n % 64 > 32 ? n % 64 - 32 : 0);
}

/* Reads the launch's parameters, checks every range it touches, and
 * models its duration (G held). */
static void kernel_setup(stream_t *s, kernel_run_t *k, void **params)
{
#define P64(i) (*(const uint64_t *)params[i])
#define P32(i) (*(const unsigned *)params[i])
    memref_t a = {0}, b = {0}, c = {0};
    const uint64_t T = k->threads_launched;
    switch (k->kernel) {
    case K_COPY_SIMPLE:
    case K_COPY_SPLIT_WARP: {
        k->loops = P64(0);
        k->ptr[0] = P64(1);
        k->ptr[1] = P64(2);
        k->elements = T;
        k->moved = (size_t)(T * 16);
        int split = k->kernel == K_COPY_SPLIT_WARP;
        int bad = kernel_range(s, k, k->ptr[0], k->moved, split ? "a" : "dst", &a) |
                  kernel_range(s, k, k->ptr[1], k->moved, split ? "b" : "src", &b);
        if (bad)
            break;
        k->host[0] = a.host;
        k->host[1] = b.host;
        double f = g_m.sm_copy_factor;
        if (!split) {
            k->ns = scaled((double)k->loops * (double)k->moved / (rate_of(s, &b, &a) * f));
        } else {
            /* Both ways at once: each direction's bytes at its own rate. */
            double odd = (double)odd_warp_elements(T) * 16, even = (double)k->moved - odd;
            double t1 = odd / (rate_of(s, &b, &a) * f), t2 = even / (rate_of(s, &a, &b) * f);
            k->ns = scaled((double)k->loops * (t1 > t2 ? t1 : t2));
        }
        break;
    }
    case K_COPY_STRIDED: {
        k->threads = P32(0);
        k->loops = P64(1);
        k->ptr[0] = P64(2);
        k->ptr[1] = P64(3);
        k->per_thread = P64(4);
        uint64_t active = T < k->threads ? T : k->threads;
        k->elements = active * k->per_thread;
        k->moved = (size_t)(k->elements * 16);
        /* The highest element touched, plus one. */
        uint64_t span = active && k->per_thread ? (active - 1) + (k->per_thread - 1) * k->threads + 1 : 0;
        if (kernel_range(s, k, k->ptr[0], (size_t)(span * 16), "dst", &a) |
            kernel_range(s, k, k->ptr[1], (size_t)(span * 16), "src", &b))
            break;
        k->host[0] = a.host;
        k->host[1] = b.host;
        k->n = span;
        if (span)
            k->ns = scaled((double)k->loops * (double)k->moved / (rate_of(s, &b, &a) * g_m.sm_copy_factor));
        break;
    }
    case K_COPY_GRID_STRIDE: {
        /* One pass over n elements, whatever the grid (a grid-stride loop). */
        k->ptr[0] = P64(0);
        k->ptr[1] = P64(1);
        k->n = P64(2);
        k->loops = 1;
        k->elements = k->n;
        k->moved = k->n > SIZE_MAX / 16 ? SIZE_MAX : (size_t)k->n * 16;
        if (kernel_range(s, k, k->ptr[0], k->moved, "dst", &a) | kernel_range(s, k, k->ptr[1], k->moved, "src", &b))
            break;
        k->host[0] = a.host;
        k->host[1] = b.host;
        if (k->moved)
            k->ns = scaled((double)k->moved / (rate_of(s, &b, &a) * g_m.sm_copy_factor));
        break;
    }
    case K_POINTER_CHASE:
        k->ptr[0] = P64(0);
        k->accesses = P32(1);
        k->target = P32(2);
        break; /* followed when it runs */
    case K_FILL_PATTERN:
    case K_COUNT_MISMATCHES: {
        k->ptr[0] = P64(0);
        k->ptr[1] = P64(1);
        k->n = P64(2);
        k->len = P32(3);
        if (k->n && !k->len) {
            k->fault = CUDA_ERROR_LAUNCH_FAILED;
            snprintf(k->why, sizeof k->why, "%s with pattern_len 0 divides by zero", KERNEL_NAMES[k->kernel]);
            break;
        }
        uint64_t used = k->n < k->len ? k->n : k->len;
        int bad = kernel_range(s, k, k->ptr[0], (size_t)(k->n * 4), "buf", &a) |
                  kernel_range(s, k, k->ptr[1], (size_t)(used * 4), "pattern", &b);
        if (k->kernel == K_COUNT_MISMATCHES) {
            k->ptr[2] = P64(4);
            bad |= kernel_range(s, k, k->ptr[2], k->n ? 8 : 0, "wrong", &c);
            k->host[2] = c.host;
        }
        if (bad)
            break;
        k->host[0] = a.host;
        k->host[1] = b.host;
        k->ns = scaled((double)k->n * 4 / g_m.d2d);
        break;
    }
    case K_CLEAR_WARP_PARITY:
        k->ptr[0] = P64(0);
        k->odd = *(const int *)params[1];
        k->elements = T;
        if (kernel_range(s, k, k->ptr[0], (size_t)(T * 16), "buf", &a))
            break;
        k->host[0] = a.host;
        k->ns = scaled((double)T * 16 / g_m.d2d);
        break;
    }
#undef P64
#undef P32
}

/* When the kernel reaches the GPU (G held): a fault noted at the launch
 * sticks to the context now; a pointer chase follows its chain here,
 * checking every load. Returns the modelled duration. */
static int64_t kernel_prepare(stream_t *s, op_t *op)
{
    kernel_run_t *k = op->kernel;
    if (k->kernel == K_POINTER_CHASE && !k->fault && k->target < k->grid) {
        memref_t m;
        uint64_t p = k->ptr[0];
        if (kernel_range(s, k, p, 8, "start", &m) == 0) {
            double lat = m.kind == STANDIN_MEM_PINNED ? g_m.host_access_ns
                         : m.kind == STANDIN_MEM_DEVICE && m.machine != s->ctx->machine ? g_m.peer_access_ns
                                                                                          : g_m.device_access_ns;
            for (unsigned i = 0; i < k->accesses && !k->fault; i++) {
                memref_t at;
                if (kernel_range(s, k, p, 8, "chain", &at) == 0)
                    memcpy(&p, at.host, 8);
            }
            if (!k->fault && p == 0) {
                k->fault = CUDA_ERROR_LAUNCH_FAILED;
                snprintf(k->why, sizeof k->why, "%s reached a null pointer and trapped", KERNEL_NAMES[k->kernel]);
            }
            k->ns = scaled((double)k->accesses * lat);
        }
    }
    if (k->fault) {
        s->ctx->sticky = k->fault;
        say("GPU %d: a kernel faulted: %s; the context now returns %s to every call", s->ctx->ordinal, k->why,
            commbench_standin_cuda_error_name(k->fault));
        return 0;
    }
    return k->ns;
}

/* Runs the kernel's effect on memory (G not held). */
static void kernel_run(op_t *op)
{
    kernel_run_t *k = op->kernel;
    if (k->kernel != K_CLEAR_WARP_PARITY && k->kernel != K_FILL_PATTERN && k->kernel != K_COUNT_MISMATCHES &&
        k->loops == 0)
        return;
    switch (k->kernel) {
    case K_COPY_SIMPLE:
        memmove(k->host[0], k->host[1], k->moved);
        if (k->corrupt)
            corrupt_middle(k->host[0], k->moved);
        break;
    case K_COPY_GRID_STRIDE:
        if (k->moved) {
            memmove(k->host[0], k->host[1], k->moved);
            if (k->corrupt)
                corrupt_middle(k->host[0], k->moved);
        }
        break;
    case K_COPY_STRIDED: {
        uint64_t active = k->threads_launched < k->threads ? k->threads_launched : k->threads;
        if (active == k->threads) {
            memmove(k->host[0], k->host[1], k->moved); /* every element below the span */
        } else {
            for (uint64_t j = 0; j < k->per_thread; j++)
                memmove(k->host[0] + j * k->threads * 16, k->host[1] + j * k->threads * 16, active * 16);
        }
        if (k->corrupt)
            corrupt_middle(k->host[0], (size_t)(k->n * 16));
        break;
    }
    case K_COPY_SPLIT_WARP:
        for (uint64_t w = 0; w * 32 < k->elements; w++) {
            uint64_t first = w * 32, count = k->elements - first < 32 ? k->elements - first : 32;
            char *a = k->host[0] + first * 16, *b = k->host[1] + first * 16;
            if (w & 1)
                memmove(a, b, count * 16);
            else
                memmove(b, a, count * 16);
        }
        if (k->corrupt)
            corrupt_middle(k->host[0], k->moved);
        break;
    case K_FILL_PATTERN: {
        uint32_t *buf = (uint32_t *)k->host[0];
        const uint32_t *pat = (const uint32_t *)k->host[1];
        for (uint64_t i = 0; i < k->n; i++)
            buf[i] = pat[i % k->len];
        break;
    }
    case K_COUNT_MISMATCHES: {
        const uint32_t *buf = (const uint32_t *)k->host[0];
        const uint32_t *pat = (const uint32_t *)k->host[1];
        uint64_t wrong = 0;
        for (uint64_t i = 0; i < k->n; i++)
            wrong += buf[i] != pat[i % k->len];
        if (k->n) {
            uint64_t have;
            memcpy(&have, k->host[2], 8);
            have += wrong;
            memcpy(k->host[2], &have, 8);
        }
        break;
    }
    case K_CLEAR_WARP_PARITY:
        for (uint64_t w = 0; w * 32 < k->elements; w++)
            if ((int)(w & 1) == (k->odd != 0)) {
                uint64_t first = w * 32, count = k->elements - first < 32 ? k->elements - first : 32;
                memset(k->host[0] + first * 16, 0, count * 16);
            }
        break;
    default: /* the pointer chase only reads */
        break;
    }
}

API CUresult cuLaunchKernel(func_t *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, void *h, void **params, void **extra)
{
    NEED_INIT();
    if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024 || bz > 64 || gx > INT_MAX ||
        gy > 65535 || gz > 65535 || shared > 49152)
        return CUDA_ERROR_INVALID_VALUE;
    if (gy != 1 || gz != 1 || by != 1 || bz != 1 || extra) {
        say("cuLaunchKernel: the stand-in runs commbench's kernels on 1-D grids and blocks with kernelParams only");
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&G);
    ctx_t *c;
    stream_t *s;
    func_t *fn = func_of(f);
    CUresult rc = fn ? work_stream(h, &c, &s, "cuLaunchKernel") : CUDA_ERROR_INVALID_HANDLE;
    if (!rc && fn->mod->ctx != c) {
        say("cuLaunchKernel: %s belongs to GPU %d's module but GPU %d's context is current", KERNEL_NAMES[fn->kernel],
            fn->mod->ctx->ordinal, c->ordinal);
        rc = CUDA_ERROR_INVALID_HANDLE;
    }
    if (!rc && !params)
        rc = CUDA_ERROR_INVALID_VALUE;
    kernel_run_t *k = NULL;
    op_t *op = NULL;
    if (!rc && (!(k = calloc(1, sizeof *k)) || !(op = op_new(OP_KERNEL)))) {
        free(k);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (!rc) {
        k->kernel = fn->kernel;
        k->grid = gx;
        k->threads_launched = (uint64_t)gx * bx;
        kernel_setup(s, k, params);
        int copies = k->kernel == K_COPY_SIMPLE || k->kernel == K_COPY_STRIDED || k->kernel == K_COPY_SPLIT_WARP ||
                     k->kernel == K_COPY_GRID_STRIDE;
        if (copies && !k->fault && k->loops > 0)
            k->corrupt = counts_as_corrupted(k->moved);
        op->kernel = k;
        op->bytes = k->moved;
        rc = enqueue(s, op, 0);
    }
    pthread_mutex_unlock(&G);
    return rc;
}

/* -------------------------------------------------------------- occupancy */

/* Blocks of `block` threads with `smem` bytes of dynamic shared memory each
 * that one SM of `g` holds at once: as many as its 2048 threads (whole
 * warps), its 32 block slots and its shared memory (96 KiB before compute
 * capability 8, 164 KiB on 8.x, 228 KiB from 9) allow. commbench's kernels
 * have no static shared memory, and registers are not modelled (taken never
 * to be the limit). 0 when such a block cannot run at all. */
static int blocks_per_sm(const struct standin_gpu *g, int block, size_t smem)
{
    if (block <= 0 || block > 1024 || smem > 49152)
        return 0;
    size_t shared = g->cc_major >= 9 ? 233472 : g->cc_major >= 8 ? 167936 : 98304;
    int n = 2048 / ((block + 31) / 32 * 32);
    if (n > 32)
        n = 32;
    if (smem && (size_t)n > shared / smem)
        n = (int)(shared / smem);
    return n;
}

typedef size_t (*block_to_smem_fn)(int block);

/* The launch that fills the GPU with `f`'s blocks: the block size (up to
 * `limit`, 0 for the device's 1024) keeping the most threads resident per
 * SM, trying whole warps from the largest down and stopping at full
 * occupancy, and the blocks all SMs hold at that size. Dynamic shared
 * memory is `smem_of(block)` when given, else `smem`. */
API CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block_size, func_t *f, block_to_smem_fn smem_of,
                                              size_t smem, int limit)
{
    NEED_INIT();
    if (!min_grid || !block_size || limit < 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    func_t *fn = func_of(f);
    const struct standin_gpu *g = fn ? &g_m.gpu[fn->mod->ctx->machine] : NULL;
    pthread_mutex_unlock(&G);
    if (!g)
        return CUDA_ERROR_INVALID_HANDLE;
    int top = limit == 0 || limit > 1024 ? 1024 : limit;
    int best = 0, best_blocks = 0, best_threads = 0;
    /* The callback runs without the lock: it may call back into the driver. */
    for (int aligned = (top + 31) / 32 * 32; aligned > 0 && best_threads < 2048; aligned -= 32) {
        int b = aligned < top ? aligned : top;
        int blocks = blocks_per_sm(g, b, smem_of ? smem_of(b) : smem);
        if (blocks * b > best_threads) {
            best = b;
            best_blocks = blocks;
            best_threads = blocks * b;
        }
    }
    *min_grid = best_blocks * g->multiprocessors;
    *block_size = best;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------ peer access */

API CUresult cuCtxEnablePeerAccess(void *peer, unsigned int flags)
{
    NEED_INIT();
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    ctx_t *c, *p = ctx_handle(peer);
    CUresult rc = current(&c);
    if (!rc) {
        if (!p || !p->active || p == c)
            rc = CUDA_ERROR_INVALID_CONTEXT;
        else if (link_of(c->machine, p->machine) == STANDIN_LINK_NONE)
            rc = CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
        else if (c->peer[p->ordinal])
            rc = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
        else
            c->peer[p->ordinal] = 1;
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuCtxDisablePeerAccess(void *peer)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    ctx_t *c, *p = ctx_handle(peer);
    CUresult rc = current(&c);
    if (!rc) {
        if (!p || !p->active)
            rc = CUDA_ERROR_INVALID_CONTEXT;
        else if (!c->peer[p->ordinal])
            rc = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
        else
            c->peer[p->ordinal] = 0;
    }
    pthread_mutex_unlock(&G);
    return rc;
}

/* ---------------------------------------------------------------- graphs */

API CUresult cuStreamBeginCapture_v2(void *h, int mode)
{
    NEED_INIT();
    if (is_legacy_handle(h))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
    if (mode != CAPTURE_GLOBAL && mode != CAPTURE_THREAD_LOCAL && mode != CAPTURE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    stream_t *s;
    CUresult rc = stream_of(h, t_cur, &s);
    if (!rc)
        rc = s->ctx->sticky;
    if (!rc && s->capture)
        rc = CUDA_ERROR_ILLEGAL_STATE;
    if (!rc) {
        graph_t *g = calloc(1, sizeof *g);
        if (!g)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            g->magic = GRAPH_MAGIC;
            g->ctx = s->ctx;
            s->capture = g;
            s->cap_invalid = 0;
            s->cap_mode = mode;
            s->cap_thread = pthread_self();
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuStreamEndCapture(void *h, graph_t **out)
{
    NEED_INIT();
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (is_legacy_handle(h))
        return CUDA_ERROR_ILLEGAL_STATE; /* never capturing */
    pthread_mutex_lock(&G);
    stream_t *s;
    CUresult rc = stream_of(h, t_cur, &s);
    if (!rc && !s->capture)
        rc = CUDA_ERROR_ILLEGAL_STATE;
    if (!rc && s->cap_mode != CAPTURE_RELAXED && !pthread_equal(s->cap_thread, pthread_self()))
        rc = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD; /* the capture goes on */
    if (!rc) {
        if (s->ctx->sticky || s->cap_invalid) {
            rc = s->ctx->sticky ? s->ctx->sticky : CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
            capture_end(s);
            *out = NULL;
        } else {
            graph_t *g = s->capture;
            s->capture = NULL;
            g->next = g_graphs;
            g_graphs = g;
            *out = g;
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

API CUresult cuGraphInstantiateWithFlags(graph_t **out, graph_t *h, unsigned long long flags)
{
    NEED_INIT();
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&G);
    graph_t *g = graph_of(h, GRAPH_MAGIC);
    CUresult rc = g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (!rc && flags != 0) {
        say("cuGraphInstantiateWithFlags: flags %#llx are not modelled (only 0)", flags);
        rc = CUDA_ERROR_INVALID_VALUE;
    }
    if (!rc && !g->ctx)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    if (!rc)
        rc = g->ctx->sticky;
    graph_t *x = NULL;
    if (!rc) {
        x = calloc(1, sizeof *x);
        gnode_t *nodes = g->n ? malloc((size_t)g->n * sizeof *nodes) : NULL;
        if (!x || (g->n && !nodes)) {
            free(x);
            free(nodes);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            /* The executable graph shares the captured templates (they
             * never change), so that either may go first. */
            if (g->n)
                memcpy(nodes, g->nodes, (size_t)g->n * sizeof *nodes);
            for (int i = 0; i < g->n; i++)
                if (nodes[i].t)
                    nodes[i].t->refs++;
            x->magic = EXEC_MAGIC;
            x->ctx = g->ctx;
            x->nodes = nodes;
            x->n = x->capn = g->n;
            x->next = g_graphs;
            g_graphs = x;
            *out = x;
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

/* Queues every node of `exec` on the stream, in capture order, each as
 * the operation it was: counted for COMMBENCH_STANDIN_CUDA_FAIL, timed as
 * if queued directly, an NCCL node through a fresh clone of its
 * template. */
API CUresult cuGraphLaunch(graph_t *h, void *hs)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    graph_t *x = graph_of(h, EXEC_MAGIC);
    stream_t *s = NULL;
    CUresult rc = x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (!rc && !x->ctx)
        rc = CUDA_ERROR_INVALID_CONTEXT; /* its context was reset */
    if (!rc)
        rc = stream_of(hs, t_cur, &s);
    if (!rc && s->ctx != x->ctx) {
        say("cuGraphLaunch: the graph was captured on GPU %d's context but the stream belongs to GPU %d's",
            x->ctx->ordinal, s->ctx->ordinal);
        rc = CUDA_ERROR_INVALID_VALUE;
    }
    if (!rc)
        rc = s->ctx->sticky;
    if (!rc && s->capture)
        rc = capture_unsupported(s, "cuGraphLaunch: a graph in a graph");
    if (!rc && s->legacy)
        rc = legacy_blocked(s->ctx);
    for (int i = 0; !rc && i < x->n; i++) {
        const gnode_t *nd = &x->nodes[i];
        op_t *op = op_new(nd->kind);
        void *arg = nd->arg;
        if (op && nd->t) {
            arg = nd->t->clone(nd->t->arg);
            if (!arg) {
                op_discard(op);
                op = NULL;
            }
        }
        if (!op) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        op->dst = nd->dst;
        op->src = nd->src;
        op->bytes = nd->bytes;
        op->value = nd->value;
        op->rate = nd->rate;
        op->fn = nd->fn;
        op->arg = arg;
        if (nd->t)
            op->run = nd->t->run;
        rc = enqueue(s, op, 0);
        if (rc && nd->t) {
            int64_t v = 0;
            nd->t->run(arg, 0, &v, 1); /* never queued: only released */
        }
    }
    pthread_mutex_unlock(&G);
    return rc;
}

/* Destroys a graph or an executable graph (`magic` says which). */
static CUresult graph_destroy(graph_t *h, uint32_t magic)
{
    NEED_INIT();
    pthread_mutex_lock(&G);
    graph_t *g = graph_of(h, magic);
    if (g) {
        graph_unlist(g);
        graph_free(g);
    }
    pthread_mutex_unlock(&G);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuGraphExecDestroy(graph_t *h)
{
    return graph_destroy(h, EXEC_MAGIC);
}

API CUresult cuGraphDestroy(graph_t *h)
{
    return graph_destroy(h, GRAPH_MAGIC);
}
