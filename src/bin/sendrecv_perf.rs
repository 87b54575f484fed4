//! sendrecv_perf, nccl-tests 2.19.6 compatible: a ring of sends and receives over the shared core.
use commbench::{bench::collective::sendrecv::SendRecv, nccl_tests};

fn main() {
    nccl_tests::run::main::<SendRecv>()
}
