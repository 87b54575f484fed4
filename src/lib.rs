//! commbench: OSU Micro-Benchmarks 7.4 compatible communication benchmarks
//! with machine-readable results. The binaries in `src/bin` are thin; the
//! library holds option parsing (`cli`), the benchmarks and their shared
//! measurement loop (`bench`), transports (`backend`), buffers, statistics,
//! output formats (`report`), placement (`topo`), byte sizes (`bytes`) and
//! the GPU libraries opened at run time (`gpu`).

pub mod ab;
pub mod args;
pub mod backend;
pub mod bench;
pub mod buffer;
pub mod bytes;
pub mod cli;
pub mod compare;
pub mod datatype;
pub mod diag;
pub mod fatal;
pub mod gpu;
pub mod gpu_bw;
pub mod history;
pub mod input_file;
pub mod job;
pub mod launch;
pub mod locate;
pub mod matrix;
pub mod options;
pub mod pairs;
pub mod peak;
pub mod plot;
pub mod procs;
pub mod report;
pub mod runner;
pub mod spec;
pub mod stats;
pub mod suite;
pub mod text;
pub mod topo;

/// commbench's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit the binaries were built from (`-dirty` with local changes).
pub const GIT_COMMIT: &str = env!("COMMBENCH_GIT_COMMIT");
/// The OSU Micro-Benchmarks version whose behaviour and output we follow.
pub const OSU_VERSION: &str = "7.4";
