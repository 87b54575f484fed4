/*
 * The smallest honest C loops for the two measurements commbench's
 * osu_latency and osu_bw make, used by scripts/bench-overhead.sh to show
 * what the Rust harness adds (nothing, we hope). Same calls, same counts,
 * same timer, same formulas; no options beyond what the script needs.
 *
 *   minimal lat MAX [ITERS WARMUP]   ping-pong, prints "size one_way_latency_us"
 *   minimal bw  MAX [ITERS WARMUP]   window of 64 Isends + 1-byte ack, prints "size MB/s"
 *   minimal allreduce MAX [ITERS WARMUP]
 *                                    MPI_Allreduce (MPI_CHAR, MPI_SUM) timed, barrier after,
 *                                    prints "size latency_us" averaged over ranks
 *
 * The allreduce mode also makes, untimed, the same MPI calls commbench
 * makes around its loop (a communicator split and a few small collectives
 * at start-up; a gather of each rank's mean and a reduction of the
 * per-iteration times after each size). With Open MPI's shared-memory
 * transport, 1-8 byte allreduce times settle into one of two levels
 * (about 0.45 or 0.9 us here) depending on that call history: without it
 * the two programs differ by up to +-19% at those sizes, in both
 * directions, for reasons that have nothing to do with the timed loop.
 *
 * Without ITERS/WARMUP the OSU defaults apply (switching above 8192 bytes).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define LARGE 8192

static int fixed_iters = 0, fixed_skip = -1;

static void ping_pong(int rank, char *s, char *r, long max) {
    for (long size = 1; size <= max; size *= 2) {
        int iters = fixed_iters ? fixed_iters : size > LARGE ? 1000 : 10000;
        int skip = fixed_skip >= 0 ? fixed_skip : size > LARGE ? 10 : 100;
        memset(s, 'a', size);
        memset(r, 'b', size);
        MPI_Barrier(MPI_COMM_WORLD);
        double total = 0.0;
        for (int i = 0; i < iters + skip; i++) {
            if (rank == 0) {
                double t0 = MPI_Wtime();
                MPI_Send(s, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(r, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double t1 = MPI_Wtime();
                if (i >= skip) total += t1 - t0;
            } else {
                MPI_Recv(r, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(s, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        if (rank == 0) printf("%ld %.9f\n", size, total * 1e6 / (2.0 * iters));
    }
}

static void window_bw(int rank, char *s, char *r, long max) {
    MPI_Request reqs[WINDOW];
    for (long size = 1; size <= max; size *= 2) {
        int iters = fixed_iters ? fixed_iters : size > LARGE ? 20 : 100;
        int skip = fixed_skip >= 0 ? fixed_skip : size > LARGE ? 2 : 10;
        memset(s, 'a', size);
        memset(r, 'b', size);
        MPI_Barrier(MPI_COMM_WORLD);
        double total = 0.0;
        for (int i = 0; i < iters + skip; i++) {
            if (rank == 0) {
                double t0 = MPI_Wtime();
                for (int j = 0; j < WINDOW; j++)
                    MPI_Isend(s, (int)size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &reqs[j]);
                MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
                MPI_Recv(r, 1, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double t1 = MPI_Wtime();
                if (i >= skip) total += t1 - t0;
            } else {
                for (int j = 0; j < WINDOW; j++)
                    MPI_Irecv(r, (int)size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &reqs[j]);
                MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
                MPI_Send(s, 1, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
            }
        }
        if (rank == 0) printf("%ld %.6f\n", size, size / 1e6 * iters * WINDOW / total);
    }
}

static void allreduce(int rank, int np, char *s, char *r, long max) {
    int most = fixed_iters ? fixed_iters : 1000;
    double *samples = calloc(most, sizeof(double)), *sums = calloc(most, sizeof(double));
    double *means = calloc(np, sizeof(double));
    /* commbench's start-up calls: node split, two agreements, a broadcast,
       the placement gather */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_free(&node);
    unsigned long long x = 0, y;
    MPI_Allreduce(&x, &y, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&x, &y, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(&x, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    int len = 120, *lens = calloc(np, sizeof(int)), *displs = calloc(np, sizeof(int));
    char info[120] = {0}, *all = calloc(np, 120);
    for (int k = 0; k < np; k++) displs[k] = 120 * k;
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(info, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (long size = 1; size <= max; size *= 2) {
        int iters = fixed_iters ? fixed_iters : size > LARGE ? 100 : 1000;
        int skip = fixed_skip >= 0 ? fixed_skip : size > LARGE ? 10 : 100;
        MPI_Barrier(MPI_COMM_WORLD);
        double total = 0.0;
        for (int i = 0; i < iters + skip; i++) {
            double t0 = MPI_Wtime();
            MPI_Allreduce(s, r, (int)size, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD);
            if (i >= skip) {
                total += t1 - t0;
                samples[i - skip] = t1 - t0;
            }
        }
        double mine = total * 1e6 / iters, sum = 0.0;
        MPI_Gather(&mine, 1, MPI_DOUBLE, means, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Reduce(samples, sums, iters, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        for (int k = 0; k < np && rank == 0; k++) sum += means[k];
        if (rank == 0) printf("%ld %.9f\n", size, sum / np);
    }
    free(samples), free(sums), free(means), free(lens), free(displs), free(all);
}

int main(int argc, char **argv) {
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int coll = argc > 1 && !strcmp(argv[1], "allreduce");
    if ((argc != 3 && argc != 5) || (np != 2 && !coll) ||
        (strcmp(argv[1], "lat") && strcmp(argv[1], "bw") && !coll)) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 minimal lat|bw|allreduce MAX_BYTES [ITERS WARMUP]\n");
        MPI_Finalize();
        return 1;
    }
    long max = atol(argv[2]);
    if (argc == 5) {
        fixed_iters = atoi(argv[3]);
        fixed_skip = atoi(argv[4]);
    }
    char *s = NULL, *r = NULL;
    if (posix_memalign((void **)&s, 4096, max) || posix_memalign((void **)&r, 4096, max)) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (coll) {
        memset(s, 1, max);
        memset(r, 0, max);
        allreduce(rank, np, s, r, max);
    } else if (!strcmp(argv[1], "lat")) {
        ping_pong(rank, s, r, max);
    } else {
        window_bw(rank, s, r, max);
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
