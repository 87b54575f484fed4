//! Finding and opening NCCL under the real dynamic loader, with stand-in
//! libraries compiled here by the system C compiler (`cc`). A stand-in
//! only answers `ncclGetVersion`, `ncclGetErrorString` and
//! `ncclGetLastError`; every other entry point exists so that the symbol
//! resolves, and reports ncclInvalidUsage without doing anything. Nothing
//! here runs a collective.
//!
//! The search reaches Python environments and $CUDA_HOME only when the
//! loader itself knows no NCCL; on a machine whose loader path has one,
//! the tests that need the search to go further say so and stop early.

use commbench::gpu::nccl_lib::{find_in, load, NcclError, NcclLib, NcclMissing, SearchEnv};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The functions a stand-in defines, as reporting ncclInvalidUsage (5).
const OTHER_FUNCTIONS: &[&str] = &[
    "ncclGetUniqueId",
    "ncclCommInitRank",
    "ncclCommDestroy",
    "ncclCommAbort",
    "ncclCommGetAsyncError",
    "ncclAllReduce",
    "ncclAllGather",
    "ncclReduceScatter",
    "ncclBroadcast",
    "ncclReduce",
    "ncclSend",
    "ncclRecv",
    "ncclGroupStart",
    "ncclGroupEnd",
];

/// Compiles a stand-in NCCL reporting `version` to `file` (its directories
/// created), leaving out the functions in `omit`.
fn stand_in(file: &Path, version: i32, omit: &[&str]) -> PathBuf {
    let dir = file.parent().unwrap();
    fs::create_dir_all(dir).unwrap();
    let keep = |name: &str| !omit.contains(&name);
    let mut c = String::new();
    if keep("ncclGetVersion") {
        c += &format!("int ncclGetVersion(int *v) {{ *v = {version}; return 0; }}\n");
    }
    if keep("ncclGetErrorString") {
        c += "const char *ncclGetErrorString(int r) { return r == 5 ? \"stand-in: invalid usage\" : \"stand-in\"; }\n";
    }
    if keep("ncclGetLastError") {
        c += "const char *ncclGetLastError(void *comm) { (void)comm; return \"stand-in:\\n does nothing\"; }\n";
    }
    for name in OTHER_FUNCTIONS.iter().filter(|n| keep(n)) {
        c += &format!("int {name}(void) {{ return 5; }}\n");
    }
    let source = file.with_extension("c");
    fs::write(&source, c).unwrap();
    // A soname of its own, so that no stand-in ever answers the loader's
    // search for "libnccl.so.2" while another test has it open.
    let soname = format!("-Wl,-soname,libcommbench-stand-in-{version}.so");
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(file)
        .arg(&source)
        .arg(soname)
        .output()
        .expect("the C compiler `cc` is needed to build the stand-in libraries");
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    file.to_path_buf()
}

/// A snapshot with nothing set and the system paths below an empty
/// directory in `t`.
fn bare(t: &Path) -> SearchEnv {
    SearchEnv { root: t.join("empty-root"), ..SearchEnv::default() }
}

/// Whether the loader finds an NCCL by name on this machine (then the
/// search never reaches the places these tests fill in).
fn loader_has_nccl(t: &Path) -> bool {
    match find_in(&bare(t)) {
        Ok(found) => {
            eprintln!("the loader finds NCCL at {}: this test stops here", found.path().display());
            true
        }
        Err(_) => false,
    }
}

fn pip_dir(venv: &Path, python: &str) -> PathBuf {
    venv.join("lib").join(python).join("site-packages/nvidia/nccl/lib")
}

#[test]
fn a_pip_installed_nccl_in_a_virtual_env_is_found_and_its_version_read() {
    let t = tempfile::tempdir().unwrap();
    if loader_has_nccl(t.path()) {
        return;
    }
    let venv = t.path().join("venv");
    let lib = stand_in(&pip_dir(&venv, "python3.11").join("libnccl.so.2"), 22105, &[]);
    let env = SearchEnv { virtual_env: Some(venv), ..bare(t.path()) };
    let found = find_in(&env).unwrap();
    assert_eq!(found.path(), lib);
    let nccl = NcclLib::open(found).unwrap();
    assert_eq!(nccl.path(), lib);
    assert_eq!(nccl.version_code(), 22105);
    assert_eq!(nccl.version(), (2, 21, 5));
}

#[test]
fn cuda_home_is_searched_before_a_python_environment() {
    let t = tempfile::tempdir().unwrap();
    if loader_has_nccl(t.path()) {
        return;
    }
    let venv = t.path().join("venv");
    stand_in(&pip_dir(&venv, "python3.12").join("libnccl.so.2"), 22105, &[]);
    let cuda = t.path().join("cuda");
    // Only the unversioned name here: the second name is tried too.
    let lib = stand_in(&cuda.join("lib64/libnccl.so"), 21805, &[]);
    let env = SearchEnv { virtual_env: Some(venv), cuda_home: Some(cuda), ..bare(t.path()) };
    let nccl = NcclLib::open(find_in(&env).unwrap()).unwrap();
    assert_eq!(nccl.path(), lib);
    assert_eq!(nccl.version(), (2, 18, 5));
}

#[test]
fn commbench_nccl_is_used_alone_before_every_other_place() {
    let t = tempfile::tempdir().unwrap();
    let cuda = t.path().join("cuda");
    stand_in(&cuda.join("lib64/libnccl.so.2"), 22105, &[]);
    // Any file name will do for the override.
    let chosen = stand_in(&t.path().join("mine/libnccl-custom.so"), 2708, &[]);
    let env = SearchEnv { override_file: Some(chosen.clone()), cuda_home: Some(cuda), ..bare(t.path()) };
    let nccl = NcclLib::open(find_in(&env).unwrap()).unwrap();
    assert_eq!(nccl.path(), chosen);
    assert_eq!(nccl.version(), (2, 7, 8));
}

#[test]
fn a_library_lacking_a_required_function_is_refused_in_one_line() {
    let t = tempfile::tempdir().unwrap();
    let lib = stand_in(&t.path().join("libnccl.so.2"), 20610, &["ncclSend", "ncclRecv"]);
    let env = SearchEnv { override_file: Some(lib.clone()), ..bare(t.path()) };
    let err = NcclLib::open(find_in(&env).unwrap()).unwrap_err();
    assert_eq!(err, NcclError::Lacks { path: lib.clone(), symbol: "ncclSend" });
    assert_eq!(err.to_string(), format!("NCCL at {} lacks ncclSend (NCCL 2.7 or newer is needed)", lib.display()));
}

#[test]
fn a_failed_call_carries_the_code_and_nccl_s_words_and_get_last_error_is_optional() {
    let t = tempfile::tempdir().unwrap();
    let with = stand_in(&t.path().join("with/libnccl.so.2"), 22105, &[]);
    let without = stand_in(&t.path().join("without/libnccl.so.2"), 21201, &["ncclGetLastError"]);

    let env = SearchEnv { override_file: Some(with), ..bare(t.path()) };
    let nccl = NcclLib::open(find_in(&env).unwrap()).unwrap();
    assert!(nccl.has_last_error());
    let err = nccl.group_start().unwrap_err();
    assert_eq!(err.code, 5);
    assert_eq!(err.text, "stand-in: invalid usage");
    assert_eq!(err.last.as_deref(), Some("stand-in: does nothing"));
    assert_eq!(
        err.to_string(),
        "ncclGroupStart failed with NCCL error 5: stand-in: invalid usage; last error: stand-in: does nothing"
    );

    let env = SearchEnv { override_file: Some(without), ..bare(t.path()) };
    let nccl = NcclLib::open(find_in(&env).unwrap()).unwrap();
    assert!(!nccl.has_last_error());
    assert_eq!(nccl.version(), (2, 12, 1));
    let err = nccl.group_end().unwrap_err();
    assert_eq!(err.last, None);
    assert_eq!(err.to_string(), "ncclGroupEnd failed with NCCL error 5: stand-in: invalid usage");
}

#[test]
fn no_library_anywhere_gives_the_one_line_error() {
    let t = tempfile::tempdir().unwrap();
    if loader_has_nccl(t.path()) {
        return;
    }
    // Python environments and CUDA trees without NCCL in them.
    let venv = t.path().join("venv");
    fs::create_dir_all(venv.join("lib/python3.11/site-packages/nvidia/cublas/lib")).unwrap();
    let cuda = t.path().join("cuda");
    fs::create_dir_all(cuda.join("lib64")).unwrap();
    let env = SearchEnv {
        virtual_env: Some(venv),
        cuda_home: Some(cuda),
        pythonpath: Some(t.path().join("pp").into()),
        home: Some(t.path().join("home")),
        ..bare(t.path())
    };
    let err = find_in(&env).unwrap_err();
    assert_eq!(err, NcclMissing::NotFound);
    let text = err.to_string();
    assert!(!text.contains('\n'), "{text}");
    assert!(text.starts_with("NCCL is not available: no libnccl.so.2 or libnccl.so on the loader path"), "{text}");
}

#[test]
fn commbench_nccl_naming_something_that_is_not_a_library_says_which_and_why() {
    let t = tempfile::tempdir().unwrap();
    let text_file = t.path().join("notes.txt");
    fs::write(&text_file, "not a shared library\n").unwrap();
    let absent = t.path().join("absent/libnccl.so.2");
    for path in [text_file, absent] {
        let env = SearchEnv { override_file: Some(path.clone()), ..bare(t.path()) };
        let err = find_in(&env).unwrap_err();
        assert!(matches!(err, NcclMissing::Override { .. }), "{err:?}");
        let line = err.to_string();
        assert!(!line.contains('\n'), "{line}");
        let head = format!("NCCL is not available: COMMBENCH_NCCL={} does not load (", path.display());
        assert!(line.starts_with(&head), "{line}");
        // The loader's own reason follows.
        assert!(line.len() > head.len() + 2, "{line}");
    }
}

#[test]
fn a_file_that_does_not_load_is_passed_over_for_a_later_one_and_named_when_alone() {
    let t = tempfile::tempdir().unwrap();
    if loader_has_nccl(t.path()) {
        return;
    }
    let cuda = t.path().join("cuda");
    let broken = cuda.join("lib64/libnccl.so.2");
    fs::create_dir_all(broken.parent().unwrap()).unwrap();
    fs::write(&broken, "truncated download\n").unwrap();
    let venv = t.path().join("venv");
    let good = stand_in(&pip_dir(&venv, "python3.11").join("libnccl.so.2"), 22105, &[]);

    let env = SearchEnv { cuda_home: Some(cuda.clone()), virtual_env: Some(venv), ..bare(t.path()) };
    assert_eq!(find_in(&env).unwrap().path(), good);

    let env = SearchEnv { cuda_home: Some(cuda), ..bare(t.path()) };
    let err = find_in(&env).unwrap_err();
    match &err {
        NcclMissing::Unloadable { path, reason } => {
            assert_eq!(path, &broken);
            assert!(!reason.is_empty());
        }
        other => panic!("expected Unloadable, got {other:?}"),
    }
    let line = err.to_string();
    assert!(!line.contains('\n'), "{line}");
    assert!(line.starts_with(&format!("NCCL is not available: {} does not load (", broken.display())), "{line}");
}

#[test]
fn load_on_this_machine_gives_an_nccl_or_one_line() {
    // The process environment as it is: a real NCCL where one is
    // installed, else the one-line reason. Asked twice, the same answer.
    match (load(), load()) {
        (Ok(a), Ok(b)) => {
            assert!(std::ptr::eq(a, b));
            assert!(a.version() >= (2, 7, 0), "{:?}", a.version());
            eprintln!("NCCL {:?} at {}", a.version(), a.path().display());
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            assert!(!a.to_string().contains('\n'), "{a}");
            eprintln!("{a}");
        }
        (a, b) => panic!("load changed its answer: {a:?} then {b:?}"),
    }
}

/// The test virtual environment scripts/setup.sh fills with pip's
/// nvidia-nccl-cu12 (never activated, as a GPU machine keeps its NCCL).
fn test_venv() -> PathBuf {
    match std::env::var_os("COMMBENCH_TEST_VENV") {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/nccl-venv"),
    }
}

/// The version pip recorded for the wheel (`nvidia_nccl_cu12-2.32.3.dist-info`).
fn wheel_version(venv: &Path) -> (u32, u32, u32) {
    let lib = fs::read_dir(venv.join("lib"))
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("python3"));
    let site = lib.expect("lib/python3.* in the venv").path().join("site-packages");
    let info = fs::read_dir(&site)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("nvidia_nccl_cu12-") && n.ends_with(".dist-info"))
        .expect("the nvidia-nccl-cu12 wheel's dist-info");
    let v = info.trim_start_matches("nvidia_nccl_cu12-").trim_end_matches(".dist-info");
    let parts: Vec<u32> = v.split('.').map(|p| p.parse().unwrap()).collect();
    (parts[0], parts[1], parts[2])
}

/// NCCL itself, from pip's wheel in a virtual environment that is not
/// activated: found only by asking that environment's `python3` (no
/// VIRTUAL_ENV, no PYTHONPATH), opened, and its version read from the
/// library agreeing with the wheel's; NCCL's own words for an error code.
#[test]
fn the_real_nccl_of_a_venv_that_is_not_activated_is_found_through_its_python3() {
    let venv = test_venv();
    let python = venv.join("bin/python3");
    assert!(python.exists(), "scripts/setup.sh installs NCCL's test venv at {} (run it)", venv.display());
    let t = tempfile::tempdir().unwrap();
    if loader_has_nccl(t.path()) {
        return;
    }
    // Without the python3 nothing else points there.
    assert_eq!(find_in(&bare(t.path())).unwrap_err(), NcclMissing::NotFound);
    let env = SearchEnv { python: Some(python), ..bare(t.path()) };
    let found = find_in(&env).unwrap();
    let venv_real = fs::canonicalize(&venv).unwrap();
    let path = fs::canonicalize(found.path()).unwrap();
    assert!(path.starts_with(&venv_real), "{}", path.display());
    assert!(path.ends_with("site-packages/nvidia/nccl/lib/libnccl.so.2"), "{}", path.display());
    let nccl = NcclLib::open(found).unwrap();
    assert_eq!(nccl.version(), wheel_version(&venv));
    assert!(nccl.has_last_error());
    let words = nccl.error_string(5);
    assert!(words.contains("invalid usage"), "{words}");
}

/// `-x`'s `ncclConfig_t`, against nccl.h from pip's wheel (compiled with
/// the system C compiler, CUDA's headers stood in for by the two handle
/// types nccl.h names): every field commbench sets or leaves undefined
/// sits where NCCL's header puts it, with NCCL's magic.
#[test]
fn the_config_s_layout_is_nccl_h_s() {
    let venv = test_venv();
    let lib = fs::read_dir(venv.join("lib"))
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("python3"));
    let include = lib.expect("lib/python3.* in the venv").path().join("site-packages/nvidia/nccl/include");
    assert!(include.join("nccl.h").exists(), "scripts/setup.sh installs NCCL's wheel at {} (run it)", venv.display());
    let t = tempfile::tempdir().unwrap();
    fs::write(
        t.path().join("cuda_runtime.h"),
        "typedef struct CUstream_st *cudaStream_t;\ntypedef struct CUevent_st *cudaEvent_t;\n",
    )
    .unwrap();
    for h in ["cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h"] {
        fs::write(t.path().join(h), "").unwrap();
    }
    let (fields, magic) = commbench::gpu::nccl_lib::config_layout();
    let prints: String =
        fields.iter().map(|(name, _)| format!("printf(\"%zu\\n\", offsetof(ncclConfig_t, {name}));")).collect();
    let source = format!("#include <stddef.h>\n#include <stdio.h>\n#include \"nccl.h\"\nint main(void) {{ {prints} printf(\"%u\\n\", (unsigned)NCCL_API_MAGIC); return 0; }}\n");
    fs::write(t.path().join("layout.c"), source).unwrap();
    let exe = t.path().join("layout");
    let out = Command::new("cc")
        .arg("-I")
        .arg(t.path())
        .arg("-I")
        .arg(&include)
        .arg(t.path().join("layout.c"))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "cc: {}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap();
    let got: Vec<&str> = printed.lines().collect();
    let want: Vec<String> = fields.iter().map(|(_, at)| at.to_string()).chain([magic.to_string()]).collect();
    assert_eq!(got, want, "{fields:?}");
}

/// A FIFO at `path`.
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path this test owns.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// `find_in(env)` on a thread, failing the test if it has not answered
/// within the hang limit (the loader's open of a FIFO blocks for ever:
/// the thread is then left behind, and the test process ends with it).
fn find_within_limit(env: SearchEnv) -> Result<PathBuf, NcclMissing> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(find_in(&env).map(|f| f.path().to_path_buf()));
    });
    let limit = crate::common::under_load(std::time::Duration::from_secs(10));
    rx.recv_timeout(limit).unwrap_or_else(|_| panic!("the NCCL search hung for {limit:?}"))
}

/// COMMBENCH_NCCL naming a FIFO once hung the dynamic loader's open for
/// ever; a FIFO (or a directory) is now refused at once, saying what it
/// is, and one among the places searched is passed over and named.
#[test]
fn a_fifo_or_a_directory_named_as_nccl_is_refused_at_once() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("libnccl.so.2");
    mkfifo(&fifo);
    for (path, what) in [(fifo.clone(), "a FIFO"), (t.path().to_path_buf(), "a directory")] {
        let env = SearchEnv { override_file: Some(path.clone()), ..bare(t.path()) };
        let err = find_within_limit(env).unwrap_err();
        assert_eq!(err, NcclMissing::Override { path: path.clone(), reason: format!("not a regular file ({what})") });
        assert_eq!(
            err.to_string(),
            format!(
                "NCCL is not available: COMMBENCH_NCCL={} does not load (not a regular file ({what}))",
                path.display()
            )
        );
    }
    if loader_has_nccl(t.path()) {
        return;
    }
    let cuda = t.path().join("cuda");
    fs::create_dir_all(cuda.join("lib64")).unwrap();
    mkfifo(&cuda.join("lib64/libnccl.so.2"));
    let env = SearchEnv { cuda_home: Some(cuda.clone()), ..bare(t.path()) };
    let err = find_within_limit(env).unwrap_err();
    let reason = "not a regular file (a FIFO)".to_string();
    assert_eq!(err, NcclMissing::Unloadable { path: cuda.join("lib64/libnccl.so.2"), reason });
    // A library after it is still found.
    let good = stand_in(&cuda.join("lib64/libnccl.so"), 22105, &[]);
    assert_eq!(find_within_limit(SearchEnv { cuda_home: Some(cuda), ..bare(t.path()) }), Ok(good));
}

/// An OSU binary with `--backend nccl` and COMMBENCH_NCCL naming a FIFO
/// (on the GPU stand-in) hung in the loader; it now ends at once: one
/// line on rank 0 and status 1, as for a library that does not load.
#[test]
fn an_osu_binary_refuses_a_fifo_as_nccl() {
    use crate::common::{self, Mpi};
    let _g = common::mpi_lock();
    let gpu = common::standin::stand_in("dgx1");
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("nccl-fifo");
    mkfifo(&fifo);
    let mut c = common::launcher(Mpi::OpenMpi, 2);
    c.arg(common::bin(Mpi::OpenMpi, "osu_allreduce"));
    c.args(["--backend", "nccl", "-d", "cuda", "-m", "1:8", "-i", "2", "-x", "0", "--no-results"]);
    c.current_dir(t.path());
    gpu.apply(&mut c);
    c.env("COMMBENCH_NCCL", &fifo);
    let run = common::run_cmd(c, std::time::Duration::from_secs(30));
    assert!(!run.timed_out, "the binary hung on the FIFO: {run:?}");
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("osu_allreduce: ")).collect();
    let want = format!(
        "osu_allreduce: NCCL is not available: COMMBENCH_NCCL={} does not load (not a regular file (a FIFO))",
        fifo.display()
    );
    assert_eq!(lines, [want.as_str()], "{}", run.stderr);
}
