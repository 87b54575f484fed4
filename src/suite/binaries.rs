//! What the benchmark binaries of a suite are, found out from the files
//! themselves before anything is launched: whose they are (commbench's own,
//! or OSU's C programs, which get only OSU options and whose text output
//! the suite turns into CSV), and which MPI library they are linked with
//! (so the launcher follows the binaries, not the `commbench` that runs the
//! suite). The MPI comes from the libraries the ELF file names
//! (`DT_NEEDED`), read here without running anything; when those names do
//! not settle it (`libmpi.so.12` is MPICH's, Intel MPI's and old Open
//! MPI's), from the full list the dynamic loader resolves (`ldd`).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::process::Command;

use crate::launch::MpiFlavor;

/// Who made a benchmark binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Maker {
    /// commbench's own: takes placement, `--csv`, `--timeout` and writes
    /// its run record.
    Commbench,
    /// Anything else with an OSU name, e.g. OSU's own C binaries: gets only
    /// OSU options; its stdout is the only result.
    Osu,
}

/// Whether `path` is one of commbench's binaries: every one of them
/// carries the run-record schema name it writes.
pub(crate) fn maker_of(path: &Path) -> io::Result<Maker> {
    let mark = crate::report::record::SCHEMA.as_bytes();
    Ok(if contains(File::open(path)?, mark)? { Maker::Commbench } else { Maker::Osu })
}

/// Whether the stream holds `needle`, read in blocks (a debug build is
/// tens of MB).
fn contains(mut r: impl Read, needle: &[u8]) -> io::Result<bool> {
    let mut buf = vec![0u8; 1 << 20];
    let keep = needle.len().saturating_sub(1);
    let mut filled = 0;
    loop {
        let n = r.read(&mut buf[filled..])?;
        if n == 0 {
            return Ok(false);
        }
        filled += n;
        if buf[..filled].windows(needle.len()).any(|w| w == needle) {
            return Ok(true);
        }
        // Keep the tail that could start a match across blocks.
        let from = filled.saturating_sub(keep);
        buf.copy_within(from..filled, 0);
        filled -= from;
    }
}

/// The shared libraries an ELF file asks for (`DT_NEEDED`), in order.
/// 64- and 32-bit, either byte order.
pub(crate) fn needed_libraries(path: &Path) -> Result<Vec<String>, String> {
    let data = std::fs::read(path).map_err(|e| e.to_string())?;
    parse_needed(&data)
}

fn parse_needed(d: &[u8]) -> Result<Vec<String>, String> {
    if d.len() < 52 || &d[..4] != b"\x7fELF" {
        return Err("not an ELF file".into());
    }
    let wide = match d[4] {
        1 => false,
        2 => true,
        _ => return Err("unknown ELF class".into()),
    };
    let big = d[5] == 2;
    let int = |off: u64, len: usize| -> Result<u64, String> {
        let start = usize::try_from(off).map_err(|_| "ELF offset out of range")?;
        let b = start.checked_add(len).and_then(|end| d.get(start..end)).ok_or("ELF file cut short")?;
        let mut v = 0u64;
        for i in 0..len {
            let byte = if big { b[i] } else { b[len - 1 - i] };
            v = (v << 8) | u64::from(byte);
        }
        Ok(v)
    };
    let word: usize = if wide { 8 } else { 4 };
    let (shoff, shentsize, shnum) = if wide {
        (int(0x28, 8)?, int(0x3a, 2)?, int(0x3c, 2)?)
    } else {
        (int(0x20, 4)?, int(0x2e, 2)?, int(0x30, 2)?)
    };
    // A section header: type at 4; offset, size, link at their places.
    let section = |i: u64| -> Result<(u64, u64, u64, u64), String> {
        let base =
            i.checked_mul(shentsize).and_then(|o| o.checked_add(shoff)).ok_or("ELF section table out of range")?;
        Ok(if wide {
            (int(base + 4, 4)?, int(base + 0x18, 8)?, int(base + 0x20, 8)?, int(base + 0x28, 4)?)
        } else {
            (int(base + 4, 4)?, int(base + 0x10, 4)?, int(base + 0x14, 4)?, int(base + 0x18, 4)?)
        })
    };
    const SHT_DYNAMIC: u64 = 6;
    const DT_NEEDED: u64 = 1;
    let mut out = Vec::new();
    for i in 0..shnum {
        let (kind, off, size, link) = section(i)?;
        if kind != SHT_DYNAMIC {
            continue;
        }
        let (_, str_off, str_size, _) = section(link)?;
        let range = |o: u64, n: u64| Some(usize::try_from(o).ok()?..usize::try_from(o.checked_add(n)?).ok()?);
        let strings = range(str_off, str_size).and_then(|r| d.get(r)).ok_or("ELF string table cut short")?;
        let end = off.checked_add(size).ok_or("ELF dynamic section out of range")?;
        let mut at = off;
        while at.saturating_add(2 * word as u64) <= end {
            let (tag, val) = (int(at, word)?, int(at + word as u64, word)? as usize);
            at += 2 * word as u64;
            match tag {
                0 => break,
                DT_NEEDED => {
                    let s = strings.get(val..).ok_or("ELF name outside its string table")?;
                    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
                    out.push(String::from_utf8_lossy(&s[..end]).into_owned());
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

/// The MPI these library file names belong to. `all` says whether the
/// list is complete (the loader's, with every indirect library) or only
/// the binary's direct needs, where a bare `libmpi.so.12` settles nothing.
pub(crate) fn flavor_of_libraries(libs: &[String], all: bool) -> Option<MpiFlavor> {
    let has = |prefixes: &[&str]| libs.iter().any(|l| prefixes.iter().any(|p| l.starts_with(p)));
    if has(&["libopen-pal.", "libopen-rte.", "libprrte.", "libmpi.so.40", "libmpi_mpifh.", "libmpi_cxx."]) {
        return Some(MpiFlavor::OpenMpi);
    }
    if has(&["libmpich.", "libmpichcxx.", "libmpichf90.", "libmpicxx."]) {
        return Some(MpiFlavor::Mpich);
    }
    // MPICH's and Intel MPI's libmpi (both started by hydra), once no Open
    // MPI library is among all of them.
    (all && has(&["libmpi.so."])).then_some(MpiFlavor::Mpich)
}

/// Library names from `ldd` output (`libx.so.1 => /path (0x...)`).
pub(crate) fn ldd_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.contains(".so"))
        .map(|w| w.rsplit('/').next().unwrap_or(w).to_string())
        .collect()
}

/// The MPI the binary at `path` is linked with, and how that was found
/// (for the summary); None when it names no MPI library the suite knows.
pub(crate) fn mpi_of(path: &Path) -> Option<(MpiFlavor, String)> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let direct = needed_libraries(path).ok()?;
    let mpi_lib = |libs: &[String]| libs.iter().find(|l| l.starts_with("libmpi")).cloned().unwrap_or_default();
    if let Some(f) = flavor_of_libraries(&direct, false) {
        return Some((f, format!("{name} needs {}", mpi_lib(&direct))));
    }
    if !direct.iter().any(|l| l.starts_with("libmpi")) {
        return None;
    }
    let out = Command::new("ldd").arg(path).output().ok()?;
    let all = ldd_names(&String::from_utf8_lossy(&out.stdout));
    flavor_of_libraries(&all, true).map(|f| (f, format!("{name} needs {} (ldd)", mpi_lib(&direct))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn libraries_name_the_mpi() {
        let f = |l: &[&str], all| flavor_of_libraries(&v(l), all);
        assert_eq!(f(&["libc.so.6", "libmpi.so.40"], false), Some(MpiFlavor::OpenMpi));
        assert_eq!(f(&["libmpich.so.12", "libc.so.6"], false), Some(MpiFlavor::Mpich));
        assert_eq!(f(&["libmpi.so.12"], false), None);
        assert_eq!(f(&["libmpi.so.12", "libfabric.so.1"], true), Some(MpiFlavor::Mpich));
        assert_eq!(f(&["libmpi.so.12", "libopen-pal.so.13"], true), Some(MpiFlavor::OpenMpi));
        assert_eq!(f(&["libc.so.6"], true), None);
    }

    #[test]
    fn ldd_output() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibmpi.so.12 => /opt/x/lib/libmpi.so.12 (0x1)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x2)\n\tnot a library\n";
        assert_eq!(ldd_names(text), ["linux-vdso.so.1", "libmpi.so.12", "ld-linux-x86-64.so.2"]);
    }

    /// This test binary is an ELF file linked with the MPI of this build.
    #[test]
    fn reads_a_real_elf() {
        let me = std::env::current_exe().unwrap();
        let libs = needed_libraries(&me).unwrap();
        assert!(libs.iter().any(|l| l.starts_with("libc.so")), "{libs:?}");
        let (flavor, _) = MpiFlavor::of_this_build();
        assert_eq!(mpi_of(&me).map(|m| m.0), Some(flavor), "{libs:?}");
        assert!(needed_libraries(Path::new("/nonexistent")).is_err());
        assert_eq!(
            parse_needed(b"#!/bin/sh\necho hello world, this is no ELF file at all....\n").unwrap_err(),
            "not an ELF file"
        );
        assert!(parse_needed(&b"\x7fELF\x02\x01\x01"[..].repeat(10)).is_err());
    }

    #[test]
    fn maker_mark_across_blocks() {
        let mark = crate::report::record::SCHEMA.as_bytes();
        let mut data = vec![b'x'; (1 << 20) - 5];
        data.extend_from_slice(mark);
        assert!(contains(data.as_slice(), mark).unwrap());
        assert!(!contains(&data[..data.len() - 1], mark).unwrap());
        assert!(!contains(&b""[..], mark).unwrap());
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("osu_latency"), b"\x7fELF compiled C").unwrap();
        assert_eq!(maker_of(&d.path().join("osu_latency")).unwrap(), Maker::Osu);
    }
}
