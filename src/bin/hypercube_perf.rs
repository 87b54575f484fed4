//! hypercube_perf, nccl-tests 2.19.6 compatible: an allgather by hypercube exchanges over the shared core.
use commbench::{bench::collective::hypercube::HyperCube, nccl_tests};

fn main() {
    nccl_tests::run::main::<HyperCube>()
}
