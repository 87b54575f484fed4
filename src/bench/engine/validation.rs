//! What commbench says when validation (`-c`) finds a wrong element: the
//! one-line description a failing rank prints, and the `-clog` file entry.

use std::io::{self, Write};
use std::path::Path;

use crate::bench::SizeCase;
use crate::buffer::Mismatch;

/// Where validation failed, in one line.
pub(crate) fn describe_mismatch(case: &SizeCase, iteration: usize, m: &Mismatch) -> String {
    format!(
        "size {} ({}), iteration {iteration}: element {} expected {}, found {} ({} of {} elements wrong)",
        case.size,
        case.datatype.mpi_name(),
        m.index,
        m.expected,
        m.found,
        m.count,
        case.count
    )
}

/// `-clog[:DIR]`: each failing rank appends what it saw to DIR/log-<rank>.log.
pub(crate) fn write_log(dir: &Path, rank: usize, case: &SizeCase, iteration: usize, m: &Mismatch) {
    let write = || -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut f = crate::report::safe_file::open_append(&dir.join(format!("log-{rank}.log")))?;
        writeln!(f, "{}", describe_mismatch(case, iteration, m))
    };
    if let Err(e) = write() {
        crate::say!("validation log {}: {e}", dir.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Datatype;

    fn case() -> SizeCase {
        SizeCase {
            datatype: Datatype::Char,
            size: 16,
            count: 16,
            iterations: 10,
            warmup: 2,
            window: 1,
            calls: crate::bench::Calls::ALONE,
        }
    }

    #[test]
    fn mismatch_line_and_log() {
        let m = Mismatch { index: 9, expected: "-116".into(), found: "127".into(), count: 4 };
        assert_eq!(
            describe_mismatch(&case(), 3, &m),
            "size 16 (MPI_CHAR), iteration 3: element 9 expected -116, found 127 (4 of 16 elements wrong)"
        );
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("logs");
        write_log(&dir, 1, &case(), 3, &m);
        write_log(&dir, 1, &case(), 5, &m);
        let text = std::fs::read_to_string(dir.join("log-1.log")).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().nth(1).unwrap().contains("iteration 5"));
    }
}
