//! The search list from environment snapshots over scratch directory
//! trees, version decoding, and the one-line messages. Opening real
//! libraries is tested in tests/it/nccl_lib.rs.

use super::*;
use std::fs;

/// `dir` and its parents, created.
fn mkdirs(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    dir.to_path_buf()
}

/// The two file candidates for `dir`.
fn both(dir: &Path) -> [Candidate; 2] {
    LIBRARY_NAMES.map(|n| Candidate::File(dir.join(n)))
}

fn loader() -> [Candidate; 2] {
    LIBRARY_NAMES.map(Candidate::LoaderPath)
}

#[test]
fn an_empty_environment_searches_the_loader_then_the_fixed_system_places() {
    let t = tempfile::tempdir().unwrap();
    let env = SearchEnv { root: t.path().to_path_buf(), ..SearchEnv::default() };
    let mut want = loader().to_vec();
    want.extend(both(&t.path().join("usr/local/cuda/lib64")));
    want.extend(both(&t.path().join("usr/lib/python3/dist-packages/nvidia/nccl/lib")));
    assert_eq!(candidates(&env), want);
}

#[test]
fn every_place_comes_in_the_documented_order() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    let venv = p.join("venv");
    let venv_nccl = mkdirs(&venv.join("lib/python3.11/site-packages/nvidia/nccl/lib"));
    let conda = p.join("conda");
    let conda_nccl = mkdirs(&conda.join("lib/python3.12/site-packages/nvidia/nccl/lib"));
    let home = p.join("home");
    let home_nccl = mkdirs(&home.join(".local/lib/python3.10/site-packages/nvidia/nccl/lib"));
    let root = p.join("root");
    let usr_local_nccl = mkdirs(&root.join("usr/local/lib/python3.11/dist-packages/nvidia/nccl/lib"));
    let pythonpath = std::env::join_paths([p.join("pp1"), PathBuf::new(), p.join("pp2")]).unwrap();
    let env = SearchEnv {
        override_file: None,
        library_home: Some(p.join("nccl")),
        cuda_home: Some(p.join("cuda")),
        cuda_path: Some(p.join("cuda-path")),
        virtual_env: Some(venv),
        conda_prefix: Some(conda),
        pythonpath: Some(pythonpath),
        home: Some(home),
        python: None,
        root: root.clone(),
    };
    let mut want = loader().to_vec();
    for dir in [
        p.join("nccl/lib"),
        p.join("cuda/lib64"),
        p.join("cuda-path/lib64"),
        root.join("usr/local/cuda/lib64"),
        venv_nccl,
        conda_nccl,
        p.join("pp1/nvidia/nccl/lib"),
        p.join("pp2/nvidia/nccl/lib"),
        home_nccl,
        usr_local_nccl,
        root.join("usr/lib/python3/dist-packages/nvidia/nccl/lib"),
    ] {
        want.extend(both(&dir));
    }
    assert_eq!(candidates(&env), want);
}

#[test]
fn python_directories_count_only_with_nccl_and_newest_python_first() {
    let t = tempfile::tempdir().unwrap();
    let venv = t.path().to_path_buf();
    let lib = venv.join("lib");
    for v in ["python3.9", "python3.12", "python3.13t", "python3.10"] {
        mkdirs(&lib.join(v).join("site-packages/nvidia/nccl/lib"));
    }
    // No NCCL in these: a Python without the wheel, and a Python 2.
    mkdirs(&lib.join("python3.11/site-packages/nvidia/cublas/lib"));
    mkdirs(&lib.join("python2.7/site-packages/nvidia/nccl/lib"));
    let env = SearchEnv { virtual_env: Some(venv), root: t.path().join("none"), ..SearchEnv::default() };
    let got: Vec<PathBuf> = candidates(&env)
        .into_iter()
        .filter_map(|c| match c {
            Candidate::File(f) if f.starts_with(&lib) && f.ends_with("libnccl.so.2") => Some(f),
            _ => None,
        })
        .collect();
    let want: Vec<PathBuf> = ["python3.13t", "python3.12", "python3.10", "python3.9"]
        .iter()
        .map(|v| lib.join(v).join("site-packages/nvidia/nccl/lib/libnccl.so.2"))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_directory_named_twice_is_tried_once() {
    let t = tempfile::tempdir().unwrap();
    let cuda = t.path().join("cuda");
    let env = SearchEnv {
        cuda_home: Some(cuda.clone()),
        cuda_path: Some(cuda.clone()),
        root: t.path().to_path_buf(),
        ..SearchEnv::default()
    };
    let list = candidates(&env);
    let f = Candidate::File(cuda.join("lib64/libnccl.so.2"));
    assert_eq!(list.iter().filter(|c| **c == f).count(), 1);
    assert_eq!(list[2], f);
}

#[test]
fn the_snapshot_reads_each_variable_and_treats_empty_as_unset() {
    let vars = [
        ("COMMBENCH_NCCL", "/x/libnccl.so.2"),
        ("NCCL_HOME", "/nccl"),
        ("CUDA_HOME", ""),
        ("CUDA_PATH", "/cuda"),
        ("VIRTUAL_ENV", "/venv"),
        ("PYTHONPATH", "/a:/b"),
        ("HOME", "/home/u"),
    ];
    let env = SearchEnv::from_vars(&NCCL_LIBRARY, |name| {
        vars.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
    });
    assert_eq!(
        env,
        SearchEnv {
            override_file: Some("/x/libnccl.so.2".into()),
            library_home: Some("/nccl".into()),
            cuda_home: None,
            cuda_path: Some("/cuda".into()),
            virtual_env: Some("/venv".into()),
            conda_prefix: None,
            pythonpath: Some("/a:/b".into()),
            home: Some("/home/u".into()),
            python: None,
            root: "/".into(),
        }
    );
}

/// An executable shell script `name` in `dir` running `body`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let f = mkdirs(dir).join(name);
    fs::write(&f, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&f, fs::Permissions::from_mode(0o755)).unwrap();
    f
}

#[test]
fn python3_is_taken_from_path_and_must_be_executable() {
    let t = tempfile::tempdir().unwrap();
    let plain = mkdirs(&t.path().join("plain"));
    fs::write(plain.join("python3"), "not executable").unwrap();
    let good = script(&t.path().join("venv/bin"), "python3", "exit 0");
    let path = std::env::join_paths([t.path().join("absent"), plain, good.parent().unwrap().to_path_buf()]).unwrap();
    assert_eq!(on_path(&path, "python3"), Some(good));
    let env = SearchEnv::from_vars(&NCCL_LIBRARY, |n| (n == "PATH").then(|| path.clone()));
    assert_eq!(env.python, on_path(&path, "python3"));
    assert_eq!(on_path(OsStr::new(""), "python3"), None);
}

#[test]
fn python3_names_its_package_directories_within_a_bound() {
    let t = tempfile::tempdir().unwrap();
    let answers =
        script(&t.path().join("a"), "python3", "echo /v/lib/python3.11/site-packages; echo relative; echo /u");
    assert_eq!(
        python_packages(&answers, PYTHON_LIMIT).unwrap(),
        vec![PathBuf::from("/v/lib/python3.11/site-packages"), PathBuf::from("/u")]
    );
    let fails = script(&t.path().join("b"), "python3", "exit 3");
    assert!(python_packages(&fails, PYTHON_LIMIT).unwrap_err().contains("failed"));
    // One that never answers is killed at the bound.
    let hangs = script(&t.path().join("c"), "python3", "exec sleep 30");
    let began = std::time::Instant::now();
    let err = python_packages(&hangs, std::time::Duration::from_millis(300)).unwrap_err();
    assert!(err.contains("did not answer within 0.3 s"), "{err}");
    assert!(began.elapsed() < crate::procs::under_load(std::time::Duration::from_secs(5)));
    assert!(python_packages(&t.path().join("none"), PYTHON_LIMIT).unwrap_err().contains("does not start"));
}

#[test]
fn version_codes_decode_in_both_schemes() {
    // From NCCL 2.9 on: major*10000 + minor*100 + patch.
    assert_eq!(decode_version(22105), (2, 21, 5));
    assert_eq!(decode_version(21003), (2, 10, 3));
    assert_eq!(decode_version(20903), (2, 9, 3));
    assert_eq!(decode_version(23000), (2, 30, 0));
    // Before: major*1000 + minor*100 + patch.
    assert_eq!(decode_version(2708), (2, 7, 8));
    assert_eq!(decode_version(2412), (2, 4, 12));
    assert_eq!(decode_version(-1), (0, 0, 0));
}

#[test]
fn nothing_found_is_one_line_naming_the_places_and_the_remedies() {
    let text = NcclMissing::NotFound.to_string();
    assert!(!text.contains('\n'));
    for part in [
        "NCCL is not available",
        "libnccl.so.2",
        "loader path",
        "$CUDA_HOME",
        "/usr/local/cuda",
        "nvidia/nccl/lib",
        "pip install nvidia-nccl-cu12",
        "COMMBENCH_NCCL",
    ] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
}

#[test]
fn loader_complaints_and_nccl_texts_are_put_on_one_line() {
    assert_eq!(one_line("  a\n  b\tc \n"), "a b c");
    let e = NcclMissing::Unloadable { path: "/p/libnccl.so.2".into(), reason: one_line("bad\nELF") };
    assert_eq!(
        e.to_string(),
        "NCCL is not available: /p/libnccl.so.2 does not load (bad ELF); install a working NCCL or set \
         COMMBENCH_NCCL to the library"
    );
    let e = NcclCallError {
        function: "ncclCommInitRank",
        code: 2,
        text: "unhandled system error".into(),
        last: Some("socket connect failed".into()),
    };
    assert_eq!(
        e.to_string(),
        "ncclCommInitRank failed with NCCL error 2: unhandled system error; last error: socket connect failed"
    );
    assert_eq!(e.result(), Some(ncclResult_t::ncclSystemError));
    assert_eq!(NcclCallError { code: 99, last: None, ..e }.result(), None);
}

#[test]
fn python_minor_versions_parse() {
    assert_eq!(python_minor(".11"), Some(11));
    assert_eq!(python_minor(".13t"), Some(13));
    assert_eq!(python_minor(""), None);
    assert_eq!(python_minor("x"), None);
}
