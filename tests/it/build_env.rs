//! build.rs refuses an MPICC or MPI_PKG_CONFIG that names nothing usable
//! with one line naming the variable, instead of falling back quietly to
//! another MPI (rsmpi's build would, and the binaries then crash at start
//! with a shim and bindings of two MPIs), and a target directory built
//! against one MPI refuses another. Runs `cargo check` into its own target
//! directory, first with the default MPI (as a user's existing target/),
//! kept between runs so only the first is slow. In a fresh directory
//! rsmpi's build script runs beside ours and may report a bad
//! MPI_PKG_CONFIG first, in its own words; the build fails either way.

use crate::common;

use common::*;
use std::process::Command;
use std::time::Duration;

fn check_with(var: &str, value: &str) -> Run {
    check(&[(var, value)])
}

fn check(env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(env!("CARGO"));
    c.args(["check", "--lib", "--quiet"])
        .current_dir(repo_root())
        .env("CARGO_TARGET_DIR", repo_root().join("target/build-env"))
        .env_remove("MPICC")
        .env_remove("MPI_PKG_CONFIG")
        .envs(env.iter().copied());
    run_cmd(c, Duration::from_secs(600))
}

#[test]
fn an_mpi_variable_naming_nothing_usable_fails_the_build_with_one_line() {
    let r = check(&[]);
    assert_eq!(r.code, Some(0), "the default MPI does not build:\n{}", r.stderr);
    let cases = [
        ("MPI_PKG_CONFIG", "nosuch", "MPI_PKG_CONFIG=nosuch: pkg-config finds no such package"),
        ("MPICC", "/nonexistent", "MPICC=/nonexistent: cannot run it"),
        ("MPICC", "/bin/false", "MPICC=/bin/false: '/bin/false -show' failed"),
        ("MPICC", "/bin/echo", "MPICC=/bin/echo: '/bin/echo -show' links no MPI library"),
    ];
    for (var, value, want) in cases {
        let r = check_with(var, value);
        assert!(!r.timed_out, "{var}={value}: {}", r.stderr);
        assert_ne!(r.code, Some(0), "{var}={value}: the build went on:\n{}", r.stderr);
        let ours: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("error: commbench@")).collect();
        assert_eq!(ours.len(), 1, "{var}={value}:\n{}", r.stderr);
        assert!(ours[0].contains(want), "{var}={value}: {}", ours[0]);
    }
}

/// A usable but different MPI in a directory built against another: the
/// mpi crate would keep the first MPI's bindings and link line.
#[test]
fn a_target_directory_keeps_its_mpi() {
    require_mpich!();
    let r = check(&[]);
    assert_eq!(r.code, Some(0), "the default MPI does not build:\n{}", r.stderr);
    let r = check_with("MPI_PKG_CONFIG", "mpich");
    assert_ne!(r.code, Some(0), "{}", r.stderr);
    let ours: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("error: commbench@")).collect();
    assert_eq!(ours.len(), 1, "{}", r.stderr);
    assert!(ours[0].contains("built against another MPI") && ours[0].contains("CARGO_TARGET_DIR"), "{}", ours[0]);
}
