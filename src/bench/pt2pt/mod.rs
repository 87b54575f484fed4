//! The point-to-point benchmarks, a file each, beside what they share: the
//! fan-in/fan-out shape and the posting of windows of messages.

pub mod bibw;
pub mod bibw_persistent;
pub mod bw;
pub mod bw_fan_in;
pub mod bw_fan_out;
pub mod bw_persistent;
pub mod fan;
pub mod latency;
pub mod latency_mp;
pub mod latency_mt;
pub mod latency_persistent;
pub mod mbw_mr;
pub mod multi_lat;
pub(crate) mod posting;
