//! osu_latency_persistent: osu_latency's ping-pong through a send and a receive request bound
//! once per size (MPI_Send_init, MPI_Recv_init), each started and
//! completed in turn (MPI_Start and MPI_Wait, as MPI_Startall of one). Binding and freeing are untimed, as in OSU; the
//! rest is osu_latency's (pt2pt/posting.rs).

use crate::bench::pt2pt::latency::{PingPongBench, SPEC as STANDARD};
use crate::bench::pt2pt::posting::persistent_point_to_point_bench;
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec =
    BenchSpec { name: "osu_latency_persistent", title: "OSU MPI Latency Persistent Test", ..STANDARD };

persistent_point_to_point_bench!(LatencyPersistent, PingPongBench::pair);
