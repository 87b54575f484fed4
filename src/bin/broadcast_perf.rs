//! broadcast_perf, nccl-tests 2.19.6 compatible: its collective over the shared core.
use commbench::{bench::collective::bcast::Bcast, nccl_tests};

fn main() {
    nccl_tests::run::main::<Bcast>()
}
