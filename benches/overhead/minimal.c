/*
 * The smallest honest C loops for the two measurements commbench's
 * osu_latency and osu_bw make, used by scripts/bench-overhead.sh to show
 * what the Rust harness adds (nothing, we hope). Same calls, same counts,
 * same timer, same formulas; no options beyond what the script needs.
 *
 *   minimal lat MAX [ITERS WARMUP]   ping-pong, prints "size one_way_latency_us"
 *   minimal bw  MAX [ITERS WARMUP]   window of 64 Isends + 1-byte ack, prints "size MB/s"
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

int main(int argc, char **argv) {
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if ((argc != 3 && argc != 5) || np != 2 || (strcmp(argv[1], "lat") && strcmp(argv[1], "bw"))) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 minimal lat|bw MAX_BYTES [ITERS WARMUP]\n");
        MPI_Finalize();
        return 1;
    }
    long max = atol(argv[2]);
    if (argc == 5) {
        fixed_iters = atoi(argv[3]);
        fixed_skip = atoi(argv[4]);
    }
    char *s, *r;
    if (posix_memalign((void **)&s, 4096, max) || posix_memalign((void **)&r, 4096, max)) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (!strcmp(argv[1], "lat"))
        ping_pong(rank, s, r, max);
    else
        window_bw(rank, s, r, max);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
