//! What runs any benchmark: the plan (the run as one value), one measuring
//! loop over it, the timed loop, the memory estimate, the dry run,
//! validation, efficiency against the path's peak, and the runner (the
//! process around it).

pub mod dry_run;
pub mod efficiency;
pub mod measure;
pub mod memory;
pub mod plan;
pub mod runner;
pub mod timed_loop;
pub mod validation;
