//! commbench: OSU Micro-Benchmarks 7.4 compatible communication benchmarks
//! with machine-readable results. The binaries in `src/bin` are thin; the
//! library's modules, by layer (ARCHITECTURE.md's, which
//! scripts/modgraph.py checks: a module uses only its own layer and those
//! below):
//! - what a user starts: [`runner`] (an OSU binary, argv to exit status)
//!   and the subcommands [`suite`], [`locate`], [`pairs`], [`gpu_bw`],
//!   [`ab`], [`history`], [`plot`], [`compare`], [`list`];
//! - [`launch`] (jobs through mpirun, mpiexec or srun) and [`cli`] (OSU's
//!   option grammar);
//! - [`bench`]: the benchmarks and the engine that measures them;
//! - [`job`]: one job's life on every rank (placement, watchdog, signals);
//! - [`report`]: the outputs, which take values (tables, CSV, run record);
//! - [`options`] (the parsed options) and [`peak`] (what a path carries);
//! - [`spec`]: the descriptor every benchmark fills in;
//! - [`backend`]: the transport seam (MPI, UCX, NCCL);
//! - [`gpu`]: CUDA, NCCL and NVML opened at run time;
//! - [`topo`] (hwloc, placement policy) and [`buffer`] (host memory,
//!   patterns);
//! - leaves: [`args`], [`text`], [`fatal`], [`diag`], [`procs`],
//!   [`input_file`], [`bytes`], [`datatype`], [`stats`], [`matrix`],
//!   [`traffic`].

pub mod ab;
pub mod args;
pub mod backend;
pub mod bench;
pub mod buffer;
pub mod bytes;
pub(crate) mod c_num;
pub mod cli;
pub mod compare;
pub mod datatype;
pub mod diag;
pub(crate) mod fatal;
pub mod gpu;
pub mod gpu_bw;
pub mod history;
pub(crate) mod input_file;
pub mod job;
pub mod launch;
pub mod list;
pub mod locate;
pub mod matrix;
pub mod nccl_tests;
pub mod options;
pub mod pairs;
pub mod peak;
pub mod plot;
pub mod procs;
pub mod report;
pub mod runner;
pub mod spec;
pub(crate) mod stats;
pub mod suite;
pub mod text;
pub mod topo;
pub mod traffic;

/// commbench's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit the binaries were built from (`-dirty` with local changes).
pub(crate) const GIT_COMMIT: &str = env!("COMMBENCH_GIT_COMMIT");
/// The OSU Micro-Benchmarks version whose behaviour and output we follow.
pub const OSU_VERSION: &str = "7.4";
