//! alltoallv_perf, nccl-tests 2.19.6 compatible: an all-to-all of a traffic pattern's amounts per pair over the shared core.
use commbench::{bench::collective::alltoallv_traffic::AlltoallvTraffic, nccl_tests};

fn main() {
    nccl_tests::run::main::<AlltoallvTraffic>()
}
