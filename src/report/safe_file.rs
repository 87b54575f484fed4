//! Creating and writing every output file safely: the one place that opens
//! a file for writing. A name in a results directory is predictable, so
//! something else (a symlink planted there, another run) may already hold
//! it; nothing here follows a link or writes into a file this process did
//! not create.
//!
//! - [`create_new`]: a new file, never an existing one (O_CREAT|O_EXCL;
//!   a symlink at the name, even a dangling one, is refused).
//! - [`replace`]: a whole file put in place at once, through a temporary
//!   file with an unpredictable name in the same directory and a rename
//!   (which replaces a link at the name, never its target).
//! - [`open_append`]: an append-only log that may exist, never through a
//!   link (O_NOFOLLOW).
//! - [`replace_or_overwrite`]: [`replace`], or, when the disk has no room
//!   for the new copy, the new bytes written over the old file in place
//!   (a file written with room to spare, [`with_room`], can still be
//!   rewritten on a full disk: how a run record still gets its end).
//! - [`write_named`]: an output a user names (`--out FILE`), written as
//!   what is there: standard output, a character device or a FIFO is
//!   written into, never replaced; anything else is [`replace`]d.
//! - [`RowFile`]: a file written in whole rows: a row that cannot be
//!   written whole is taken back, so a reader never sees half of one.
//! - [`PrivateDir`]: a scratch directory of this process's own, with an
//!   unpredictable name, removed with what it holds when dropped.
//! - [`name_part`], [`sibling`]: output names built from
//!   input data (a benchmark name read from a CSV, a job id from the
//!   environment) reduced to one plain file name, so that no such name
//!   reaches outside the directory chosen for it.

use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The longest name part [`name_part`] keeps, in bytes: room for a stamp,
/// a suffix and an extension under the usual 255-byte name limit.
pub(crate) const MAX_NAME_PART: usize = 160;

/// `raw` (input data: a benchmark name from a CSV, a Slurm job id) as one
/// plain file-name part: letters, digits, `.`, `-`, `_` and `+` are kept,
/// anything else (a `/`, a NUL, a space, a control character, non-ASCII)
/// becomes `_`, a leading `.` too (no hidden file, no `..`), the result is
/// at most [`MAX_NAME_PART`] bytes and never empty. A name that needs
/// none of this comes back unchanged.
pub(crate) fn name_part(raw: &str) -> String {
    let mut out: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+') { c } else { '_' })
        .take(MAX_NAME_PART)
        .collect();
    let dots = out.len() - out.trim_start_matches('.').len();
    out.replace_range(..dots, &"_".repeat(dots));
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// The file beside `stem` whose name is the stem's own plus `suffix`
/// (`<stem>_bw_MBps.csv`), the suffix reduced as [`name_part`] does, so
/// the file stays in the stem's directory.
pub(crate) fn sibling(stem: &Path, suffix: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_os_string();
    s.push(name_part(suffix));
    PathBuf::from(s)
}

/// Creates `path` as a new, empty file for writing; fails with
/// `AlreadyExists` when anything (a file, a link, a directory) is there.
pub(crate) fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

/// As [`create_new`], also open for reading (positioned reads of what was
/// written through another handle).
pub(crate) fn create_new_readable(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Opens `path` for appending, creating it if needed; a symlink at `path`
/// is refused (ELOOP).
pub(crate) fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().append(true).create(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

/// 64 unpredictable bits for a name (a fresh hash key, the process and
/// the time).
fn unpredictable() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

/// An unpredictable name beside `path`: `.<name>.<random>.tmp`.
fn temporary_beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{:016x}.tmp", unpredictable()))
}

/// A directory of this process's own: made new (an existing path, or a
/// link, is never taken over) inside a given one with an unpredictable
/// name, `<prefix>-<random>`, readable by its owner only, and removed with
/// everything in it when dropped.
#[derive(Debug)]
pub struct PrivateDir(PathBuf);

impl PrivateDir {
    pub(crate) fn new_in(parent: &Path, prefix: &str) -> io::Result<PrivateDir> {
        use std::os::unix::fs::DirBuilderExt;
        loop {
            let path = parent.join(format!("{prefix}-{:016x}", unpredictable()));
            match fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(PrivateDir(path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Puts `bytes` at `path` as a whole: written to a new temporary file in
/// the same directory, then renamed over `path`. A reader sees the old
/// file or the new one, never half of one; a link at `path` is replaced,
/// its target untouched. On failure nothing is left but what was there.
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (tmp, mut f) = loop {
        let tmp = temporary_beside(path);
        match create_new(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let written = f.write_all(bytes).and_then(|_| f.flush()).and_then(|_| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Where [`write_named`] put the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Put {
    /// A regular file put in place whole ([`replace`]).
    File,
    /// Written into what was there: standard output or error, a
    /// character device, a FIFO.
    Stream,
}

/// The file standard output (1) or standard error (2) has open, when it
/// is the file `m` describes.
fn std_stream_of(m: &fs::Metadata) -> Option<File> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let same = |f: &File| f.metadata().is_ok_and(|s| s.dev() == m.dev() && s.ino() == m.ino());
    let out = io::stdout().as_fd().try_clone_to_owned().ok().map(File::from).filter(same);
    out.or_else(|| io::stderr().as_fd().try_clone_to_owned().ok().map(File::from).filter(same))
}

/// Writes `bytes` to the output a user named (`--out FILE`) as what is
/// there, never replacing a device or a descriptor with a file:
/// - the path, followed through links, is the file standard output or
///   standard error has open (`/dev/stdout`, a link to `/proc/self/fd/1`,
///   a pipe or terminal): written on that descriptor;
/// - a character device (`/dev/null`, a terminal) or a FIFO, named
///   itself (not through a link): written into, never created or
///   truncated; a FIFO that no process reads is refused at once, not
///   waited for;
/// - a block device, a socket or a directory: refused;
/// - anything else (a regular file, nothing yet, a link to anything but
///   standard output or error): [`replace`], so a link planted there is
///   replaced, its target untouched.
pub(crate) fn write_named(path: &Path, bytes: &[u8]) -> io::Result<Put> {
    use std::os::unix::fs::FileTypeExt;
    let refuse = |why: String| Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    let own = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return replace(path, bytes).map(|_| Put::File),
        Err(e) => return Err(e),
    };
    if let Some(mut f) = fs::metadata(path).ok().as_ref().and_then(std_stream_of) {
        // What this process printed before goes out first.
        io::stdout().flush()?;
        f.write_all(bytes)?;
        f.flush()?;
        return Ok(Put::Stream);
    }
    let ft = own.file_type();
    if ft.is_block_device() || ft.is_socket() || ft.is_dir() {
        let what = crate::input_file::kind(&ft);
        return refuse(format!("{what}: nothing written (give a file, a character device, a FIFO or /dev/stdout)"));
    }
    if !(ft.is_char_device() || ft.is_fifo()) {
        return replace(path, bytes).map(|_| Put::File);
    }
    // Not O_CREAT, not O_TRUNC; O_NOFOLLOW: a link swapped in since the
    // look is not followed; O_NONBLOCK: a FIFO without a reader fails at
    // once (ENXIO) instead of waiting.
    let opened =
        OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC).open(path);
    let mut f = match opened {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) && ft.is_fifo() => {
            return refuse("a FIFO that no process reads: nothing written".into())
        }
        Err(e) => return Err(e),
    };
    let now = f.metadata()?.file_type();
    if !(now.is_char_device() || now.is_fifo()) {
        return refuse("no longer a device or a FIFO when opened: nothing written".into());
    }
    // Blocking writes from here: a reader slower than the writer is
    // waited for, as a shell's redirection would.
    use std::os::fd::AsRawFd;
    // SAFETY: F_GETFL and F_SETFL on a descriptor this function owns.
    unsafe {
        let fl = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if fl == -1 || libc::fcntl(f.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK) == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    f.write_all(bytes)?;
    f.flush()?;
    Ok(Put::Stream)
}

/// Whether `e` says the file system has no room left (ENOSPC, EDQUOT).
pub(crate) fn is_full(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// The block size [`with_room`] rounds to: a page of tmpfs, a block of
/// ext4 or xfs.
const BLOCK: usize = 4096;

/// `bytes` followed by `fill` bytes: at least `room` of them, up to the
/// end of the block where that lands (so the room costs at most one block
/// more than the bytes themselves).
pub(crate) fn with_room(mut bytes: Vec<u8>, room: usize, fill: u8) -> Vec<u8> {
    let len = (bytes.len() + room).div_ceil(BLOCK) * BLOCK;
    bytes.resize(len, fill);
    bytes
}

/// Writes `bytes` over the file at `path` in place, `fill` after them up
/// to the file's present length: no new block is needed, so this works on
/// a full disk where [`replace`] cannot. Refused when `bytes` are longer
/// than the file, or `path` is a link or not a regular file. Not atomic: a
/// reader at that moment may see a mix; a write that fails puts the old
/// bytes back as far as it can.
pub(crate) fn overwrite_in_place(path: &Path, bytes: &[u8], fill: u8) -> io::Result<()> {
    let mut f =
        OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() || meta.len() < bytes.len() as u64 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("no room to rewrite it in place ({} bytes for a file of {})", bytes.len(), meta.len()),
        ));
    }
    let mut old = Vec::with_capacity(meta.len() as usize);
    io::Read::read_to_end(&mut f, &mut old)?;
    let mut new = bytes.to_vec();
    new.resize(old.len(), fill);
    let mut put = |b: &[u8]| f.seek(SeekFrom::Start(0)).and_then(|_| f.write_all(b)).and_then(|_| f.flush());
    let written = put(&new);
    if written.is_err() {
        let _ = put(&old);
    }
    written
}

/// [`replace`]; on a full disk, [`overwrite_in_place`] (which needs the
/// file to have been written with room for `bytes`: [`with_room`]).
pub(crate) fn replace_or_overwrite(path: &Path, bytes: &[u8], fill: u8) -> io::Result<()> {
    match replace(path, bytes) {
        Err(e) if is_full(&e) => overwrite_in_place(path, bytes, fill).map_err(|_| e),
        other => other,
    }
}

/// Creates `path` holding `bytes` (a new file: an existing one, or a link,
/// is refused with `AlreadyExists`). A failed write removes the file.
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = create_new(path)?;
    let written = f.write_all(bytes).and_then(|_| f.flush());
    if written.is_err() {
        drop(f);
        let _ = fs::remove_file(path);
    }
    written
}

/// A file written in whole rows (lines): each row goes out in one write;
/// a row that does not get out whole (a full disk, a short write) is cut
/// off again, so the file always ends with the last complete row.
#[derive(Debug)]
pub(crate) struct RowFile {
    file: File,
    /// Bytes of complete rows.
    good: u64,
}

impl RowFile {
    /// Rows appended to `file` from its current end.
    pub fn new(mut file: File) -> io::Result<RowFile> {
        let good = file.seek(SeekFrom::End(0))?;
        Ok(RowFile { file, good })
    }

    /// Appends one or more whole rows; on error the file is as it was.
    pub(crate) fn append(&mut self, rows: &[u8]) -> io::Result<()> {
        match self.file.write_all(rows).and_then(|_| self.file.flush()) {
            Ok(()) => {
                self.good += rows.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Take back whatever part of the row reached the file.
                let _ = self.file.set_len(self.good);
                let _ = self.file.seek(SeekFrom::Start(self.good));
                Err(e)
            }
        }
    }

    /// Bytes of complete rows in the file.
    #[cfg(test)]
    pub fn len(&self) -> u64 {
        self.good
    }
}

/// Where whole rows go: a [`RowFile`], or any writer (tests, memory).
pub(crate) trait RowSink {
    /// Writes `rows` whole or not at all (as far as the target allows).
    fn append_rows(&mut self, rows: &[u8]) -> io::Result<()>;
}

impl RowSink for RowFile {
    fn append_rows(&mut self, rows: &[u8]) -> io::Result<()> {
        self.append(rows)
    }
}

impl RowSink for Vec<u8> {
    fn append_rows(&mut self, rows: &[u8]) -> io::Result<()> {
        self.extend_from_slice(rows);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A private directory is new, its owner's alone, and goes with what
    /// it holds; two never share a name.
    #[test]
    fn private_dirs_are_new_owned_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (PrivateDir::new_in(d.path(), "x").unwrap(), PrivateDir::new_in(d.path(), "x").unwrap());
        assert_ne!(a.path(), b.path());
        assert_eq!(a.path().parent(), Some(d.path()));
        assert!(a.path().file_name().unwrap().to_str().unwrap().starts_with("x-"));
        assert_eq!(fs::metadata(a.path()).unwrap().permissions().mode() & 0o777, 0o700);
        fs::write(a.path().join("f"), "").unwrap();
        let kept = a.path().to_path_buf();
        drop(a);
        assert!(!kept.exists());
        assert!(PrivateDir::new_in(&d.path().join("missing"), "x").is_err());
    }

    /// Names from input data stay one plain name inside their directory.
    #[test]
    fn names_from_input_stay_inside() {
        for plain in ["osu_latency", "osu_bw_fan_in", "12345", "gpu-bw", "a.b+c"] {
            assert_eq!(name_part(plain), plain);
        }
        assert_eq!(name_part("../../x"), "___.._x");
        assert_eq!(name_part("/etc/passwd"), "_etc_passwd");
        assert_eq!(name_part(".hidden"), "_hidden");
        assert_eq!(name_part(".."), "__");
        assert_eq!(name_part(""), "_");
        assert_eq!(name_part("a b\0\nc\u{e9}"), "a_b__c_");
        assert_eq!(name_part(&"x".repeat(1000)).len(), MAX_NAME_PART);
        let d = Path::new("/r/out");
        for hostile in ["../../x", "/abs/y", "..", ".", "a/../../b", "\0"] {
            let p = d.join(name_part(hostile));
            assert_eq!(p.parent(), Some(d), "{hostile}: {}", p.display());
            assert!(!p.file_name().unwrap().to_string_lossy().starts_with('.'), "{hostile}");
        }
        assert_eq!(sibling(Path::new("/r/x_pairs"), "_bw_MBps.csv"), Path::new("/r/x_pairs_bw_MBps.csv"));
        assert_eq!(sibling(Path::new("/r/x"), "/../../y"), Path::new("/r/x_.._.._y"));
    }

    #[test]
    fn create_new_refuses_links_and_files() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        fs::write(&target, "keep").unwrap();
        let link = d.path().join("link");
        symlink(&target, &link).unwrap();
        assert_eq!(create_new(&link).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        let dangling = d.path().join("dangling");
        symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert_eq!(create_new(&dangling).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert!(!d.path().join("nowhere").exists());
        assert_eq!(create_new(&target).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn open_append_refuses_a_link() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        fs::write(&target, "keep").unwrap();
        let link = d.path().join("log");
        symlink(&target, &link).unwrap();
        assert!(open_append(&link).is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
        let mut f = open_append(&d.path().join("new.log")).unwrap();
        f.write_all(b"x").unwrap();
    }

    #[test]
    fn replace_swaps_a_link_not_its_target() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        fs::write(&target, "keep").unwrap();
        let link = d.path().join("x.svg");
        symlink(&target, &link).unwrap();
        replace(&link, b"<svg/>").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
        assert!(!fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&link).unwrap(), "<svg/>");
        // Nothing else is left in the directory.
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 2);
    }

    /// What cannot take an output is refused in one sentence, left as it
    /// was; a file, nothing yet, or a link to a file is put in place.
    #[test]
    fn write_named_refuses_what_cannot_take_an_output() {
        use std::os::unix::fs::FileTypeExt;
        let d = tempfile::tempdir().unwrap();
        let e = write_named(d.path(), b"x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "a directory: nothing written (give a file, a character device, a FIFO or /dev/stdout)"
        );
        let sock = d.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert!(write_named(&sock, b"x").unwrap_err().to_string().starts_with("a socket: nothing written"));
        assert!(fs::symlink_metadata(&sock).unwrap().file_type().is_socket());
        // A block device node of a device no driver has: refused before
        // any open (root only; skipped elsewhere).
        let blk = d.path().join("b");
        let c = std::ffi::CString::new(blk.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mknod only creates a node.
        if unsafe { libc::mknod(c.as_ptr(), libc::S_IFBLK | 0o600, libc::makedev(4095, 4095)) } == 0 {
            assert!(write_named(&blk, b"x").unwrap_err().to_string().starts_with("a block device: nothing written"));
            assert!(fs::symlink_metadata(&blk).unwrap().file_type().is_block_device());
        }
        let new = d.path().join("new.csv");
        assert_eq!(write_named(&new, b"a\n").unwrap(), Put::File);
        assert_eq!(fs::read_to_string(&new).unwrap(), "a\n");
        let link = d.path().join("link.csv");
        symlink(&new, &link).unwrap();
        assert_eq!(write_named(&link, b"b\n").unwrap(), Put::File);
        assert_eq!(fs::read_to_string(&new).unwrap(), "a\n", "the link's target is untouched");
        assert!(!fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    #[test]
    fn temporary_names_differ() {
        let p = Path::new("/r/x.json");
        assert_ne!(temporary_beside(p), temporary_beside(p));
        assert_eq!(temporary_beside(p).parent(), Some(Path::new("/r")));
    }

    /// A file written with room can be rewritten in place (what a full
    /// disk leaves): the new bytes, then the fill up to the old length; a
    /// longer text or a link is refused, the file untouched.
    #[test]
    fn rewritten_in_place_within_its_room() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        let first = with_room(b"{\"status\": \"running\"}\n".to_vec(), 100, b' ');
        assert_eq!(first.len(), BLOCK);
        assert_eq!(with_room(vec![b'x'; BLOCK - 100], 100, b' ').len(), BLOCK);
        assert_eq!(with_room(vec![b'x'; BLOCK - 99], 100, b' ').len(), 2 * BLOCK);
        replace(&p, &first).unwrap();
        overwrite_in_place(&p, b"{\"status\": \"complete\", \"exit_code\": 0}\n", b' ').unwrap();
        let text = fs::read_to_string(&p).unwrap();
        assert_eq!(text.len(), BLOCK);
        assert_eq!(text.trim_end(), "{\"status\": \"complete\", \"exit_code\": 0}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["exit_code"], 0);
        let e = overwrite_in_place(&p, &vec![b'x'; BLOCK + 1], b' ').unwrap_err();
        assert!(e.to_string().contains("no room to rewrite it in place"), "{e}");
        assert_eq!(fs::read_to_string(&p).unwrap(), text);
        let link = d.path().join("link.json");
        symlink(&p, &link).unwrap();
        assert!(overwrite_in_place(&link, b"{}", b' ').is_err());
        assert_eq!(fs::read_to_string(&p).unwrap(), text);
        assert!(is_full(&io::Error::from_raw_os_error(libc::ENOSPC)));
        assert!(!is_full(&io::Error::from_raw_os_error(libc::EACCES)));
    }

    #[test]
    fn write_new_never_overwrites() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("summary.md");
        write_new(&p, b"one").unwrap();
        assert_eq!(write_new(&p, b"two").unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&p).unwrap(), "one");
    }

    #[test]
    fn row_file_appends_whole_rows() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.csv");
        let mut f = RowFile::new(create_new(&p).unwrap()).unwrap();
        f.append(b"a,b\n").unwrap();
        f.append(b"1,2\n").unwrap();
        assert_eq!((f.len(), fs::read_to_string(&p).unwrap().as_str()), (8, "a,b\n1,2\n"));
    }

    /// /dev/full fails every write: the row is taken back (set_len fails
    /// on a device too, quietly) and the error comes out.
    #[test]
    fn a_failed_row_is_an_error() {
        let Ok(file) = OpenOptions::new().write(true).open("/dev/full") else { return };
        let mut f = RowFile { file, good: 0 };
        assert_eq!(f.append(b"1,2\n").unwrap_err().raw_os_error(), Some(libc::ENOSPC));
        assert_eq!(f.len(), 0);
    }
}
