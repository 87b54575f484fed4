/*
 * A test double of NCCL (libnccl.so.2) for commbench's tests, on top of
 * the CUDA driver double (cuda.c). Communicators span processes through a
 * shared-memory segment named from the unique id; every operation runs on
 * its CUDA stream's worker, in stream order, and really moves and reduces
 * the data of device memory, chunked through the segment. Its times are a
 * ring model of the described machine, never measurements. Operations
 * called while their stream captures become graph nodes (cuda.c), which
 * each launch of the graph runs again through a clone. See README.md.
 */
#define _GNU_SOURCE
#include "standin.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef int ncclResult_t;
enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
};

typedef struct {
    char internal[128];
} ncclUniqueId;

enum {
    T_INT8,
    T_UINT8,
    T_INT32,
    T_UINT32,
    T_INT64,
    T_UINT64,
    T_FLOAT16,
    T_FLOAT32,
    T_FLOAT64,
    T_BFLOAT16,
    T_F8E4M3, /* from NCCL 2.24 */
    T_F8E5M2,
    T_COUNT
};
/* OP_PREMUL: a collective's operation made by ncclRedOpCreatePreMulSum
 * (whose handles are OP_COUNT and up, as NCCL numbers them past its own). */
enum { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_AVG, OP_COUNT, OP_PREMUL = OP_COUNT };
#define MAX_PREMUL 64
enum { K_ALLREDUCE, K_ALLGATHER, K_REDUCE_SCATTER, K_BROADCAST, K_REDUCE, K_SEND, K_RECV };

static const char *const KIND_NAME[] = {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast",
                                        "ncclReduce",    "ncclSend",      "ncclRecv"};
static const char *const TYPE_NAME[] = {"int8",    "uint8",    "int32",      "uint32",    "int64",  "uint64",
                                        "float16", "float32",  "float64",    "bfloat16",  "f8e4m3", "f8e5m2"};
static const size_t TYPE_SIZE[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
static const char *const OP_NAME[] = {"sum", "prod", "max", "min", "avg", "premulsum"};

#define MAXR 64
#define COLL_CHUNK ((size_t)1 << 20)
#define CHAN_HEAD 256
#define HDR_SIZE 16384
#define ID_MAGIC "commbench-nccl1"
#define COMM_MAGIC 0x4e43434cu

static const char *const ME = "nccl stand-in";

/* ------------------------------------------------------- shared memory */

struct desc {
    uint64_t seq;
    int32_t kind, dtype, op, root;
    uint64_t count;
    int64_t start;
    int64_t vstart; /* on the event clock */
};

struct shm_hdr {
    _Atomic uint32_t nranks;
    _Atomic uint32_t joined;
    _Atomic uint32_t unlinked;
    _Atomic uint32_t bar_count;
    _Atomic uint32_t bar_gen;
    _Atomic uint32_t failed; /* 1 + the rank that found misuse; everyone stops */
    _Atomic int32_t pid[MAXR];
    _Atomic int32_t gpu[MAXR]; /* 1 + machine index */
    _Atomic uint32_t bell[MAXR];
    struct desc desc[MAXR];
    char failed_text[512];
};

/* Mailbox of one ordered pair of ranks: one chunk at a time. */
struct chan {
    _Atomic uint32_t state; /* 0 empty, 1 holds a chunk */
    uint32_t mismatch;      /* set by the receiver: sizes differ */
    uint64_t msg;           /* message number on this pair, from 1 */
    uint64_t total;         /* bytes of the message */
    uint64_t offset;        /* of this chunk */
    uint64_t len;
    uint64_t rx_expect;     /* bytes the receiver expected (on mismatch) */
    int64_t sender_start;   /* the sender's modelled start */
    int64_t rx_start;       /* the receiver's, written on a first chunk */
    int64_t sender_vstart;  /* the same two on the event clock */
    int64_t rx_vstart;
};

_Static_assert(sizeof(struct shm_hdr) <= HDR_SIZE, "header fits");
_Static_assert(sizeof(struct chan) <= CHAN_HEAD, "channel header fits");

/* ------------------------------------------------------------ the comm */

typedef struct comm {
    uint32_t magic;
    int rank, n;
    int machine, ordinal;
    int gpus[MAXR];
    double ring_rate;
    struct shm_hdr *h;
    size_t map_size;
    char *coll;
    char *chans;
    size_t p2p_chunk, chan_stride;
    uint64_t ops_called; /* operations called, for the fault options */
    uint64_t coll_seq;   /* collectives called */
    int cta_policy;      /* the config's CTA policy (ncclCommInitRankConfig), or -1 */
    uint64_t send_msgs[MAXR], recv_msgs[MAXR];
    _Atomic int aborted;
    _Atomic int async_err;
    int refs;    /* under NM */
    int pending; /* queued units not yet run, under NM */
    /* Pre-multiplied sums made on it: handle OP_COUNT + i. */
    struct {
        int live, dtype;
        unsigned char scalar[8];
    } premul[MAX_PREMUL];
    char shm_name[64];
    struct comm *next;
} comm_t;

typedef struct item {
    int kind, dtype, op, root, peer;
    unsigned char scalar[8]; /* OP_PREMUL's, this rank's, read at the call */
    size_t count;
    char *send, *recv;     /* host views of the buffers */
    uint64_t dsend, drecv; /* device addresses, for in-place */
    uint64_t index;        /* 1-based, per communicator */
    uint64_t seq;          /* collective number */
    comm_t *comm;
    void *stream;
    /* What a graph's replay of it logs (COMMBENCH_STANDIN_NCCL_CALLS), as
     * its call logged: its own call, or for the first part of one of NCCL
     * 2.28's composed collectives that collective (log_name NULL: a later
     * part, which logs nothing). */
    const char *log_name;
    size_t log_count;
    uint64_t log_send, log_recv;
} item_t;

typedef struct unit {
    comm_t *comm;
    int nitems;
    int dead; /* a replay on a communicator destroyed since its capture: runs nothing */
    item_t items[];
} unit_t;

static pthread_mutex_t NM = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t NM_cv = PTHREAD_COND_INITIALIZER;
static comm_t *g_comms;

static pthread_mutex_t g_err_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_last[1024];

static __thread int t_depth;
static __thread item_t *t_items;
static __thread int t_nitems, t_capitems;
static __thread ncclResult_t t_group_err;
/* Inside one of NCCL 2.28's collectives made of sends and receives here:
 * the call log has the collective, not its parts; the first part carries
 * the collective's log fields for a graph's replays (t_composed_first
 * until then). */
static __thread int t_composed, t_composed_first;
static __thread const char *t_composed_name;
static __thread size_t t_composed_count;
static __thread uint64_t t_composed_send, t_composed_recv;

/* Faults from the environment, read once. */
static pthread_once_t g_fault_once = PTHREAD_ONCE_INIT;
static int g_corrupt_rank = -1, g_fail_rank = -1;
static uint64_t g_corrupt_op = 1, g_fail_op = 1;

static void set_last(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_last(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&g_err_lock);
    vsnprintf(g_last, sizeof g_last, fmt, ap);
    pthread_mutex_unlock(&g_err_lock);
    va_end(ap);
}

/* Misuse or a fault: the last error, and one line on stderr. */
static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    set_last("%s: %s", ME, text);
    fprintf(stderr, "%s: %s\n", ME, text);
}

static int parse_fault(const char *var, int *rank, uint64_t *op)
{
    const char *s = getenv(var);
    if (!s || !*s)
        return 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    long r = -1, k = 1;
    int ok = 1;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        if (strncmp(tok, "rank=", 5) == 0) {
            r = strtol(tok + 5, &end, 10);
            ok &= *end == 0 && end != tok + 5 && r >= 0;
        } else if (strncmp(tok, "op=", 3) == 0) {
            k = strtol(tok + 3, &end, 10);
            ok &= *end == 0 && end != tok + 3 && k >= 1;
        } else {
            ok = 0;
        }
    }
    if (!ok || r < 0) {
        fprintf(stderr, "%s: %s=%s: expected rank=R[,op=K] (K from 1); no fault injected\n", ME, var, s);
        return 0;
    }
    *rank = (int)r;
    *op = (uint64_t)k;
    return 1;
}

/* COMMBENCH_STANDIN_NCCL_TIME_SCALE: NCCL's operations alone slowed
 * further (default 1), so that a test can make them long against the
 * host's own scheduling noise without slowing every staging copy too. */
static double g_nccl_scale = 1.0;

/* COMMBENCH_STANDIN_NCCL_CALLS=FILE: one line per accepted call, with
 * its buffers' addresses (where a test needs to see them: `-u`'s
 * misalignment), appended to FILE (-1: nowhere). */
static int g_calls = -1;

static void read_faults(void)
{
    const char *log = getenv("COMMBENCH_STANDIN_NCCL_CALLS");
    if (log && *log) {
        g_calls = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (g_calls < 0)
            complain("cannot open the call log %s: %s", log, strerror(errno));
    }
    parse_fault("COMMBENCH_STANDIN_NCCL_CORRUPT", &g_corrupt_rank, &g_corrupt_op);
    parse_fault("COMMBENCH_STANDIN_NCCL_FAIL", &g_fail_rank, &g_fail_op);
    const char *s = getenv("COMMBENCH_STANDIN_NCCL_TIME_SCALE");
    if (s && *s) {
        char *end;
        double d = strtod(s, &end);
        if (end != s && *end == 0 && d > 0)
            g_nccl_scale = d;
        else
            complain("COMMBENCH_STANDIN_NCCL_TIME_SCALE=%s is not a positive number; using 1", s);
    }
}

/* One line of the call log (COMMBENCH_STANDIN_NCCL_CALLS), in one
 * write, as the trace's; nothing where there is no log. */
static void log_line(const char *fmt, ...)
{
    if (g_calls < 0)
        return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof line)
        (void)!write(g_calls, line, (size_t)n);
}

/* --------------------------------------------------------- waiting */

static void fwait(_Atomic uint32_t *addr, uint32_t val, int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void fwake(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void ring(comm_t *c, int peer)
{
    atomic_fetch_add(&c->h->bell[peer], 1);
    fwake(&c->h->bell[peer]);
}

/* Whether must_stop would say stop, without noting anything. */
static int stopping(comm_t *c)
{
    return atomic_load(&c->aborted) || atomic_load(&c->h->failed);
}

/* Whether this rank must stop waiting: aborted here, or misuse found by
 * some rank (an injected failure stops nobody: peers wait, as on NCCL). */
static int must_stop(comm_t *c)
{
    if (atomic_load(&c->aborted))
        return 1;
    uint32_t f = atomic_load(&c->h->failed);
    if (f) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&c->async_err, &expected, ncclRemoteError))
            set_last("%s: rank %u found an error, so rank %d's operations stop: %.400s", ME, f - 1, c->rank,
                     c->h->failed_text);
        return 1;
    }
    return 0;
}

/* Marks this rank's communicator failed with `code` and tells the others
 * to stop (misuse, never an injected fault). */
static void fail_comm(comm_t *c, int code, const char *text)
{
    int expected = 0;
    atomic_compare_exchange_strong(&c->async_err, &expected, code);
    uint32_t zero = 0;
    if (atomic_compare_exchange_strong(&c->h->failed, &zero, (uint32_t)c->rank + 1))
        snprintf(c->h->failed_text, sizeof c->h->failed_text, "%s", text);
    fwake(&c->h->bar_gen);
    for (int i = 0; i < c->n; i++)
        ring(c, i);
}

static int barrier(comm_t *c)
{
    struct shm_hdr *h = c->h;
    uint32_t gen = atomic_load(&h->bar_gen);
    if (atomic_fetch_add(&h->bar_count, 1) + 1 == (uint32_t)c->n) {
        atomic_store(&h->bar_count, 0);
        atomic_fetch_add(&h->bar_gen, 1);
        fwake(&h->bar_gen);
        return 0;
    }
    while (atomic_load(&h->bar_gen) == gen) {
        if (must_stop(c))
            return -1;
        fwait(&h->bar_gen, gen, 50);
    }
    return 0;
}

/* The NCCL version the stand-in plays: 2.21.5 unless
 * COMMBENCH_STANDIN_NCCL_VERSION gives another code (22405 for 2.24.5),
 * which decides whether the fp8 types exist. */
static int nccl_version(void)
{
    const char *s = getenv("COMMBENCH_STANDIN_NCCL_VERSION");
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    return s && *s && !*end && v >= 20000 && v < 1000000 ? (int)v : 22105;
}

/* ------------------------------------------------------- arithmetic */

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
        }
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = (int32_t)((x >> 23) & 0xff);
    uint32_t man = x & 0x7fffff;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    int32_t e = exp - 127 + 15;
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | (uint32_t)e << 10 | man >> 13, rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
        half++;
    return (uint16_t)half;
}

static float bf16_to_float(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* An 8-bit float with `eb` exponent and `mb` mantissa bits; `ieee`: an
 * all-ones exponent is infinity or NaN (E5M2), else only all ones is NaN
 * and there is no infinity (E4M3). */
static float f8_to_float(uint8_t b, int eb, int mb, int ieee)
{
    int bias = (1 << (eb - 1)) - 1, e = (b >> mb) & ((1 << eb) - 1), m = b & ((1 << mb) - 1);
    float sign = (b & 0x80) ? -1.0f : 1.0f;
    if (ieee && e == (1 << eb) - 1)
        return m ? NAN : sign * INFINITY;
    if (!ieee && e == (1 << eb) - 1 && m == (1 << mb) - 1)
        return NAN;
    if (e == 0)
        return sign * ldexpf((float)m, 1 - bias - mb);
    return sign * ldexpf((float)(m | 1 << mb), e - bias - mb);
}

/* Nearest, ties to even; beyond the largest finite value, saturated (as
 * CUDA's fp8 conversions with __NV_SATFINITE). */
static uint8_t float_to_f8(float f, int eb, int mb, int ieee)
{
    int bias = (1 << (eb - 1)) - 1;
    uint8_t sign = signbit(f) ? 0x80 : 0;
    uint8_t maxf = ieee ? (uint8_t)(((1 << eb) - 2) << mb | ((1 << mb) - 1)) : (uint8_t)(((1 << eb) - 1) << mb | ((1 << mb) - 2));
    if (isnan(f))
        return (uint8_t)(ieee ? (((1 << eb) - 1) << mb | 1 << (mb - 1)) : 0x7f);
    double a = fabs((double)f);
    if (a == 0.0)
        return sign;
    int e;
    frexp(a, &e); /* a = x * 2^e, x in [0.5, 1) */
    e -= 1;
    if (e < 1 - bias)
        e = 1 - bias;
    double q = ldexp(1.0, e - mb);
    double n = nearbyint(a / q); /* the default rounding: ties to even */
    if (n >= (double)(2 << mb)) {
        n /= 2;
        e += 1;
    }
    unsigned bits = n < (double)(1 << mb) ? (unsigned)n : (unsigned)(e + bias) << mb | ((unsigned)n & ((1u << mb) - 1));
    if (bits > maxf)
        bits = maxf;
    return (uint8_t)(sign | bits);
}

static float e4m3_to_float(uint8_t b)
{
    return f8_to_float(b, 4, 3, 0);
}

static uint8_t float_to_e4m3(float f)
{
    return float_to_f8(f, 4, 3, 0);
}

static float e5m2_to_float(uint8_t b)
{
    return f8_to_float(b, 5, 2, 1);
}

static uint8_t float_to_e5m2(float f)
{
    return float_to_f8(f, 5, 2, 1);
}

#define RED_INT(T, U)                                                                                                  \
    do {                                                                                                               \
        T *d = dst;                                                                                                    \
        const T *s = src;                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                                               \
            T a, b = s[i];                                                                                             \
            memcpy(&a, &d[i], sizeof a);                                                                               \
            switch (op) {                                                                                              \
            case OP_PROD: a = (T)((U)a * (U)b); break;                                                                 \
            case OP_MAX: a = a > b ? a : b; break;                                                                     \
            case OP_MIN: a = a < b ? a : b; break;                                                                     \
            default: a = (T)((U)a + (U)b); break;                                                                      \
            }                                                                                                          \
            d[i] = a;                                                                                                  \
        }                                                                                                              \
    } while (0)

#define RED_FLOAT(T)                                                                                                   \
    do {                                                                                                               \
        T *d = dst;                                                                                                    \
        const T *s = src;                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                                               \
            T a = d[i], b = s[i];                                                                                      \
            switch (op) {                                                                                              \
            case OP_PROD: a = a * b; break;                                                                            \
            case OP_MAX: a = a > b ? a : b; break;                                                                     \
            case OP_MIN: a = a < b ? a : b; break;                                                                     \
            default: a = a + b; break;                                                                                 \
            }                                                                                                          \
            d[i] = a;                                                                                                  \
        }                                                                                                              \
    } while (0)

#define RED_NARROW(E, TO, FROM)                                                                                        \
    do {                                                                                                               \
        E *d = dst;                                                                                                    \
        const E *s = src;                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                                               \
            float a = TO(d[i]), b = TO(s[i]);                                                                          \
            switch (op) {                                                                                              \
            case OP_PROD: a = a * b; break;                                                                            \
            case OP_MAX: a = a > b ? a : b; break;                                                                     \
            case OP_MIN: a = a < b ? a : b; break;                                                                     \
            default: a = a + b; break;                                                                                 \
            }                                                                                                          \
            d[i] = FROM(a);                                                                                            \
        }                                                                                                              \
    } while (0)

/* dst[i] = dst[i] op src[i] for n elements (avg sums; see divide). */
static void reduce_into(void *dst, const void *src, size_t n, int dtype, int op)
{
    switch (dtype) {
    case T_INT8: RED_INT(int8_t, uint8_t); break;
    case T_UINT8: RED_INT(uint8_t, uint8_t); break;
    case T_INT32: RED_INT(int32_t, uint32_t); break;
    case T_UINT32: RED_INT(uint32_t, uint32_t); break;
    case T_INT64: RED_INT(int64_t, uint64_t); break;
    case T_UINT64: RED_INT(uint64_t, uint64_t); break;
    case T_FLOAT16: RED_NARROW(uint16_t, half_to_float, float_to_half); break;
    case T_FLOAT32: RED_FLOAT(float); break;
    case T_FLOAT64: RED_FLOAT(double); break;
    case T_BFLOAT16: RED_NARROW(uint16_t, bf16_to_float, float_to_bf16); break;
    case T_F8E4M3: RED_NARROW(uint8_t, e4m3_to_float, float_to_e4m3); break;
    case T_F8E5M2: RED_NARROW(uint8_t, e5m2_to_float, float_to_e5m2); break;
    }
}

#define DIV_INT(T)                                                                                                     \
    do {                                                                                                               \
        T *d = dst;                                                                                                    \
        for (size_t i = 0; i < n; i++)                                                                                 \
            d[i] = (T)(d[i] / (T)ranks);                                                                               \
    } while (0)

/* An integer avg's division by the number of ranks. */
static void divide(void *dst, size_t n, int dtype, int ranks)
{
    switch (dtype) {
    case T_INT8: DIV_INT(int8_t); break;
    case T_UINT8: DIV_INT(uint8_t); break;
    case T_INT32: DIV_INT(int32_t); break;
    case T_UINT32: DIV_INT(uint32_t); break;
    case T_INT64: DIV_INT(int64_t); break;
    case T_UINT64: DIV_INT(uint64_t); break;
    }
}

/* out = the reduction of every rank's `len` elements at byte `at` of its
 * slot. An fp8 reduction on a GPU below compute capability 9.0 writes
 * nothing: NCCL's kernels for it there are empty. */
#define SCALE_INT(T, U)                                                                                                \
    do {                                                                                                               \
        T *d = p, k;                                                                                                   \
        memcpy(&k, scalar, sizeof k);                                                                                  \
        for (size_t i = 0; i < n; i++)                                                                                 \
            d[i] = (T)((U)d[i] * (U)k);                                                                                \
    } while (0)

#define SCALE_FLOAT(T)                                                                                                 \
    do {                                                                                                               \
        T *d = p, k;                                                                                                   \
        memcpy(&k, scalar, sizeof k);                                                                                  \
        for (size_t i = 0; i < n; i++)                                                                                 \
            d[i] *= k;                                                                                                 \
    } while (0)

#define SCALE_NARROW(E, TO, FROM)                                                                                      \
    do {                                                                                                               \
        E *d = p, k;                                                                                                   \
        memcpy(&k, scalar, sizeof k);                                                                                  \
        for (size_t i = 0; i < n; i++)                                                                                 \
            d[i] = FROM(TO(d[i]) * TO(k));                                                                             \
    } while (0)

/* A pre-multiplied sum's first step, on this rank's own input: each
 * element times the rank's scalar, in the element type. */
static void scale(void *p, size_t n, int dtype, const unsigned char *scalar)
{
    switch (dtype) {
    case T_INT8: SCALE_INT(int8_t, uint8_t); break;
    case T_UINT8: SCALE_INT(uint8_t, uint8_t); break;
    case T_INT32: SCALE_INT(int32_t, uint32_t); break;
    case T_UINT32: SCALE_INT(uint32_t, uint32_t); break;
    case T_INT64: SCALE_INT(int64_t, uint64_t); break;
    case T_UINT64: SCALE_INT(uint64_t, uint64_t); break;
    case T_FLOAT32: SCALE_FLOAT(float); break;
    case T_FLOAT64: SCALE_FLOAT(double); break;
    case T_FLOAT16: SCALE_NARROW(uint16_t, half_to_float, float_to_half); break;
    case T_BFLOAT16: SCALE_NARROW(uint16_t, bf16_to_float, float_to_bf16); break;
    case T_F8E4M3: SCALE_NARROW(uint8_t, e4m3_to_float, float_to_e4m3); break;
    case T_F8E5M2: SCALE_NARROW(uint8_t, e5m2_to_float, float_to_e5m2); break;
    }
}

/* An average of floats, as NCCL makes it: each input times the reciprocal
 * of the ranks (in the element type) before the sum, so the result may be
 * a unit or two in the last place from the quotient rounded once. */
static void premultiply(void *p, size_t n, int dtype, int ranks)
{
    unsigned char k[8] = {0};
    float r = 1.0f / (float)ranks;
    double rd = 1.0 / (double)ranks;
    uint16_t k16;
    switch (dtype) {
    case T_FLOAT32: memcpy(k, &r, sizeof r); break;
    case T_FLOAT64: memcpy(k, &rd, sizeof rd); break;
    case T_FLOAT16: k16 = float_to_half(r); memcpy(k, &k16, 2); break;
    case T_BFLOAT16: k16 = float_to_bf16(r); memcpy(k, &k16, 2); break;
    case T_F8E4M3: k[0] = float_to_e4m3(r); break;
    case T_F8E5M2: k[0] = float_to_e5m2(r); break;
    default: return;
    }
    scale(p, n, dtype, k);
}

static char *slot(comm_t *c, int r);

static void reduce_ranks(comm_t *c, char *out, size_t at, size_t len, const item_t *it)
{
    static __thread char *tmp;
    size_t es = TYPE_SIZE[it->dtype];
    int n = c->n;
    if (it->dtype >= T_F8E4M3 && commbench_standin_machine()->gpu[c->machine].cc_major < 9)
        return;
    memcpy(out, slot(c, 0) + at, len * es);
    if (it->op != OP_AVG || it->dtype < T_FLOAT16) {
        for (int i = 1; i < n; i++)
            reduce_into(out, slot(c, i) + at, len, it->dtype, it->op);
        if (it->op == OP_AVG)
            divide(out, len, it->dtype, n);
        return;
    }
    if (!tmp && !(tmp = malloc(COLL_CHUNK))) {
        complain("cannot allocate the average's scratch buffer");
        abort();
    }
    premultiply(out, len, it->dtype, n);
    for (int i = 1; i < n; i++) {
        memcpy(tmp, slot(c, i) + at, len * es);
        premultiply(tmp, len, it->dtype, n);
        reduce_into(out, tmp, len, it->dtype, OP_SUM);
    }
}



/* -------------------------------------------------------------- faults */

static int corrupts(const item_t *it)
{
    return it->comm->rank == g_corrupt_rank && it->index >= g_corrupt_op;
}

static void flip_first(char *p, int dtype)
{
    for (size_t i = 0; i < TYPE_SIZE[dtype]; i++)
        p[i] = (char)~p[i];
}

/* ------------------------------------------------------------- timing */

static int64_t scaled(double ns)
{
    return (int64_t)(ns * commbench_standin_time_scale() * g_nccl_scale + 0.5);
}

static int in_place(const item_t *it)
{
    size_t es = TYPE_SIZE[it->dtype], block = it->count * es;
    switch (it->kind) {
    case K_ALLGATHER: return it->dsend == it->drecv + (uint64_t)it->comm->rank * block;
    case K_REDUCE_SCATTER: return it->drecv == it->dsend + (uint64_t)it->comm->rank * block;
    default: return it->dsend == it->drecv;
    }
}

/* Modelled duration of a collective: NCCL's latency plus the bytes each
 * rank puts on its ring link over the slowest ring link. */
static int64_t coll_ns(const item_t *it)
{
    const struct standin_machine *m = commbench_standin_machine();
    comm_t *c = it->comm;
    double es = (double)TYPE_SIZE[it->dtype], s = (double)it->count * es, n = c->n, link;
    if (c->n == 1) /* a local copy, nothing in place */
        return scaled(m->nccl_latency_ns + (in_place(it) ? 0.0 : s / m->d2d));
    switch (it->kind) {
    case K_ALLREDUCE: link = 2.0 * (n - 1) / n * s; break;
    case K_ALLGATHER:
    case K_REDUCE_SCATTER: link = (n - 1) * s; break;
    default: link = s; break;
    }
    return scaled(m->nccl_latency_ns + link / c->ring_rate);
}

/* ------------------------------------------------------------ collectives */

static char *slot(comm_t *c, int r)
{
    return c->coll + (size_t)r * COLL_CHUNK;
}

static void describe(const struct desc *d, char *out, size_t len)
{
    if (d->kind < 0 || d->kind > K_REDUCE || d->dtype < 0 || d->dtype >= T_COUNT) {
        snprintf(out, len, "an unknown operation");
        return;
    }
    int n = snprintf(out, len, "%s(count %llu, %s", KIND_NAME[d->kind], (unsigned long long)d->count,
                     TYPE_NAME[d->dtype]);
    if (d->kind == K_ALLREDUCE || d->kind == K_REDUCE || d->kind == K_REDUCE_SCATTER)
        n += snprintf(out + n, len - (size_t)n, ", %s", d->op >= 0 && d->op <= OP_PREMUL ? OP_NAME[d->op] : "?");
    if (d->kind == K_BROADCAST || d->kind == K_REDUCE)
        n += snprintf(out + n, len - (size_t)n, ", root %d", d->root);
    snprintf(out + n, len - (size_t)n, ")");
}

/* One collective, starting on this rank at `start` (*v on the event
 * clock); returns its end (and leaves it in *v). All ranks start together
 * at the latest rank's start, on either clock. On failure the
 * communicator holds the error and start is returned. */
static int64_t run_coll(item_t *it, int64_t start, int64_t *v)
{
    comm_t *c = it->comm;
    struct shm_hdr *h = c->h;
    struct desc *mine = &h->desc[c->rank];
    mine->seq = it->seq;
    mine->kind = it->kind;
    mine->dtype = it->dtype;
    mine->op = it->op;
    mine->root = it->root;
    mine->count = it->count;
    mine->start = start;
    mine->vstart = *v;
    if (barrier(c))
        return start;
    int64_t t0 = start, vt0 = *v;
    const struct desc *d0 = &h->desc[0];
    for (int i = 0; i < c->n; i++) {
        const struct desc *d = &h->desc[i];
        if (d->start > t0)
            t0 = d->start;
        if (d->vstart > vt0)
            vt0 = d->vstart;
        if (d->seq != d0->seq || d->kind != d0->kind || d->count != d0->count || d->dtype != d0->dtype ||
            (d->kind != K_ALLGATHER && d->kind != K_BROADCAST && d->op != d0->op) ||
            ((d->kind == K_BROADCAST || d->kind == K_REDUCE) && d->root != d0->root)) {
            char a[160], b[160], text[512];
            describe(d0, a, sizeof a);
            describe(d, b, sizeof b);
            snprintf(text, sizeof text,
                     "mismatched collectives: as its collective %llu rank 0 called %s but rank %d called %s as its "
                     "collective %llu",
                     (unsigned long long)d0->seq, a, i, b, (unsigned long long)d->seq);
            if (c->rank == 0 || c->rank == i)
                complain("rank %d: %s", c->rank, text);
            else
                set_last("%s: rank %d: %s", ME, c->rank, text);
            int expected = 0;
            atomic_compare_exchange_strong(&c->async_err, &expected, ncclInvalidUsage);
            return start;
        }
    }
    size_t es = TYPE_SIZE[it->dtype], count = it->count;
    int n = c->n, r = c->rank;
    int writes = it->kind != K_REDUCE || r == it->root;
    switch (it->kind) {
    case K_ALLREDUCE:
    case K_REDUCE: {
        size_t k = COLL_CHUNK / es;
        for (size_t off = 0; off < count; off += k) {
            size_t len = count - off < k ? count - off : k;
            memcpy(slot(c, r), it->send + off * es, len * es);
            if (it->op == OP_PREMUL)
                scale(slot(c, r), len, it->dtype, it->scalar);
            if (barrier(c))
                return start;
            if (writes) {
                reduce_ranks(c, it->recv + off * es, 0, len, it);
            }
            if (barrier(c))
                return start;
        }
        break;
    }
    case K_BROADCAST: {
        size_t k = COLL_CHUNK / es;
        for (size_t off = 0; off < count; off += k) {
            size_t len = count - off < k ? count - off : k;
            if (r == it->root)
                memcpy(slot(c, r), it->send + off * es, len * es);
            if (barrier(c))
                return start;
            if (r != it->root || it->recv != it->send) /* in place, the root has it */
                memcpy(it->recv + off * es, slot(c, it->root), len * es);
            if (barrier(c))
                return start;
        }
        break;
    }
    case K_ALLGATHER: {
        size_t k = COLL_CHUNK / es;
        for (size_t off = 0; off < count; off += k) {
            size_t len = count - off < k ? count - off : k;
            memcpy(slot(c, r), it->send + off * es, len * es);
            if (barrier(c))
                return start;
            for (int i = 0; i < n; i++)
                memcpy(it->recv + ((size_t)i * count + off) * es, slot(c, i), len * es);
            if (barrier(c))
                return start;
        }
        break;
    }
    case K_REDUCE_SCATTER: {
        size_t k = COLL_CHUNK / (size_t)n / es;
        for (size_t off = 0; off < count; off += k) {
            size_t len = count - off < k ? count - off : k;
            for (int j = 0; j < n; j++) {
                memcpy(slot(c, r) + (size_t)j * k * es, it->send + ((size_t)j * count + off) * es, len * es);
                if (it->op == OP_PREMUL)
                    scale(slot(c, r) + (size_t)j * k * es, len, it->dtype, it->scalar);
            }
            if (barrier(c))
                return start;
            reduce_ranks(c, it->recv + off * es, (size_t)r * k * es, len, it);
            if (barrier(c))
                return start;
        }
        break;
    }
    }
    if (writes && corrupts(it))
        flip_first(it->recv, it->dtype);
    *v = vt0 + coll_ns(it);
    return t0 + coll_ns(it);
}

/* ---------------------------------------------------------- send / recv */

static struct chan *chan(comm_t *c, int from, int to)
{
    return (struct chan *)(c->chans + ((size_t)from * (size_t)c->n + (size_t)to) * c->chan_stride);
}

static char *chan_data(struct chan *ch)
{
    return (char *)ch + CHAN_HEAD;
}

/* The grouped sends and receives of a unit, all progressing together:
 * each ordered pair has a one-chunk mailbox; a rank with nothing to do
 * sleeps on its doorbell. Starts at `start` (*v on the event clock), once
 * every peer has; returns the modelled end (and leaves it in *v). */
static int64_t run_p2p(unit_t *u, int64_t start, int64_t *v)
{
    comm_t *c = u->comm;
    int n = c->n, me = c->rank;
    const struct standin_machine *m = commbench_standin_machine();
    /* Per peer, the unit's sends and receives in call order. */
    int *order = calloc((size_t)u->nitems, sizeof *order);
    int sfirst[MAXR + 1] = {0}, rfirst[MAXR + 1] = {0}, sp[MAXR], rp[MAXR];
    int *rorder = calloc((size_t)u->nitems, sizeof *rorder);
    if (!order || !rorder) {
        free(order);
        free(rorder);
        int expected = 0;
        atomic_compare_exchange_strong(&c->async_err, &expected, ncclSystemError);
        set_last("%s: out of host memory for a group", ME);
        return start;
    }
    for (int i = 0; i < u->nitems; i++) {
        item_t *it = &u->items[i];
        if (it->kind == K_SEND)
            sfirst[it->peer + 1]++;
        else if (it->kind == K_RECV)
            rfirst[it->peer + 1]++;
    }
    for (int p = 0; p < n; p++) {
        sfirst[p + 1] += sfirst[p];
        rfirst[p + 1] += rfirst[p];
        sp[p] = sfirst[p];
        rp[p] = rfirst[p];
    }
    double send_ns = 0, recv_ns = 0;
    for (int i = 0; i < u->nitems; i++) {
        item_t *it = &u->items[i];
        double bytes = (double)(it->count * TYPE_SIZE[it->dtype]);
        if (it->kind == K_SEND) {
            order[sp[it->peer]++] = i;
            if (it->peer != me)
                send_ns += bytes / commbench_standin_pair_rate(c->machine, c->gpus[it->peer]);
        } else if (it->kind == K_RECV) {
            rorder[rp[it->peer]++] = i;
            if (it->peer != me)
                recv_ns += bytes / commbench_standin_pair_rate(c->gpus[it->peer], c->machine);
        }
    }
    for (int p = 0; p < n; p++) {
        sp[p] = sfirst[p];
        rp[p] = rfirst[p];
    }
    size_t sent[MAXR] = {0};
    int awaiting[MAXR] = {0};
    int64_t known = start, vknown = *v;
    int stopped = 0, last_look = 0;
    for (;;) {
        uint32_t bell = atomic_load(&c->h->bell[me]);
        int progressed = 0, left = 0;
        for (int p = 0; p < n; p++) {
            if (sp[p] < sfirst[p + 1]) {
                item_t *it = &u->items[order[sp[p]]];
                size_t bytes = it->count * TYPE_SIZE[it->dtype];
                struct chan *ch = chan(c, me, p);
                uint32_t state = atomic_load_explicit(&ch->state, memory_order_acquire);
                if (awaiting[p]) {
                    if (state == 0) {
                        if (ch->rx_start > known)
                            known = ch->rx_start;
                        if (ch->rx_vstart > vknown)
                            vknown = ch->rx_vstart;
                        if (ch->mismatch) {
                            char text[256];
                            snprintf(text, sizeof text,
                                     "rank %d sends %zu bytes to rank %d, which receives %llu (message %llu between "
                                     "them)",
                                     me, bytes, p, (unsigned long long)ch->rx_expect, (unsigned long long)ch->msg);
                            complain("%s", text);
                            fail_comm(c, ncclInvalidUsage, text);
                        }
                        awaiting[p] = 0;
                        sent[p] = 0;
                        sp[p]++;
                        progressed = 1;
                    }
                } else if (state == 0) {
                    size_t len = bytes - sent[p] < c->p2p_chunk ? bytes - sent[p] : c->p2p_chunk;
                    if (sent[p] == 0) {
                        ch->msg = ++c->send_msgs[p];
                        ch->mismatch = 0;
                    }
                    ch->total = bytes;
                    ch->offset = sent[p];
                    ch->len = len;
                    ch->sender_start = start;
                    ch->sender_vstart = *v;
                    memcpy(chan_data(ch), it->send + sent[p], len);
                    atomic_store_explicit(&ch->state, 1, memory_order_release);
                    ring(c, p);
                    sent[p] += len;
                    if (sent[p] == bytes)
                        awaiting[p] = 1;
                    progressed = 1;
                }
                left |= sp[p] < sfirst[p + 1];
            }
            if (rp[p] < rfirst[p + 1]) {
                item_t *it = &u->items[rorder[rp[p]]];
                size_t bytes = it->count * TYPE_SIZE[it->dtype];
                struct chan *ch = chan(c, p, me);
                if (atomic_load_explicit(&ch->state, memory_order_acquire) == 1) {
                    char text[256] = "";
                    if (ch->offset == 0) {
                        c->recv_msgs[p]++;
                        ch->rx_start = start;
                        ch->rx_vstart = *v;
                        if (ch->sender_start > known)
                            known = ch->sender_start;
                        if (ch->sender_vstart > vknown)
                            vknown = ch->sender_vstart;
                        if (ch->total != bytes) {
                            snprintf(text, sizeof text,
                                     "rank %d receives %zu bytes from rank %d, which sends %llu (message %llu between "
                                     "them)",
                                     me, bytes, p, (unsigned long long)ch->total, (unsigned long long)ch->msg);
                            ch->mismatch = 1;
                            ch->rx_expect = bytes;
                            complain("%s", text);
                        }
                    }
                    size_t room = bytes > ch->offset ? bytes - ch->offset : 0;
                    memcpy(it->recv + ch->offset, chan_data(ch), ch->len < room ? ch->len : room);
                    int last = ch->offset + ch->len == ch->total;
                    atomic_store_explicit(&ch->state, 0, memory_order_release);
                    ring(c, p);
                    /* After the channel is handed back: a sender that
                     * learns of the failure then finds the mismatch on
                     * its channel and reports it as its own misuse. */
                    if (text[0])
                        fail_comm(c, ncclInvalidUsage, text);
                    if (last) {
                        if (corrupts(it))
                            flip_first(it->recv, it->dtype);
                        rp[p]++;
                    }
                    progressed = 1;
                }
                left |= rp[p] < rfirst[p + 1];
            }
        }
        if (!left)
            break;
        if (!progressed) {
            /* Another rank's failure: one more look at the channels
             * first, where a mismatch this rank took part in waits to be
             * reported as its own (ncclInvalidUsage, not a remote error). */
            if (stopping(c) && !last_look) {
                last_look = 1;
                continue;
            }
            if (must_stop(c)) {
                stopped = 1;
                break;
            }
            fwait(&c->h->bell[me], bell, 50);
        }
    }
    free(order);
    free(rorder);
    if (stopped)
        return start;
    double link = send_ns > recv_ns ? send_ns : recv_ns;
    *v = vknown + scaled(m->nccl_latency_ns + link);
    return known + scaled(m->nccl_latency_ns + link);
}

/* ---------------------------------------------------------------- units */

static void comm_release(comm_t *c)
{
    /* NM held */
    if (--c->refs > 0)
        return;
    munmap(c->h, c->map_size);
    c->magic = 0;
    free(c);
}

/* Whether the injected failure hits this unit. */
static int unit_fails(const unit_t *u)
{
    if (u->comm->rank != g_fail_rank)
        return 0;
    for (int i = 0; i < u->nitems; i++)
        if (u->items[i].index == g_fail_op)
            return 1;
    return 0;
}

static int64_t run_unit(void *arg, int64_t start, int64_t *v, int skip)
{
    unit_t *u = arg;
    comm_t *c = u->comm;
    int64_t t = start;
    if (!skip && !u->dead && !atomic_load(&c->aborted) && !atomic_load(&c->async_err)) {
        if (unit_fails(u)) {
            int expected = 0;
            atomic_compare_exchange_strong(&c->async_err, &expected, ncclSystemError);
            complain("injected failure (COMMBENCH_STANDIN_NCCL_FAIL=rank=%d,op=%llu): rank %d's operation %llu "
                     "never completes; ncclCommAbort releases it",
                     g_fail_rank, (unsigned long long)g_fail_op, c->rank, (unsigned long long)g_fail_op);
            while (!atomic_load(&c->aborted)) {
                struct timespec ts = {.tv_sec = 0, .tv_nsec = 20000000L};
                nanosleep(&ts, NULL);
            }
        } else {
            int p2p = 0;
            for (int i = 0; i < u->nitems; i++)
                p2p |= u->items[i].kind == K_SEND || u->items[i].kind == K_RECV;
            if (p2p)
                t = run_p2p(u, t, v);
            for (int i = 0; i < u->nitems && !atomic_load(&c->async_err) && !atomic_load(&c->aborted); i++)
                if (u->items[i].kind != K_SEND && u->items[i].kind != K_RECV)
                    t = run_coll(&u->items[i], t, v);
        }
    }
    pthread_mutex_lock(&NM);
    c->pending--;
    pthread_cond_broadcast(&NM_cv);
    comm_release(c);
    pthread_mutex_unlock(&NM);
    free(u);
    return t;
}

static comm_t *comm_of(const void *h)
{
    for (comm_t *c = g_comms; c; c = c->next)
        if (c == h)
            return c;
    return NULL;
}

/* A captured unit (the template of a graph's node) that will never run:
 * its communicator reference goes with it. */
static void drop_unit(void *arg)
{
    unit_t *u = arg;
    pthread_mutex_lock(&NM);
    comm_release(u->comm);
    pthread_mutex_unlock(&NM);
    free(u);
}

/* One more run of a captured unit, for a launch of its graph: a copy
 * holding what a queued unit holds (a communicator reference, one pending
 * operation), the same items (so every rank's replays match by their
 * collective numbers, as every rank replays the same captured sequence;
 * and an injected fault by operation index hits each replay of that
 * operation again). Logs one `replay:` line per logged item. Called with
 * the CUDA stand-in's lock held (never call into it from here). */
static void *clone_unit(void *arg)
{
    const unit_t *t = arg;
    size_t size = sizeof *t + (size_t)t->nitems * sizeof(item_t);
    unit_t *u = malloc(size);
    if (!u)
        return NULL;
    memcpy(u, t, size);
    comm_t *c = u->comm;
    pthread_mutex_lock(&NM);
    c->refs++;
    c->pending++;
    u->dead = comm_of(c) == NULL;
    pthread_mutex_unlock(&NM);
    if (u->dead)
        complain("%s: a graph replays an operation of communicator rank %d after ncclCommDestroy or ncclCommAbort; "
                 "it does nothing",
                 u->items[0].log_name ? u->items[0].log_name : KIND_NAME[u->items[0].kind], c->rank);
    for (int i = 0; i < u->nitems; i++) {
        const item_t *it = &u->items[i];
        if (it->log_name)
            log_line("%s: replay: pid %d rank %d %s %s count %zu send %#llx recv %#llx\n", ME, (int)getpid(), c->rank,
                     it->log_name, TYPE_NAME[it->dtype], it->log_count, (unsigned long long)it->log_send,
                     (unsigned long long)it->log_recv);
    }
    return u;
}

/* Queues items (all of one communicator and stream) as one unit; on a
 * capturing stream the unit becomes the template of a graph node
 * instead, holding its communicator reference until dropped. */
static ncclResult_t launch_one(item_t *items, int n)
{
    comm_t *c = items[0].comm;
    unit_t *u = malloc(sizeof *u + (size_t)n * sizeof(item_t));
    if (!u) {
        set_last("%s: out of host memory", ME);
        return ncclSystemError;
    }
    u->comm = c;
    u->nitems = n;
    u->dead = 0;
    memcpy(u->items, items, (size_t)n * sizeof(item_t));
    pthread_mutex_lock(&NM);
    c->refs++;
    c->pending++;
    pthread_mutex_unlock(&NM);
    int stream_machine = -1, captured = 0;
    int rc = commbench_standin_enqueue(items[0].stream, c->machine, run_unit, clone_unit, drop_unit, u,
                                       &stream_machine, &captured);
    if (rc == 0 && captured) {
        /* A template is no queued work: ncclCommDestroy need not wait for it. */
        pthread_mutex_lock(&NM);
        c->pending--;
        pthread_cond_broadcast(&NM_cv);
        pthread_mutex_unlock(&NM);
    }
    if (rc == 0)
        return ncclSuccess;
    pthread_mutex_lock(&NM);
    c->pending--;
    comm_release(c);
    pthread_cond_broadcast(&NM_cv);
    pthread_mutex_unlock(&NM);
    free(u);
    if (rc == 400 && stream_machine >= 0) {
        complain("%s: the stream is on GPU %d (machine index) but the communicator on GPU %d", KIND_NAME[items[0].kind],
                 stream_machine, c->machine);
        return ncclInvalidArgument;
    }
    set_last("%s: %s: the CUDA stand-in refused the stream operation: %s", ME, KIND_NAME[items[0].kind],
             commbench_standin_cuda_error_name(rc));
    return ncclUnhandledCudaError;
}

/* Queues a group's items: one unit per communicator and stream, in the
 * order they first appear. */
static ncclResult_t launch(item_t *items, int n)
{
    ncclResult_t rc = ncclSuccess;
    int *taken = calloc((size_t)n, sizeof *taken);
    item_t *part = malloc((size_t)n * sizeof *part);
    if (!taken || !part) {
        free(taken);
        free(part);
        set_last("%s: out of host memory", ME);
        return ncclSystemError;
    }
    for (int i = 0; i < n && rc == ncclSuccess; i++) {
        if (taken[i])
            continue;
        int k = 0;
        for (int j = i; j < n; j++)
            if (!taken[j] && items[j].comm == items[i].comm && items[j].stream == items[i].stream) {
                part[k++] = items[j];
                taken[j] = 1;
            }
        rc = launch_one(part, k);
    }
    free(taken);
    free(part);
    return rc;
}

/* ---------------------------------------------------------------- calls */

static ncclResult_t buffer(const char *call, const char *what, const void *p, size_t bytes, const comm_t *c,
                           char **host)
{
    void *h = NULL;
    int kind = 0, machine = -1;
    int rc = commbench_standin_resolve((uint64_t)(uintptr_t)p, bytes, &h, &kind, &machine);
    if (rc) {
        complain("%s: %s %p does not hold %zu bytes of device memory (it is not allocated, or the range leaves its "
                 "allocation)",
                 call, what, p, bytes);
        return ncclInvalidArgument;
    }
    if (kind == STANDIN_MEM_HOST) {
        complain("%s: %s %p is ordinary host memory, not device memory", call, what, p);
        return ncclInvalidArgument;
    }
    if (kind == STANDIN_MEM_DEVICE && machine != c->machine) {
        complain("%s: %s %p is memory of GPU %d (machine index), but the communicator is on GPU %d", call, what, p,
                 machine, c->machine);
        return ncclInvalidArgument;
    }
    *host = h;
    return ncclSuccess;
}

static ncclResult_t group_error(ncclResult_t rc)
{
    if (rc != ncclSuccess && t_depth > 0 && t_group_err == ncclSuccess)
        t_group_err = rc;
    return rc;
}

static ncclResult_t post(item_t *it)
{
    if (t_depth == 0)
        return launch(it, 1);
    if (t_nitems == t_capitems) {
        int cap = t_capitems ? t_capitems * 2 : 32;
        item_t *n = realloc(t_items, (size_t)cap * sizeof *n);
        if (!n) {
            set_last("%s: out of host memory", ME);
            return group_error(ncclSystemError);
        }
        t_items = n;
        t_capitems = cap;
    }
    t_items[t_nitems++] = *it;
    return ncclSuccess;
}

/* Checks a call and queues it. `send_n` and `recv_n` are the elements
 * each buffer must hold (0: not used on this rank). */
static ncclResult_t call(int kind, const void *sendbuff, void *recvbuff, size_t count, int dtype, int op, int root,
                         int peer, void *comm, void *stream, size_t send_n, size_t recv_n)
{
    pthread_once(&g_fault_once, read_faults);
    const char *name = KIND_NAME[kind];
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    pthread_mutex_unlock(&NM);
    if (!c) {
        complain("%s: %p is not a live communicator", name, comm);
        return group_error(ncclInvalidArgument);
    }
    int err = atomic_load(&c->async_err);
    if (err)
        return group_error(err);
    if (dtype < 0 || dtype >= T_COUNT) {
        complain("%s: datatype %d is not one the stand-in models", name, dtype);
        return group_error(ncclInvalidArgument);
    }
    if (dtype >= T_F8E4M3 && nccl_version() < 22400) {
        complain("%s: datatype %d is not one NCCL %d has (fp8 came with 2.24)", name, dtype, nccl_version());
        return group_error(ncclInvalidArgument);
    }
    int reduces = kind == K_ALLREDUCE || kind == K_REDUCE || kind == K_REDUCE_SCATTER;
    unsigned char scalar[8] = {0};
    if (reduces && op >= OP_COUNT) {
        int i = op - OP_COUNT;
        if (i >= MAX_PREMUL || !c->premul[i].live) {
            complain("%s: reduction %d was not made on this communicator (or was destroyed)", name, op);
            return group_error(ncclInvalidArgument);
        }
        if (c->premul[i].dtype != dtype) {
            complain("%s: reduction %d was made for %s, not %s", name, op, TYPE_NAME[c->premul[i].dtype],
                     dtype >= 0 && dtype < T_COUNT ? TYPE_NAME[dtype] : "?");
            return group_error(ncclInvalidArgument);
        }
        memcpy(scalar, c->premul[i].scalar, sizeof scalar);
        op = OP_PREMUL;
    } else if (reduces && op < 0) {
        complain("%s: reduction %d is not one the stand-in models", name, op);
        return group_error(ncclInvalidArgument);
    }
    if ((kind == K_BROADCAST || kind == K_REDUCE) && (root < 0 || root >= c->n)) {
        complain("%s: root %d is not a rank of this %d-rank communicator", name, root, c->n);
        return group_error(ncclInvalidArgument);
    }
    if ((kind == K_SEND || kind == K_RECV) && (peer < 0 || peer >= c->n)) {
        complain("%s: peer %d is not a rank of this %d-rank communicator", name, peer, c->n);
        return group_error(ncclInvalidArgument);
    }
    if (count == 0)
        return ncclSuccess;
    size_t es = TYPE_SIZE[dtype];
    if (send_n > SIZE_MAX / es || recv_n > SIZE_MAX / es) {
        complain("%s: count %zu is too large", name, count);
        return group_error(ncclInvalidArgument);
    }
    item_t it = {.kind = kind, .dtype = dtype, .op = op, .root = root, .peer = peer, .count = count, .comm = c,
                 .stream = stream, .dsend = (uint64_t)(uintptr_t)sendbuff, .drecv = (uint64_t)(uintptr_t)recvbuff};
    memcpy(it.scalar, scalar, sizeof scalar);
    ncclResult_t rc;
    if (send_n && (rc = buffer(name, "sendbuff", sendbuff, send_n * es, c, &it.send)))
        return group_error(rc);
    if (recv_n && (rc = buffer(name, "recvbuff", recvbuff, recv_n * es, c, &it.recv)))
        return group_error(rc);
    it.index = ++c->ops_called;
    if (kind != K_SEND && kind != K_RECV)
        it.seq = ++c->coll_seq;
    if (!t_composed) {
        it.log_name = name;
        it.log_count = count;
        it.log_send = it.dsend;
        it.log_recv = it.drecv;
    } else if (t_composed_first) {
        t_composed_first = 0;
        it.log_name = t_composed_name;
        it.log_count = t_composed_count;
        it.log_send = t_composed_send;
        it.log_recv = t_composed_recv;
    }
    if (!t_composed)
        log_line("%s: call: pid %d rank %d %s %s count %zu send %#llx recv %#llx\n", ME, (int)getpid(), c->rank, name,
                 TYPE_NAME[dtype], count, (unsigned long long)it.dsend, (unsigned long long)it.drecv);
    return group_error(post(&it));
}

API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, int datatype, int op, void *comm,
                               void *stream)
{
    return call(K_ALLREDUCE, sendbuff, recvbuff, count, datatype, op, 0, 0, comm, stream, count, count);
}

API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, int datatype, void *comm,
                               void *stream)
{
    comm_t *c = comm;
    pthread_mutex_lock(&NM);
    size_t n = comm_of(comm) ? (size_t)c->n : 1;
    pthread_mutex_unlock(&NM);
    size_t recv_n = sendcount > SIZE_MAX / n ? SIZE_MAX : sendcount * n;
    return call(K_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, 0, 0, 0, comm, stream, sendcount, recv_n);
}

API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, int datatype, int op,
                                   void *comm, void *stream)
{
    comm_t *c = comm;
    pthread_mutex_lock(&NM);
    size_t n = comm_of(comm) ? (size_t)c->n : 1;
    pthread_mutex_unlock(&NM);
    size_t send_n = recvcount > SIZE_MAX / n ? SIZE_MAX : recvcount * n;
    return call(K_REDUCE_SCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0, 0, comm, stream, send_n, recvcount);
}

API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, int datatype, int root, void *comm,
                               void *stream)
{
    comm_t *c = comm;
    pthread_mutex_lock(&NM);
    int rank = comm_of(comm) ? c->rank : -1;
    pthread_mutex_unlock(&NM);
    return call(K_BROADCAST, sendbuff, recvbuff, count, datatype, 0, root, 0, comm, stream, rank == root ? count : 0,
                count);
}

API ncclResult_t ncclBcast(void *buff, size_t count, int datatype, int root, void *comm, void *stream)
{
    return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, int datatype, int op, int root,
                            void *comm, void *stream)
{
    comm_t *c = comm;
    pthread_mutex_lock(&NM);
    int rank = comm_of(comm) ? c->rank : -1;
    pthread_mutex_unlock(&NM);
    return call(K_REDUCE, sendbuff, recvbuff, count, datatype, op, root, 0, comm, stream, count,
                rank == root ? count : 0);
}

API ncclResult_t ncclSend(const void *sendbuff, size_t count, int datatype, int peer, void *comm, void *stream)
{
    return call(K_SEND, sendbuff, NULL, count, datatype, 0, 0, peer, comm, stream, count, 0);
}

API ncclResult_t ncclRecv(void *recvbuff, size_t count, int datatype, int peer, void *comm, void *stream)
{
    return call(K_RECV, NULL, recvbuff, count, datatype, 0, 0, peer, comm, stream, 0, count);
}

API ncclResult_t ncclGroupStart(void);
API ncclResult_t ncclGroupEnd(void);

/* ------------------------------------------- NCCL's memory, registration */

/* The CUDA stand-in's allocation calls (libcuda.so.1, linked). */
extern int cuMemAlloc_v2(unsigned long long *dptr, size_t bytes);
extern int cuMemFree_v2(unsigned long long p);

/* What ncclMemAlloc made, and every live registration (a handle is its
 * slot's address), under NM. */
#define MAX_NCCL_MEM 256
static struct {
    uint64_t p;
    size_t bytes;
} g_mem[MAX_NCCL_MEM];
#define MAX_REGS 256
static struct reg {
    comm_t *comm;
    uint64_t p;
    size_t bytes;
    int window, live;
} g_regs[MAX_REGS];

/* The ncclMemAlloc allocation holding [p, p + bytes), or -1. Under NM. */
static int nccl_mem_of(uint64_t p, size_t bytes)
{
    for (int i = 0; i < MAX_NCCL_MEM; i++)
        if (g_mem[i].p && p >= g_mem[i].p && p + bytes <= g_mem[i].p + g_mem[i].bytes)
            return i;
    return -1;
}

API ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    pthread_once(&g_fault_once, read_faults);
    if (nccl_version() < 21900) {
        complain("ncclMemAlloc: NCCL %d has no such call (it came with 2.19)", nccl_version());
        return ncclInvalidUsage;
    }
    if (!ptr)
        return ncclInvalidArgument;
    unsigned long long d = 0;
    if (cuMemAlloc_v2(&d, size ? size : 1) != 0)
        return ncclUnhandledCudaError;
    pthread_mutex_lock(&NM);
    int i = 0;
    while (i < MAX_NCCL_MEM && g_mem[i].p)
        i++;
    if (i == MAX_NCCL_MEM) {
        pthread_mutex_unlock(&NM);
        complain("ncclMemAlloc: more than %d allocations at once", MAX_NCCL_MEM);
        (void)cuMemFree_v2(d);
        return ncclSystemError;
    }
    g_mem[i].p = d;
    g_mem[i].bytes = size ? size : 1;
    pthread_mutex_unlock(&NM);
    *ptr = (void *)(uintptr_t)d;
    log_line("%s: call: pid %d ncclMemAlloc bytes %zu at %#llx\n", ME, (int)getpid(), size, d);
    return ncclSuccess;
}

API ncclResult_t ncclMemFree(void *ptr)
{
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    pthread_mutex_lock(&NM);
    int i = nccl_mem_of(p, 1);
    if (i < 0 || g_mem[i].p != p) {
        pthread_mutex_unlock(&NM);
        complain("ncclMemFree: %p was not made by ncclMemAlloc", ptr);
        return ncclInvalidArgument;
    }
    for (int r = 0; r < MAX_REGS; r++)
        if (g_regs[r].live && g_regs[r].p >= p && g_regs[r].p < p + g_mem[i].bytes) {
            pthread_mutex_unlock(&NM);
            complain("ncclMemFree: %p is still registered with a communicator (deregister it first)", ptr);
            return ncclInvalidUsage;
        }
    g_mem[i].p = 0;
    pthread_mutex_unlock(&NM);
    return cuMemFree_v2(p) ? ncclUnhandledCudaError : ncclSuccess;
}

/* ncclCommRegister (window 0) and ncclCommWindowRegister (window 1): the
 * range must be device memory of the communicator's GPU, and a symmetric
 * window NCCL's own (ncclMemAlloc's). Registration changes nothing here
 * but is checked and logged, and must be undone before the memory is
 * freed and before the communicator goes. */
static ncclResult_t reg(const char *name, void *comm, void *buff, size_t size, void **handle, int window, int flags)
{
    pthread_once(&g_fault_once, read_faults);
    int since = window ? 22700 : 21900;
    if (nccl_version() < since) {
        complain("%s: NCCL %d has no such call (it came with %d.%d)", name, nccl_version(), since / 10000,
                 since / 100 % 100);
        return ncclInvalidUsage;
    }
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    pthread_mutex_unlock(&NM);
    if (!c || !handle) {
        complain("%s: %p is not a live communicator", name, comm);
        return ncclInvalidArgument;
    }
    char *host;
    ncclResult_t rc = buffer(name, "buff", buff, size, c, &host);
    if (rc)
        return rc;
    uint64_t p = (uint64_t)(uintptr_t)buff;
    pthread_mutex_lock(&NM);
    if (window && (flags != 1 || nccl_mem_of(p, size) < 0)) {
        pthread_mutex_unlock(&NM);
        complain("%s: %p is not memory of ncclMemAlloc with NCCL_WIN_COLL_SYMMETRIC (flags %d), which a symmetric "
                 "window needs",
                 name, buff, flags);
        return ncclInvalidArgument;
    }
    int i = 0;
    while (i < MAX_REGS && g_regs[i].live)
        i++;
    if (i == MAX_REGS) {
        pthread_mutex_unlock(&NM);
        complain("%s: more than %d registrations at once", name, MAX_REGS);
        return ncclSystemError;
    }
    g_regs[i] = (struct reg){.comm = c, .p = p, .bytes = size, .window = window, .live = 1};
    pthread_mutex_unlock(&NM);
    *handle = &g_regs[i];
    log_line("%s: call: pid %d rank %d %s bytes %zu at %#llx\n", ME, (int)getpid(), c->rank, name, size,
             (unsigned long long)p);
    return ncclSuccess;
}

static ncclResult_t dereg(const char *name, void *comm, void *handle, int window)
{
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    struct reg *r = handle;
    int ok = c && r >= g_regs && r < g_regs + MAX_REGS && r->live && r->comm == c && r->window == window;
    if (ok)
        r->live = 0;
    pthread_mutex_unlock(&NM);
    if (!ok) {
        complain("%s: %p is not a live %s registration of communicator %p", name, handle,
                 window ? "window" : "buffer", comm);
        return ncclInvalidArgument;
    }
    log_line("%s: call: pid %d rank %d %s bytes %zu at %#llx\n", ME, (int)getpid(), c->rank, name, r->bytes,
             (unsigned long long)r->p);
    return ncclSuccess;
}

API ncclResult_t ncclCommRegister(void *comm, void *buff, size_t size, void **handle)
{
    return reg("ncclCommRegister", comm, buff, size, handle, 0, 0);
}

API ncclResult_t ncclCommDeregister(void *comm, void *handle)
{
    return dereg("ncclCommDeregister", comm, handle, 0);
}

API ncclResult_t ncclCommWindowRegister(void *comm, void *buff, size_t size, void **win, int flags)
{
    return reg("ncclCommWindowRegister", comm, buff, size, win, 1, flags);
}

API ncclResult_t ncclCommWindowDeregister(void *comm, void *win)
{
    return dereg("ncclCommWindowDeregister", comm, win, 1);
}

/* NCCL 2.28's ncclAlltoAll, ncclGather and ncclScatter, made here of
 * grouped sends and receives (what moves, and when, is theirs). An older
 * NCCL has none: a caller that did not check the version is told so. */
static ncclResult_t composed(const char *name, const void *sendbuff, void *recvbuff, size_t count, int datatype,
                             int root, void *comm, void *stream)
{
    pthread_once(&g_fault_once, read_faults);
    if (nccl_version() < 22800) {
        complain("%s: NCCL %d has no such call (it came with 2.28)", name, nccl_version());
        return ncclInvalidUsage;
    }
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    int n = c ? c->n : 0, rank = c ? c->rank : -1;
    pthread_mutex_unlock(&NM);
    if (!c) {
        complain("%s: %p is not a live communicator", name, comm);
        return ncclInvalidArgument;
    }
    if (datatype < 0 || datatype >= T_COUNT) {
        complain("%s: datatype %d is not one the stand-in models", name, datatype);
        return ncclInvalidArgument;
    }
    if (root < 0 || root >= n) {
        complain("%s: root %d is not a rank of this %d-rank communicator", name, root, n);
        return ncclInvalidArgument;
    }
    log_line("%s: call: pid %d rank %d %s %s count %zu send %#llx recv %#llx\n", ME, (int)getpid(), rank, name,
             TYPE_NAME[datatype], count, (unsigned long long)(uintptr_t)sendbuff, (unsigned long long)(uintptr_t)recvbuff);
    size_t block = count * TYPE_SIZE[datatype];
    const char *in = sendbuff;
    char *out = recvbuff;
    int all = strcmp(name, "ncclAlltoAll") == 0, gather = strcmp(name, "ncclGather") == 0;
    t_composed++;
    t_composed_first = 1;
    t_composed_name = name;
    t_composed_count = count;
    t_composed_send = (uint64_t)(uintptr_t)sendbuff;
    t_composed_recv = (uint64_t)(uintptr_t)recvbuff;
    ncclResult_t rc = ncclGroupStart();
    for (int r = 0; r < n && rc == ncclSuccess; r++) {
        if (all) {
            rc = ncclSend(in + r * block, count, datatype, r, comm, stream);
            if (rc == ncclSuccess)
                rc = ncclRecv(out + r * block, count, datatype, r, comm, stream);
        } else if (gather) {
            if (r == 0)
                rc = ncclSend(in, count, datatype, root, comm, stream);
            if (rc == ncclSuccess && rank == root)
                rc = ncclRecv(out + r * block, count, datatype, r, comm, stream);
        } else {
            if (rank == root)
                rc = ncclSend(in + r * block, count, datatype, r, comm, stream);
            if (rc == ncclSuccess && r == 0)
                rc = ncclRecv(out, count, datatype, root, comm, stream);
        }
    }
    ncclResult_t end = ncclGroupEnd();
    t_composed--;
    t_composed_first = 0;
    return rc != ncclSuccess ? rc : end;
}

API ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, int datatype, void *comm,
                              void *stream)
{
    return composed("ncclAlltoAll", sendbuff, recvbuff, count, datatype, 0, comm, stream);
}

API ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, int datatype, int root, void *comm,
                            void *stream)
{
    return composed("ncclGather", sendbuff, recvbuff, count, datatype, root, comm, stream);
}

API ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, int datatype, int root, void *comm,
                             void *stream)
{
    return composed("ncclScatter", sendbuff, recvbuff, count, datatype, root, comm, stream);
}

API ncclResult_t ncclGroupStart(void)
{
    t_depth++;
    return ncclSuccess;
}

API ncclResult_t ncclGroupEnd(void)
{
    if (t_depth == 0) {
        complain("ncclGroupEnd without ncclGroupStart");
        return ncclInvalidUsage;
    }
    if (--t_depth > 0)
        return ncclSuccess;
    ncclResult_t rc = t_group_err;
    if (rc == ncclSuccess && t_nitems > 0)
        rc = launch(t_items, t_nitems);
    t_nitems = 0;
    t_group_err = ncclSuccess;
    return rc;
}

/* --------------------------------------------------------- communicators */

API ncclResult_t ncclGetVersion(int *version)
{
    if (!version)
        return ncclInvalidArgument;
    *version = nccl_version();
    return ncclSuccess;
}

/* A pre-multiplied sum over `comm` of elements of `datatype`, each rank's
 * input first multiplied by the scalar that rank gives here. The scalar is
 * read now, from host memory (ncclScalarHostImmediate); a device scalar is
 * not modelled. */
API ncclResult_t ncclRedOpCreatePreMulSum(int *op, void *scalar, int datatype, int residence, void *comm)
{
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    pthread_mutex_unlock(&NM);
    if (!c || !op || !scalar) {
        complain("ncclRedOpCreatePreMulSum: %s", !c ? "not a live communicator" : "a null pointer");
        return ncclInvalidArgument;
    }
    if (datatype < 0 || datatype >= T_COUNT || (datatype >= T_F8E4M3 && nccl_version() < 22400)) {
        complain("ncclRedOpCreatePreMulSum: datatype %d is not one NCCL %d has", datatype, nccl_version());
        return ncclInvalidArgument;
    }
    if (residence != 1) {
        complain("ncclRedOpCreatePreMulSum: residence %d (a device scalar) is not modelled", residence);
        return ncclInvalidArgument;
    }
    for (int i = 0; i < MAX_PREMUL; i++) {
        if (!c->premul[i].live) {
            c->premul[i].live = 1;
            c->premul[i].dtype = datatype;
            memset(c->premul[i].scalar, 0, sizeof c->premul[i].scalar);
            memcpy(c->premul[i].scalar, scalar, TYPE_SIZE[datatype]);
            *op = OP_COUNT + i;
            return ncclSuccess;
        }
    }
    complain("ncclRedOpCreatePreMulSum: %d operations are live on this communicator already", MAX_PREMUL);
    return ncclInvalidUsage;
}

API ncclResult_t ncclRedOpDestroy(int op, void *comm)
{
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    pthread_mutex_unlock(&NM);
    int i = op - OP_COUNT;
    if (!c || i < 0 || i >= MAX_PREMUL || !c->premul[i].live) {
        complain("ncclRedOpDestroy: %d is not an operation made on this communicator", op);
        return ncclInvalidArgument;
    }
    c->premul[i].live = 0;
    return ncclSuccess;
}

API ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    if (!id)
        return ncclInvalidArgument;
    memset(id, 0, sizeof *id);
    memcpy(id->internal, ID_MAGIC, sizeof ID_MAGIC);
    unsigned char rnd[16];
    size_t got = 0;
    while (got < sizeof rnd) {
        ssize_t k = getrandom(rnd + got, sizeof rnd - got, 0);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            set_last("%s: ncclGetUniqueId: getrandom: %s", ME, strerror(errno));
            return ncclSystemError;
        }
        got += (size_t)k;
    }
    memcpy(id->internal + 16, rnd, sizeof rnd);
    return ncclSuccess;
}

static size_t p2p_chunk_for(int n)
{
    size_t c = ((size_t)8 << 20) / ((size_t)n * (size_t)n);
    if (c > ((size_t)1 << 20))
        c = (size_t)1 << 20;
    if (c < ((size_t)64 << 10))
        c = (size_t)64 << 10;
    return c;
}

static size_t segment_size(int n)
{
    return HDR_SIZE + (size_t)n * COLL_CHUNK + (size_t)n * (size_t)n * (CHAN_HEAD + p2p_chunk_for(n));
}

static double join_timeout_s(void)
{
    const char *s = getenv("COMMBENCH_STANDIN_NCCL_JOIN_TIMEOUT_S");
    if (s && *s) {
        char *end;
        double d = strtod(s, &end);
        if (end != s && *end == 0 && d > 0)
            return d;
    }
    return 30.0;
}

API ncclResult_t ncclCommInitRank(void **out, int nranks, ncclUniqueId id, int rank)
{
    pthread_once(&g_fault_once, read_faults);
    if (!out)
        return ncclInvalidArgument;
    if (nranks < 1 || nranks > MAXR || rank < 0 || rank >= nranks) {
        complain("ncclCommInitRank: rank %d of %d ranks is out of range (the stand-in models 1 to %d ranks)", rank,
                 nranks, MAXR);
        return ncclInvalidArgument;
    }
    if (memcmp(id.internal, ID_MAGIC, sizeof ID_MAGIC) != 0) {
        complain("ncclCommInitRank: the unique id did not come from this stand-in's ncclGetUniqueId");
        return ncclInvalidArgument;
    }
    int machine = -1, ordinal = -1;
    int cu = commbench_standin_current_device(&machine, &ordinal);
    if (cu) {
        set_last("%s: ncclCommInitRank: no usable CUDA device: %s", ME, commbench_standin_cuda_error_name(cu));
        return ncclUnhandledCudaError;
    }
    comm_t *c = calloc(1, sizeof *c);
    if (!c) {
        set_last("%s: out of host memory", ME);
        return ncclSystemError;
    }
    c->magic = COMM_MAGIC;
    c->rank = rank;
    c->n = nranks;
    c->machine = machine;
    c->ordinal = ordinal;
    c->refs = 1;
    c->cta_policy = -1;
    const unsigned char *r = (const unsigned char *)id.internal + 16;
    int k = snprintf(c->shm_name, sizeof c->shm_name, "/commbench-nccl-");
    for (int i = 0; i < 16; i++)
        k += snprintf(c->shm_name + k, sizeof c->shm_name - (size_t)k, "%02x", r[i]);
    int fd = shm_open(c->shm_name, O_RDWR | O_CREAT, 0600);
    size_t size = segment_size(nranks);
    int e = fd < 0 ? errno : posix_fallocate(fd, 0, (off_t)size);
    if (e) {
        if (fd >= 0)
            close(fd);
        set_last("%s: ncclCommInitRank: shared memory %s: %s", ME, c->shm_name, strerror(e));
        free(c);
        return ncclSystemError;
    }
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        set_last("%s: ncclCommInitRank: mmap %s: %s", ME, c->shm_name, strerror(errno));
        free(c);
        return ncclSystemError;
    }
    c->h = map;
    c->map_size = size;
    c->coll = (char *)map + HDR_SIZE;
    c->p2p_chunk = p2p_chunk_for(nranks);
    c->chan_stride = CHAN_HEAD + c->p2p_chunk;
    c->chans = c->coll + (size_t)nranks * COLL_CHUNK;
    struct shm_hdr *h = c->h;
    ncclResult_t rc = ncclSuccess;
    uint32_t zero = 0;
    if (!atomic_compare_exchange_strong(&h->nranks, &zero, (uint32_t)nranks) && zero != (uint32_t)nranks) {
        complain("ncclCommInitRank: rank %d says the communicator has %d ranks, another rank said %u", rank, nranks,
                 zero);
        rc = ncclInvalidArgument;
    }
    int32_t none = 0;
    if (rc == ncclSuccess && !atomic_compare_exchange_strong(&h->pid[rank], &none, (int32_t)getpid())) {
        complain("ncclCommInitRank: rank %d joined twice (process %d, then %d)", rank, none, (int)getpid());
        rc = ncclInvalidUsage;
    }
    if (rc == ncclSuccess) {
        atomic_store(&h->gpu[rank], machine + 1);
        atomic_fetch_add(&h->joined, 1);
        fwake(&h->joined);
        int64_t deadline = commbench_standin_now_ns() + (int64_t)(join_timeout_s() * 1e9);
        for (;;) {
            uint32_t j = atomic_load(&h->joined);
            if (j >= (uint32_t)nranks)
                break;
            if (commbench_standin_now_ns() > deadline) {
                complain("ncclCommInitRank: only %u of %d ranks joined within %.0f s (segment %s); the others never "
                         "called ncclCommInitRank with this id",
                         j, nranks, join_timeout_s(), c->shm_name);
                shm_unlink(c->shm_name);
                rc = ncclSystemError;
                break;
            }
            fwait(&h->joined, j, 100);
        }
    }
    if (rc == ncclSuccess) {
        uint32_t was = 0;
        if (atomic_compare_exchange_strong(&h->unlinked, &was, 1))
            shm_unlink(c->shm_name);
        for (int i = 0; i < nranks; i++)
            c->gpus[i] = atomic_load(&h->gpu[i]) - 1;
        for (int i = 0; i < nranks && rc == ncclSuccess; i++)
            for (int j = i + 1; j < nranks; j++)
                if (c->gpus[i] == c->gpus[j]) {
                    const struct standin_gpu *g = &commbench_standin_machine()->gpu[c->gpus[i]];
                    if (rank == i || rank == j)
                        complain("ncclCommInitRank: duplicate GPU: ranks %d and %d are both on GPU %d (%04x:%02x:00.0); "
                                 "one rank per GPU",
                                 i, j, c->gpus[i], g->pci_domain, g->pci_bus);
                    else
                        set_last("%s: ncclCommInitRank: duplicate GPU: ranks %d and %d are both on GPU %d", ME, i, j,
                                 c->gpus[i]);
                    rc = ncclInvalidUsage;
                    break;
                }
    }
    if (rc != ncclSuccess) {
        munmap(c->h, c->map_size);
        free(c);
        return rc;
    }
    double slowest = 0;
    for (int i = 0; i < nranks && nranks > 1; i++) {
        double rate = commbench_standin_pair_rate(c->gpus[i], c->gpus[(i + 1) % nranks]);
        if (slowest == 0 || rate < slowest)
            slowest = rate;
    }
    c->ring_rate = slowest;
    pthread_mutex_lock(&NM);
    c->next = g_comms;
    g_comms = c;
    pthread_mutex_unlock(&NM);
    *out = c;
    return ncclSuccess;
}

/* ncclConfig_t's leading fields as NCCL 2.27 lays them out; a caller's
 * config may be longer (a later layout) or end before CTAPolicy (an
 * earlier one), as its `size` says. */
struct config_2_27 {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking, cgaClusterSize, minCTAs, maxCTAs;
    const char *netName;
    int splitShare, trafficClass;
    const char *commName;
    int collnetEnable, CTAPolicy;
};

#define CONFIG_MAGIC 0xcafebeefu
#define CONFIG_UNDEF_INT INT_MIN

/* As ncclCommInitRank, with a config: refused unless it was initialised
 * (NCCL_CONFIG_INITIALIZER's magic, a size that holds the header); its
 * CTA policy, where its layout has one and it is set, is kept on the
 * communicator and said in the call log. */
API ncclResult_t ncclCommInitRankConfig(void **out, int nranks, ncclUniqueId id, int rank, void *config)
{
    pthread_once(&g_fault_once, read_faults);
    const struct config_2_27 *cfg = config;
    int policy = CONFIG_UNDEF_INT;
    if (cfg) {
        if (cfg->magic != CONFIG_MAGIC || cfg->size < offsetof(struct config_2_27, blocking)) {
            complain("ncclCommInitRankConfig: the config was not made with NCCL_CONFIG_INITIALIZER (magic %#x, size %zu)",
                     cfg->magic, cfg->size);
            return ncclInvalidArgument;
        }
        if (cfg->size >= offsetof(struct config_2_27, CTAPolicy) + sizeof(int) && cfg->version >= 22700)
            policy = cfg->CTAPolicy;
    }
    ncclResult_t rc = ncclCommInitRank(out, nranks, id, rank);
    if (rc == ncclSuccess && policy != CONFIG_UNDEF_INT) {
        comm_t *c = *out;
        c->cta_policy = policy;
        if (g_calls >= 0) {
            char line[160];
            int n = snprintf(line, sizeof line, "%s: call: pid %d rank %d ncclCommInitRankConfig CTAPolicy %d\n", ME,
                             (int)getpid(), rank, policy);
            if (n > 0 && (size_t)n < sizeof line)
                (void)!write(g_calls, line, (size_t)n);
        }
    }
    return rc;
}

static void comm_unregister(comm_t *c)
{
    /* NM held */
    for (comm_t **pp = &g_comms; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
}

static void wake_all(comm_t *c)
{
    fwake(&c->h->bar_gen);
    for (int i = 0; i < c->n; i++)
        fwake(&c->h->bell[i]);
}

API ncclResult_t ncclCommAbort(void *comm)
{
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    if (!c) {
        pthread_mutex_unlock(&NM);
        return ncclInvalidArgument;
    }
    atomic_store(&c->aborted, 1);
    wake_all(c);
    comm_unregister(c);
    comm_release(c);
    pthread_mutex_unlock(&NM);
    return ncclSuccess;
}

API ncclResult_t ncclCommDestroy(void *comm)
{
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    if (!c) {
        pthread_mutex_unlock(&NM);
        return ncclInvalidArgument;
    }
    int regs = 0;
    for (int r = 0; r < MAX_REGS; r++)
        if (g_regs[r].live && g_regs[r].comm == c) {
            g_regs[r].live = 0;
            regs++;
        }
    if (regs)
        complain("ncclCommDestroy: %d buffer registrations were still live on communicator rank %d (deregister "
                 "them first)",
                 regs, c->rank);
    comm_unregister(c);
    /* Its queued work finishes first; with an asynchronous error pending
     * there is nothing to wait for, so it goes as with ncclCommAbort. */
    while (c->pending > 0 && !atomic_load(&c->async_err)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&NM_cv, &NM, &ts);
    }
    if (c->pending > 0) {
        atomic_store(&c->aborted, 1);
        wake_all(c);
    }
    comm_release(c);
    pthread_mutex_unlock(&NM);
    return ncclSuccess;
}

API ncclResult_t ncclCommGetAsyncError(void *comm, ncclResult_t *state)
{
    if (!state)
        return ncclInvalidArgument;
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    if (c)
        *state = atomic_load(&c->async_err);
    pthread_mutex_unlock(&NM);
    return c ? ncclSuccess : ncclInvalidArgument;
}

API ncclResult_t ncclCommCount(const void *comm, int *count)
{
    if (!count)
        return ncclInvalidArgument;
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    if (c)
        *count = c->n;
    pthread_mutex_unlock(&NM);
    return c ? ncclSuccess : ncclInvalidArgument;
}

API ncclResult_t ncclCommUserRank(const void *comm, int *rank)
{
    if (!rank)
        return ncclInvalidArgument;
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    if (c)
        *rank = c->rank;
    pthread_mutex_unlock(&NM);
    return c ? ncclSuccess : ncclInvalidArgument;
}

API ncclResult_t ncclCommCuDevice(const void *comm, int *device)
{
    if (!device)
        return ncclInvalidArgument;
    pthread_mutex_lock(&NM);
    comm_t *c = comm_of(comm);
    if (c)
        *device = c->ordinal;
    pthread_mutex_unlock(&NM);
    return c ? ncclSuccess : ncclInvalidArgument;
}

API const char *ncclGetErrorString(ncclResult_t code)
{
    switch (code) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled CUDA error (the CUDA stand-in refused a call)";
    case ncclSystemError: return "system error (an operating system call failed, or a failure was injected)";
    case ncclInternalError: return "internal error in the NCCL stand-in";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclRemoteError: return "remote error: another rank failed";
    case ncclInProgress: return "operation in progress";
    default: return "unknown NCCL result code";
    }
}

API const char *ncclGetLastError(void *comm)
{
    (void)comm;
    return g_last;
}
