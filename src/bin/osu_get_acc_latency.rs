//! osu_get_acc_latency, OSU 7.4 compatible.
use commbench::bench::{engine::runner, rma::get_acc_latency::GetAccLatency};

fn main() {
    runner::main_rma::<GetAccLatency>()
}
