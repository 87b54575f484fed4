// Build script: compiles the tiny C shim that hands Rust the MPI predefined
// handles rsmpi does not export (MPI_CHAR, MPI_INT), and records the git
// commit the binaries were built from for the run record.
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=src/backend/mpi_shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo:rerun-if-env-changed=MPI_PKG_CONFIG");

    let lib = match build_probe_mpi::probe() {
        Ok(lib) => lib,
        Err(errs) => {
            for e in errs {
                println!("cargo:warning=MPI probe: {e}");
            }
            panic!("no MPI library found: install an MPI (scripts/setup.sh) or set MPICC / MPI_PKG_CONFIG");
        }
    };
    let mut build = cc::Build::new();
    build.file("src/backend/mpi_shim.c");
    if let Some(mpicc) = &lib.mpicc {
        build.compiler(mpicc);
    }
    for inc in &lib.include_paths {
        build.include(inc);
    }
    build.compile("commbench_mpi_shim");

    // Git commit (and whether the tree had local changes) for the run record.
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty()).unwrap_or(false);
    let desc = if dirty { format!("{commit}-dirty") } else { commit };
    println!("cargo:rustc-env=COMMBENCH_GIT_COMMIT={desc}");
    // `--git-path` finds these in a worktree too, where .git is a file.
    for p in ["HEAD", "index", "refs/heads"] {
        let path = git(&["rev-parse", "--git-path", p]).unwrap_or_else(|| format!(".git/{p}"));
        if Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
