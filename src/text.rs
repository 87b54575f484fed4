//! Plain text for people: rows of cells as aligned columns, the tables
//! printed on a terminal by the subcommands, `commbench list` and the
//! placement report.

/// Choices as a sentence lists them: `a`, `a or b`, `a, b or c`.
pub(crate) fn or_list(words: &[&str]) -> String {
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => words.concat(),
    }
}

/// Left-aligned columns two spaces apart, one line per row (no newline),
/// trailing spaces trimmed: the plain tables people read on a terminal.
pub(crate) fn aligned_columns<const N: usize>(rows: &[[String; N]]) -> Vec<String> {
    capped_columns(rows, usize::MAX)
}

/// [`aligned_columns`] with no column padded beyond `cap` characters: a
/// longer cell is written whole and pushes the rest of its row right.
/// The padding is written out, not asked of `format!` (whose width is at
/// most 65,535 and panics beyond: a cell from data may be longer).
pub(crate) fn capped_columns<const N: usize>(rows: &[[String; N]], cap: usize) -> Vec<String> {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count()).min(cap);
        }
    }
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', w.saturating_sub(cell.chars().count())));
            }
            line.truncate(line.trim_end().len());
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn or_list_joins_as_a_sentence() {
        assert_eq!(or_list(&[]), "");
        assert_eq!(or_list(&["mpi"]), "mpi");
        assert_eq!(or_list(&["mpi", "ucx"]), "mpi or ucx");
        assert_eq!(or_list(&["mpi", "ucx", "nccl"]), "mpi, ucx or nccl");
    }

    #[test]
    fn columns_align_and_cap() {
        let rows = [["a".to_string(), "bb".into(), "c".into()], ["ddd".into(), "e".into(), String::new()]];
        assert_eq!(aligned_columns(&rows), ["a    bb  c", "ddd  e"]);
        let long = [["x".repeat(10), "y".into()], ["z".into(), "w".into()]];
        assert_eq!(capped_columns(&long, 3), [format!("{}  y", "x".repeat(10)), "z    w".to_string()]);
    }
}
