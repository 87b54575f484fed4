//! osu_cas_latency, OSU 7.4 compatible.
use commbench::bench::{engine::runner, rma::cas_latency::CasLatency};

fn main() {
    runner::main_rma::<CasLatency>()
}
