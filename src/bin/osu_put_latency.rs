//! osu_put_latency, OSU 7.4 compatible.
use commbench::{bench::rma::put_latency::PutLatency, runner};

fn main() {
    runner::main_rma::<PutLatency>()
}
