//! Reading a file a user names as input (compare and plot results, run
//! records, `topo --machine` descriptions, suite hostfiles): one place that
//! refuses what is not a regular file (a FIFO would block the open or the
//! read forever, `/dev/zero` or `/dev/urandom` would be read until memory
//! runs out) and caps the size read, so memory stays proportional to the
//! real input and every such read ends at once.
//!
//! Errors are `io::Error`s carrying a sentence, so callers keep their own
//! error types and print `path: reason` as before.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest input file read: far above any results file, run record,
/// machine description or hostfile (a 1000-size OSU output is ~50 KB).
pub(crate) const MAX_INPUT_BYTES: u64 = 64 << 20;

/// What a non-regular file is, in words ("a FIFO").
pub fn kind(ft: &std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// What the refusal of a non-regular file says: `not a regular file (a
/// FIFO)` and `hint`.
fn not_a_file(ft: &std::fs::FileType, hint: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("not a regular file ({}){hint}", kind(ft)))
}

/// What the refusal of a user's input file adds.
const INPUT_HINT: &str = "; give a results, description or host file";

/// Opens `path` for reading without blocking on a FIFO with no writer,
/// and refuses anything but a regular file (checked on the opened file,
/// so a swap between the check and the read cannot slip one through).
fn open_regular(path: &Path, hint: &str) -> io::Result<File> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(path)?;
    let ft = file.metadata()?.file_type();
    if !ft.is_file() {
        return Err(not_a_file(&ft, hint));
    }
    Ok(file)
}

/// Why `path`, a file that something other than this module will open
/// (the dynamic loader for `COMMBENCH_NCCL` or `COMMBENCH_NVML`, SQLite for
/// `COMMBENCH_HISTORY`), is refused: it exists (links followed) and is not
/// a regular file: a FIFO would block that open forever, a device would
/// be read or written. None for a regular file and for nothing there (the
/// opener then says so in its own words).
pub(crate) fn not_regular(path: &Path) -> Option<io::Error> {
    let ft = std::fs::metadata(path).ok()?.file_type();
    (!ft.is_file()).then(|| not_a_file(&ft, ""))
}

/// The text of a small file in a tree named by a variable
/// (`COMMBENCH_SYSFS_ROOT`'s copy of sysfs), at most `cap` bytes; refused
/// at once when it is not a regular file, as [`read_capped`] does.
pub(crate) fn read_small_text(path: &Path, cap: u64) -> io::Result<String> {
    let bytes = read_with(path, cap, "")?;
    String::from_utf8(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// The bytes of `path`, at most `cap` of them; a larger file is refused.
pub(crate) fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    read_with(path, cap, INPUT_HINT)
}

fn read_with(path: &Path, cap: u64, hint: &str) -> io::Result<Vec<u8>> {
    let file = open_regular(path, hint)?;
    let len = file.metadata()?.len();
    if len > cap {
        return Err(too_large(len, cap));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // The size may change under us; never read more than the cap.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64, cap));
    }
    Ok(bytes)
}

fn too_large(len: u64, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("file too large ({len} bytes; input files are read up to {} MiB)", cap >> 20),
    )
}

/// The bytes of an input file (see [`MAX_INPUT_BYTES`]).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    read_capped(path, MAX_INPUT_BYTES)
}

/// `bytes` without a leading UTF-8 byte order mark (what some editors and
/// Windows tools put before a text), so that the first line reads as it
/// shows.
pub(crate) fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// An input file as UTF-8 text (a byte order mark left out).
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let bytes = read(path)?;
    String::from_utf8(without_bom(&bytes).to_vec())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text (is this the right file?)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("commbench-input-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&d);
        d
    }

    #[test]
    fn reads_a_regular_file() {
        let p = tmp("plain");
        std::fs::write(&p, "hello\n").unwrap();
        assert_eq!(read_to_string(&p).unwrap(), "hello\n");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn refuses_devices_at_once() {
        for dev in ["/dev/zero", "/dev/urandom", "/dev/null"] {
            let t = Instant::now();
            let e = read(Path::new(dev)).unwrap_err();
            assert!(e.to_string().contains("character device"), "{dev}: {e}");
            assert!(t.elapsed() < crate::procs::under_load(Duration::from_secs(1)));
        }
        let e = read(Path::new("/")).unwrap_err();
        assert!(e.to_string().contains("directory") || e.kind() == io::ErrorKind::IsADirectory, "{e}");
    }

    #[test]
    fn refuses_a_fifo_without_blocking() {
        let p = tmp("fifo");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = Instant::now();
        let e = read(&p).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert!(t.elapsed() < crate::procs::under_load(Duration::from_secs(1)));
        std::fs::remove_file(&p).unwrap();
    }

    /// What another opener (the loader, SQLite) is given is checked
    /// without opening it; a small file of a copied tree is read, a FIFO
    /// there refused at once, without the hint for a user's input.
    #[test]
    fn files_for_other_openers_and_copied_trees() {
        let p = tmp("attr");
        std::fs::write(&p, "16.0 GT/s PCIe\n").unwrap();
        assert!(not_regular(&p).is_none());
        assert!(not_regular(Path::new("/nonexistent/x")).is_none());
        assert_eq!(not_regular(Path::new("/dev/null")).unwrap().to_string(), "not a regular file (a character device)");
        assert_eq!(not_regular(Path::new("/")).unwrap().to_string(), "not a regular file (a directory)");
        assert_eq!(read_small_text(&p, 64).unwrap(), "16.0 GT/s PCIe\n");
        std::fs::remove_file(&p).unwrap();
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(not_regular(&p).unwrap().to_string(), "not a regular file (a FIFO)");
        assert_eq!(read_small_text(&p, 64).unwrap_err().to_string(), "not a regular file (a FIFO)");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn caps_the_size() {
        let p = tmp("big");
        std::fs::write(&p, vec![b'x'; 100]).unwrap();
        assert_eq!(read_capped(&p, 100).unwrap().len(), 100);
        let e = read_capped(&p, 99).unwrap_err();
        assert!(e.to_string().contains("too large"), "{e}");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_byte_order_mark_is_left_out() {
        let p = tmp("bom");
        std::fs::write(&p, "\u{feff}# OSU MPI Latency Test v7.4\n").unwrap();
        assert_eq!(read_to_string(&p).unwrap(), "# OSU MPI Latency Test v7.4\n");
        assert_eq!(without_bom(b"plain"), b"plain");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn missing_and_binary_files() {
        assert_eq!(read(Path::new("/nonexistent/x")).unwrap_err().kind(), io::ErrorKind::NotFound);
        let p = tmp("bin");
        std::fs::write(&p, [0xff, 0xfe, 0]).unwrap();
        assert!(read_to_string(&p).unwrap_err().to_string().contains("UTF-8"));
        std::fs::remove_file(&p).unwrap();
    }
}
