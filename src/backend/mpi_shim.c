/* Predefined MPI handles that the rsmpi ffi does not export. They are
 * link-time constants or macros in the MPI headers, so C hands them over. */
#include <mpi.h>

MPI_Datatype commbench_mpi_char(void) { return MPI_CHAR; }
MPI_Datatype commbench_mpi_int(void) { return MPI_INT; }
MPI_Datatype commbench_mpi_float(void) { return MPI_FLOAT; }
MPI_Datatype commbench_mpi_double(void) { return MPI_DOUBLE; }
MPI_Datatype commbench_mpi_uint8(void) { return MPI_UINT8_T; }
MPI_Datatype commbench_mpi_uint32(void) { return MPI_UINT32_T; }
MPI_Datatype commbench_mpi_int64(void) { return MPI_INT64_T; }
MPI_Datatype commbench_mpi_uint64(void) { return MPI_UINT64_T; }
MPI_Datatype commbench_mpi_unsigned_long_long(void) { return MPI_UNSIGNED_LONG_LONG; }
MPI_Op commbench_mpi_sum(void) { return MPI_SUM; }
MPI_Op commbench_mpi_prod(void) { return MPI_PROD; }
MPI_Op commbench_mpi_min(void) { return MPI_MIN; }
MPI_Op commbench_mpi_max(void) { return MPI_MAX; }
void *commbench_mpi_in_place(void) { return MPI_IN_PLACE; }

/* MPI-4's persistent collectives (MPI_X_init), with the argument list of
 * the matching MPI_IX plus MPI_INFO_NULL. Built against an MPI-3 header
 * (Open MPI 4.1) each entry point only reports MPI_ERR_OTHER, and
 * commbench_mpi_persistent_collectives() says 0: the benchmarks that need
 * them refuse to run before any is called. */
#if MPI_VERSION >= 4
#define PERSISTENT 1
#define BODY(call) return call;
#else
#define PERSISTENT 0
#define BODY(call) return MPI_ERR_OTHER;
/* The stubs take their twin's arguments and use none of them. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif

int commbench_mpi_persistent_collectives(void) { return PERSISTENT; }

int commbench_barrier_init(MPI_Comm c, MPI_Request *r) { BODY(MPI_Barrier_init(c, MPI_INFO_NULL, r)) }
int commbench_allreduce_init(const void *s, void *d, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *r) {
    BODY(MPI_Allreduce_init(s, d, n, t, op, c, MPI_INFO_NULL, r))
}
int commbench_bcast_init(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *r) {
    BODY(MPI_Bcast_init(b, n, t, root, c, MPI_INFO_NULL, r))
}
int commbench_reduce_init(const void *s, void *d, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c,
                          MPI_Request *r) {
    BODY(MPI_Reduce_init(s, d, n, t, op, root, c, MPI_INFO_NULL, r))
}
int commbench_allgather_init(const void *s, int sn, MPI_Datatype st, void *d, int dn, MPI_Datatype dt, MPI_Comm c,
                             MPI_Request *r) {
    BODY(MPI_Allgather_init(s, sn, st, d, dn, dt, c, MPI_INFO_NULL, r))
}
int commbench_alltoall_init(const void *s, int sn, MPI_Datatype st, void *d, int dn, MPI_Datatype dt, MPI_Comm c,
                            MPI_Request *r) {
    BODY(MPI_Alltoall_init(s, sn, st, d, dn, dt, c, MPI_INFO_NULL, r))
}
int commbench_gather_init(const void *s, int sn, MPI_Datatype st, void *d, int dn, MPI_Datatype dt, int root,
                          MPI_Comm c, MPI_Request *r) {
    BODY(MPI_Gather_init(s, sn, st, d, dn, dt, root, c, MPI_INFO_NULL, r))
}
int commbench_scatter_init(const void *s, int sn, MPI_Datatype st, void *d, int dn, MPI_Datatype dt, int root,
                           MPI_Comm c, MPI_Request *r) {
    BODY(MPI_Scatter_init(s, sn, st, d, dn, dt, root, c, MPI_INFO_NULL, r))
}
int commbench_reduce_scatter_init(const void *s, void *d, const int n[], MPI_Datatype t, MPI_Op op, MPI_Comm c,
                                  MPI_Request *r) {
    BODY(MPI_Reduce_scatter_init(s, d, n, t, op, c, MPI_INFO_NULL, r))
}
int commbench_reduce_scatter_block_init(const void *s, void *d, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                                        MPI_Request *r) {
    BODY(MPI_Reduce_scatter_block_init(s, d, n, t, op, c, MPI_INFO_NULL, r))
}
int commbench_allgatherv_init(const void *s, int sn, MPI_Datatype st, void *d, const int dn[], const int dd[],
                              MPI_Datatype dt, MPI_Comm c, MPI_Request *r) {
    BODY(MPI_Allgatherv_init(s, sn, st, d, dn, dd, dt, c, MPI_INFO_NULL, r))
}
int commbench_gatherv_init(const void *s, int sn, MPI_Datatype st, void *d, const int dn[], const int dd[],
                           MPI_Datatype dt, int root, MPI_Comm c, MPI_Request *r) {
    BODY(MPI_Gatherv_init(s, sn, st, d, dn, dd, dt, root, c, MPI_INFO_NULL, r))
}
int commbench_scatterv_init(const void *s, const int sn[], const int sd[], MPI_Datatype st, void *d, int dn,
                            MPI_Datatype dt, int root, MPI_Comm c, MPI_Request *r) {
    BODY(MPI_Scatterv_init(s, sn, sd, st, d, dn, dt, root, c, MPI_INFO_NULL, r))
}
int commbench_alltoallv_init(const void *s, const int sn[], const int sd[], MPI_Datatype st, void *d, const int dn[],
                             const int dd[], MPI_Datatype dt, MPI_Comm c, MPI_Request *r) {
    BODY(MPI_Alltoallv_init(s, sn, sd, st, d, dn, dd, dt, c, MPI_INFO_NULL, r))
}
int commbench_alltoallw_init(const void *s, const int sn[], const int sd[], const MPI_Datatype st[], void *d,
                             const int dn[], const int dd[], const MPI_Datatype dt[], MPI_Comm c, MPI_Request *r) {
    BODY(MPI_Alltoallw_init(s, sn, sd, st, d, dn, dd, dt, c, MPI_INFO_NULL, r))
}
