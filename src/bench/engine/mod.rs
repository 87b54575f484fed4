//! What runs any benchmark: the plan (the run as one value), one measuring
//! loop over it, the timed loop, the memory estimate, the dry run,
//! validation, efficiency against the path's peak.
//! The process around it, from argv to exit status, is [`crate::runner`].

pub(crate) mod dry_run;
pub mod efficiency;
pub mod measure;
pub mod memory;
pub mod plan;
pub(crate) mod timed_loop;
pub mod validation;
