//! The nccl-tests front end (issue 43): what `all_reduce_perf` and its
//! siblings read and print, as nccl-tests 2.19.6 does, over the shared
//! measurement core. So far its command line ([`cli`]) and environment
//! ([`env`]; alltoallv's pattern and matrix file, [`traffic_file`]), with
//! C's number readers behind them ([`crate::c_num`]), and the binaries'
//! run over the runner ([`run`]).

pub mod cli;
pub mod env;
pub mod run;
pub(crate) mod traffic_file;
