//! osu_put_latency, OSU 7.4 compatible.
use commbench::bench::{engine::runner, rma::put_latency::PutLatency};

fn main() {
    runner::main_rma::<PutLatency>()
}
