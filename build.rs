// Build script: compiles the tiny C shim that hands Rust the MPI predefined
// handles rsmpi does not export (MPI_CHAR, MPI_INT), and records the git
// commit the binaries were built from for the run record.
//
// It also keeps the build to one MPI. rsmpi's own build script (mpi-sys)
// runs once per target directory and falls back quietly from a bad MPICC to
// whatever pkg-config finds; a shim built against another MPI's headers
// crashes at start. So: an MPICC or MPI_PKG_CONFIG that names nothing usable
// fails the build with one line naming the variable, and a target directory
// built against one MPI refuses another (the line says to use a separate
// CARGO_TARGET_DIR).
use std::path::Path;
use std::process::Command;

fn main() {
    // The UCX transport is compiled when crates/ucx-sys found UCX headers
    // (it says so through its `links = "ucx"` metadata).
    println!("cargo::rustc-check-cfg=cfg(ucx)");
    println!("cargo:rerun-if-env-changed=DEP_UCX_HEADERS");
    if std::env::var_os("DEP_UCX_HEADERS").is_some() {
        println!("cargo::rustc-cfg=ucx");
    }
    println!("cargo:rerun-if-changed=src/backend/mpi_shim.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    println!("cargo:rerun-if-env-changed=MPI_PKG_CONFIG");

    let lib = match probe().and_then(|lib| same_mpi_as_before(&lib).map(|()| lib)) {
        Ok(lib) => lib,
        Err(line) => {
            // One line, shown by cargo as `error: commbench@...: <line>`.
            println!("cargo::error={line}");
            return;
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

    record_git_commit();
}

/// The variable that chose the MPI, as `NAME=value`, if one is set.
fn chosen_by() -> Option<(&'static str, String)> {
    ["MPI_PKG_CONFIG", "MPICC"].into_iter().find_map(|v| std::env::var(v).ok().map(|val| (v, val)))
}

/// The MPI library the build uses, found the way mpi-sys finds it (so the
/// shim and rsmpi agree), after checking that a variable the user set
/// names something usable: no quiet fallback to another MPI.
fn probe() -> Result<build_probe_mpi::Library, String> {
    if let Ok(pc) = std::env::var("MPI_PKG_CONFIG") {
        let lib = build_probe_mpi::probe().map_err(|_| {
            format!(
                "MPI_PKG_CONFIG={pc}: pkg-config finds no such package; name an MPI's package \
                 (mpich, ompi) or its .pc file, or unset it"
            )
        })?;
        if !has_mpi_header(&lib.include_paths) {
            return Err(format!("MPI_PKG_CONFIG={pc}: that package has no mpi.h in its include paths: not an MPI"));
        }
        return Ok(lib);
    }
    if let Ok(mpicc) = std::env::var("MPICC") {
        let out = Command::new(&mpicc)
            .arg("-show")
            .output()
            .map_err(|e| format!("MPICC={mpicc}: cannot run it ({e}); name an MPI compiler wrapper or unset it"))?;
        if !out.status.success() {
            return Err(format!("MPICC={mpicc}: '{mpicc} -show' failed ({}): not an MPI compiler wrapper", out.status));
        }
        let shown = String::from_utf8_lossy(&out.stdout);
        if !shown.split_whitespace().any(|w| w.starts_with("-lmpi")) {
            return Err(format!(
                "MPICC={mpicc}: '{mpicc} -show' links no MPI library (-lmpi...): not an MPI compiler wrapper"
            ));
        }
    }
    build_probe_mpi::probe().map_err(|_| {
        "no MPI library found: no mpicc on PATH and no pkg-config mpich or ompi; install one \
         (scripts/setup.sh) or set MPICC or MPI_PKG_CONFIG"
            .to_string()
    })
}

/// mpi.h in one of `dirs`, or in the compiler's default place when the
/// package adds none.
fn has_mpi_header(dirs: &[std::path::PathBuf]) -> bool {
    if dirs.is_empty() {
        return Path::new("/usr/include/mpi.h").exists();
    }
    dirs.iter().any(|d| d.join("mpi.h").exists())
}

/// Fails when this target directory was built against another MPI: rsmpi's
/// bindings and link lines are not rebuilt, and a shim and bindings of two
/// MPIs crash at start. The first build here records which MPI it used.
fn same_mpi_as_before(lib: &build_probe_mpi::Library) -> Result<(), String> {
    let Some(out_dir) = std::env::var_os("OUT_DIR") else { return Ok(()) };
    let stamp = Path::new(&out_dir).join("mpi-library");
    let what = match (&lib.mpicc, chosen_by()) {
        (_, Some((var, val))) => format!("{var}={val}"),
        (Some(cc), None) => cc.clone(),
        (None, None) => "pkg-config".to_string(),
    };
    // The library, not how it was found: `MPICC=mpicc` and no MPICC, or
    // mpicc and pkg-config of the same MPI, link the same thing.
    let identity = format!("{:?} in {:?}", lib.libs, lib.lib_paths);
    match std::fs::read_to_string(&stamp) {
        Ok(before) if before.lines().nth(1) != Some(identity.as_str()) => {
            let before_what = before.lines().next().unwrap_or("");
            Err(format!(
                "this target directory was built against another MPI ({before_what}; now {what}) and the mpi \
                 crate does not rebuild for a new one: build into a separate CARGO_TARGET_DIR (or cargo clean)"
            ))
        }
        Ok(_) => Ok(()),
        Err(_) => {
            let _ = std::fs::write(&stamp, format!("{what}\n{identity}\n"));
            Ok(())
        }
    }
}

/// Git commit (and whether the tree had local changes) for the run record.
fn record_git_commit() {
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
