//! Is this number good? The peak of each path a benchmark's bytes take,
//! from the machine and never from a product name: a NIC's link rate and
//! its PCIe link (`link.rs`, `pcie.rs`, sysfs), the machine's own copy rate
//! for shared memory (`copy_rate.rs`, measured before anything is timed);
//! the paths of a run joined from every rank's end (`path.rs`); and the
//! plateau of a bandwidth curve judged against its path (`verdict.rs`,
//! `--min-efficiency`). Where a figure cannot be known the peak is unknown
//! and says why.

pub mod copy_rate;
pub mod link;
pub mod path;
pub mod pcie;
pub mod verdict;

pub use path::{PathClass, PathPeak, RankEnd};
