//! osu_put_bibw: MPI_Put bandwidth both ways, each rank putting a window (-W)
//! to the other per epoch; active target only (-s pscw or fence), as in OSU
//! (bench/rma/mod.rs has the kernel).

use crate::bench::rma::{self, Op, Shape};
use crate::spec::BenchSpec;

pub(crate) const SPEC: BenchSpec = BenchSpec {
    name: "osu_put_bibw",
    title: "OSU MPI_Put Bi-directional Bandwidth Test",
    one_sided: Some(&rma::ACTIVE_ONLY),
    duplex: true,
    ..crate::bench::rma::put_bw::SPEC
};

rma::one_sided_bench!(PutBibw, Op::Put, Shape::BiBandwidth);
