//! Agreement on failure across ranks: after a step every rank takes (an
//! allocation, a placement), either every rank goes on or every rank stops,
//! and rank 0 alone says why in one line.

use super::Control;

/// Every rank learns whether any rank failed (`mine` is this rank's
/// failure). Ok everywhere when none did; otherwise Err everywhere,
/// carrying on rank 0 the line to print: the first failing rank's text
/// (prefixed with its rank unless it is rank 0), and how many ranks failed
/// differently. Identical complaints from several ranks are said once.
pub(crate) fn agree_failures<C: Control>(w: &C, mine: Option<&str>) -> Result<(), Option<String>> {
    let failed = w.allreduce_sum_u64(u64::from(mine.is_some()));
    if failed == 0 {
        return Ok(());
    }
    let all = w.gather_bytes(mine.unwrap_or("").as_bytes());
    if w.rank() != 0 {
        return Err(None);
    }
    Err(Some(first_failure(&all)))
}

/// The line for the failures gathered from every rank (empty: none).
fn first_failure(all: &[Vec<u8>]) -> String {
    let failures: Vec<(usize, String)> = all
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.is_empty())
        .map(|(r, m)| (r, String::from_utf8_lossy(m).into_owned()))
        .collect();
    let (rank, text) = failures.first().cloned().unwrap_or((0, "failed".into()));
    let differ = failures.iter().filter(|(_, m)| *m != text).count();
    let others = if differ > 0 { format!(" (and {differ} rank(s) failed otherwise)") } else { String::new() };
    if rank == 0 {
        format!("{text}{others}")
    } else {
        format!("rank {rank}: {text}{others}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::mock::{self, Model};
    use crate::backend::Transport;

    fn lines(fail: impl Fn(usize) -> Option<&'static str> + Sync) -> Vec<Result<(), Option<String>>> {
        mock::run(4, Model::default(), |t| agree_failures(t.world(), fail(t.world().rank())))
    }

    #[test]
    fn nobody_failed() {
        assert!(lines(|_| None).iter().all(Result::is_ok));
    }

    #[test]
    fn rank_zero_speaks_for_everyone() {
        let out = lines(|r| (r >= 2).then_some("out of memory"));
        assert_eq!(out[0], Err(Some("rank 2: out of memory".into())));
        assert!(out[1..].iter().all(|r| *r == Err(None)));
        let out = lines(|r| match r {
            0 => Some("no NIC"),
            3 => Some("bad cpu"),
            _ => None,
        });
        assert_eq!(out[0], Err(Some("no NIC (and 1 rank(s) failed otherwise)".into())));
    }
}
