/* Predefined MPI handles that the rsmpi ffi does not export. They are
 * link-time constants or macros in the MPI headers, so C hands them over. */
#include <mpi.h>

MPI_Datatype commbench_mpi_char(void) { return MPI_CHAR; }
MPI_Datatype commbench_mpi_int(void) { return MPI_INT; }
MPI_Datatype commbench_mpi_float(void) { return MPI_FLOAT; }
MPI_Datatype commbench_mpi_double(void) { return MPI_DOUBLE; }
MPI_Datatype commbench_mpi_unsigned_long_long(void) { return MPI_UNSIGNED_LONG_LONG; }
MPI_Op commbench_mpi_sum(void) { return MPI_SUM; }
MPI_Op commbench_mpi_min(void) { return MPI_MIN; }
MPI_Op commbench_mpi_max(void) { return MPI_MAX; }
void *commbench_mpi_in_place(void) { return MPI_IN_PLACE; }
