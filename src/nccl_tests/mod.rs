//! The nccl-tests front end (issue 43): what `all_reduce_perf` and its
//! siblings read and print, as nccl-tests 2.19.6 does, over the shared
//! measurement core. So far its command line ([`cli`]) and environment
//! ([`env`]), with C's number readers behind them ([`c_num`]); the
//! binaries follow.
#![cfg_attr(not(test), allow(dead_code, reason = "the *_perf binaries (issue 43) use it; unit tests pin it"))]

pub(crate) mod c_num;
pub mod cli;
pub mod env;
