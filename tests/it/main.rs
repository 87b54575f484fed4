//! The integration tests, one binary: each module is the tests of one
//! area, launching the real binaries (see common/ for how).

#[macro_use]
mod common;

mod bad_input;
mod bandwidth_test;
mod build_env;
mod collectives;
mod compare;
mod docs;
mod dropin;
mod efficiency;
mod fan;
mod faults;
mod gpu;
mod gpu_bw;
mod gpu_cells;
mod gpu_check;
mod gpu_nccl;
mod gpu_standin;
mod harness;
mod history;
mod kernels;
mod layout;
mod limits;
mod locate;
mod nbc;
mod nccl_lib;
mod nccl_tests;
mod neighborhood;
mod nvbandwidth;
mod one_launch;
mod p2p_test;
mod pairs;
mod persistent;
mod placement;
mod reframe;
mod results;
mod rma;
mod safe_files;
mod signals;
mod slurm;
mod startup;
mod suite;
mod ucx;
mod watchdog;
