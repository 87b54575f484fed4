//! The hang watchdog (`--timeout`, 10 minutes unless told). The measuring
//! thread publishes where it is (step, datatype, size, iteration) with
//! plain atomic stores between timed operations; a background thread polls
//! that position. Before MPI is up, a rank whose position has not moved for
//! the timeout says where it is and ends its process, so the launcher tears
//! down the job with a non-zero status. Once MPI is up, rank 0 decides for
//! the job (`survey.rs`): when its own position has not moved for the
//! timeout it asks every rank, out of band, where it is; if none has moved
//! for the timeout either, it says who is where (ranges of ranks, who is
//! behind, who did not answer), puts the whole table in the run record and
//! ends the job. Another rank ends the job on its own only when rank 0 has
//! not asked it for a while (rank 0 itself stuck or cut off).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::datatype::Datatype;
use crate::job::survey::{Answer, Endpoint, Survey};

/// The watchdog's timeout when `--timeout` is not given: a stall this long
/// with no iteration completing on any rank is a hang, not a slow size.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Exit status when the watchdog ends a run (as coreutils `timeout`).
pub(crate) const TIMEOUT_EXIT: i32 = 124;

/// What the measuring thread is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Step {
    Startup = 0,
    Setup = 1,
    Warmup = 2,
    Timed = 3,
    Results = 4,
    Finish = 5,
}

impl Step {
    fn from_u8(v: u8) -> Step {
        match v {
            1 => Step::Setup,
            2 => Step::Warmup,
            3 => Step::Timed,
            4 => Step::Results,
            5 => Step::Finish,
            _ => Step::Startup,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Step::Startup => "start-up (MPI initialisation and rank exchange)",
            Step::Setup => "buffer set-up and synchronisation before the size",
            Step::Warmup => "warm-up iterations",
            Step::Timed => "timed iterations",
            Step::Results => "collecting results across ranks",
            Step::Finish => "finishing (MPI finalisation)",
        }
    }
}

/// Where a rank is: a [`Step`] (as u8), its datatype (0 for none, else
/// its index in [`Datatype::ALL`] + 1), message size and iteration (0
/// before the first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Position {
    pub step: u8,
    pub datatype: u8,
    pub size: u64,
    pub iteration: u64,
}

impl Position {
    /// How far along a run this is, for finding who is behind: datatypes
    /// and sizes are run in order, and within a size the steps.
    fn order(&self) -> (u8, u64, u8, u64) {
        (self.datatype, self.size, self.step, self.iteration)
    }
}

/// Shared position of the measuring thread.
#[derive(Default)]
pub struct Progress {
    step: AtomicU8,
    datatype: AtomicU8,
    size: AtomicU64,
    iteration: AtomicU64,
    /// Milliseconds (since [`epoch`]) the watchdog last saw the position
    /// move; 0 without a watchdog.
    moved_ms: AtomicU64,
}

/// A fixed instant of this process, for [`Progress::still_for`].
fn epoch() -> Instant {
    static E: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *E.get_or_init(Instant::now)
}

impl Progress {
    pub(crate) fn enter(&self, step: Step, dt: Option<Datatype>, size: usize) {
        self.step.store(step as u8, Relaxed);
        self.datatype.store(dt.map(Datatype::code).unwrap_or(0), Relaxed);
        self.size.store(size as u64, Relaxed);
        self.iteration.store(0, Relaxed);
    }

    pub(crate) fn set_step(&self, step: Step) {
        self.step.store(step as u8, Relaxed);
    }

    /// Called once per iteration, outside the timed region.
    #[inline(always)]
    pub fn iteration(&self, i: usize) {
        self.iteration.store(i as u64 + 1, Relaxed);
    }

    /// The step now.
    pub fn step(&self) -> Step {
        Step::from_u8(self.step.load(Relaxed))
    }

    /// How long the position has not moved, as the watchdog saw it (None
    /// without a watchdog).
    pub(crate) fn still_for(&self) -> Option<Duration> {
        match self.moved_ms.load(Relaxed) {
            0 => None,
            ms => Some(epoch().elapsed().saturating_sub(Duration::from_millis(ms))),
        }
    }

    fn mark_moved(&self) {
        self.moved_ms.store((epoch().elapsed().as_millis() as u64).max(1), Relaxed);
    }

    /// Where the run is, as the watchdog says it: ` at message size 4096
    /// (MPI_CHAR), step: timed iterations after iteration 17`.
    pub fn position(&self) -> String {
        position(self.position_now())
    }

    pub(crate) fn position_now(&self) -> Position {
        Position {
            step: self.step.load(Relaxed),
            datatype: self.datatype.load(Relaxed),
            size: self.size.load(Relaxed),
            iteration: self.iteration.load(Relaxed),
        }
    }
}

/// Called with the message just before the process ends (e.g. to mark the
/// run record).
pub(crate) type OnFire = Box<dyn Fn(&str) + Send>;

/// The watchdog's setting: what it watches, for how long, and how it names
/// this process (`whose`: "rank 1 on host x", after the program running
/// at the time, [`crate::fatal::program`]: a shared launch runs several).
pub struct Watch {
    pub progress: Arc<Progress>,
    pub timeout: Duration,
    pub whose: String,
    pub on_fire: Arc<Mutex<Option<OnFire>>>,
    /// Set once MPI is up ([`Survey::open`]).
    pub survey: Arc<OnceLock<Survey>>,
}

impl Watch {
    /// "osu_latency rank 1 on host x": the program running now.
    fn who(&self) -> String {
        format!("{} {}", crate::fatal::program(), self.whose)
    }
}

/// Starts the watchdog thread.
pub fn start(w: Watch) {
    let who = w.who();
    thread::Builder::new()
        .name("commbench-watchdog".into())
        .spawn(move || watch(w))
        .map(|_| ())
        .unwrap_or_else(|e| crate::say!("{who}: cannot start the --timeout watchdog: {e}"));
}

fn watch(w: Watch) {
    let timeout = w.timeout;
    let poll = (timeout / 10).clamp(Duration::from_millis(10), Duration::from_millis(200));
    // How often rank 0 asks again while some rank still moves, and how
    // long another rank waits past the timeout for rank 0 to ask it: well
    // beyond the few seconds rank 0's asking takes, so that a rank rank 0
    // has just asked leaves the report to rank 0.
    let again = (timeout / 10).clamp(Duration::from_secs(1), Duration::from_secs(30));
    // (A rank rank 0 cannot reach says its own line after the timeout
    // and this grace: 5 s on short timeouts, a minute at the default.)
    let grace = (timeout / 5).clamp(Duration::from_secs(5), Duration::from_secs(60));
    let mut last = w.progress.position_now();
    let mut since = Instant::now();
    let mut asked: Option<Instant> = None;
    w.progress.mark_moved();
    loop {
        thread::sleep(poll);
        let now = w.progress.position_now();
        if now != last {
            last = now;
            since = Instant::now();
            w.progress.mark_moved();
            continue;
        }
        let still = since.elapsed();
        if still < timeout {
            continue;
        }
        match w.survey.get() {
            None => fire(&w, vec![describe(&w.who(), timeout, now)]),
            Some(s) if s.rank == 0 => {
                if asked.is_some_and(|t| t.elapsed() < again) {
                    continue;
                }
                asked = Some(Instant::now());
                let answers = s.ask_all(&w.progress);
                let limit = timeout.as_millis() as u64;
                if answers.iter().any(|(_, a)| a.as_ref().is_ok_and(|a| a.still_ms < limit)) {
                    continue;
                }
                let (lines, table) = report(crate::fatal::program(), timeout, &answers);
                crate::report::record::keep_hang_table(table);
                fire(&w, lines);
            }
            Some(s) => {
                if still >= timeout + grace && !s.asked_within(grace) {
                    fire(&w, vec![describe(&w.who(), timeout, now)]);
                }
            }
        }
    }
}

/// Says `lines` in one write, lets the run record be marked with the
/// first, and ends the process.
fn fire(w: &Watch, lines: Vec<String>) -> ! {
    crate::diag::say(&lines.join("\n"));
    if let Ok(guard) = w.on_fire.lock() {
        if let Some(f) = guard.as_ref() {
            f(&lines[0]);
        }
    }
    // SAFETY: ends the process at once, without running destructors that
    // could block on the hung MPI.
    unsafe { libc::_exit(TIMEOUT_EXIT) };
}

fn describe(who: &str, timeout: Duration, at: Position) -> String {
    format!("{who}: no progress for {}s{}; ending the job (--timeout)", timeout.as_secs_f64(), position(at))
}

/// At most this many lines of groups of ranks on stderr; the record holds
/// every rank.
const MAX_GROUPS: usize = 6;

/// `0-3,5` as `rank 0-3,5` or `rank 4`.
fn ranks_text(ranks: &[usize]) -> String {
    let list = crate::topo::cpuset::format_list(ranks);
    if ranks.len() == 1 {
        format!("rank {list}")
    } else {
        format!("ranks {list}")
    }
}

/// The distinct hosts of `ranks`, at most three named.
fn hosts_text(hosts: &[&str]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for h in hosts {
        if !seen.contains(h) {
            seen.push(h);
        }
    }
    match seen.len() {
        0..=3 => seen.join(", "),
        n => format!("{} and {} more hosts", seen[..3].join(", "), n - 3),
    }
}

/// Rank 0's report of a hang from every rank's answer: the lines for
/// stderr (the first names the suspects: ranks that did not answer, else
/// ranks behind the rest; then one line per group of ranks at one place,
/// those that did not answer and those behind first) and the table for
/// the run record.
pub fn report(
    name: &str,
    timeout: Duration,
    answers: &[(Endpoint, Result<Answer, String>)],
) -> (Vec<String>, serde_json::Value) {
    // Ranks that did not answer, by host; ranks that did, by position.
    let mut silent: Vec<(String, Vec<usize>, String)> = Vec::new();
    let mut groups: Vec<(Position, Vec<usize>, Vec<&str>)> = Vec::new();
    for (e, a) in answers {
        match a {
            Err(why) => match silent.iter_mut().find(|g| g.0 == e.host) {
                Some(g) => g.1.push(e.rank),
                None => silent.push((e.host.clone(), vec![e.rank], why.clone())),
            },
            Ok(a) => match groups.iter_mut().find(|g| g.0 == a.at) {
                Some(g) => {
                    g.1.push(e.rank);
                    g.2.push(&e.host);
                }
                None => groups.push((a.at, vec![e.rank], vec![&e.host])),
            },
        }
    }
    groups.sort_by_key(|g| g.0.order());
    let ahead = groups.last().map(|g| g.0.order());
    let behind = |p: &Position| groups.len() > 1 && Some(p.order()) < ahead;
    let secs = timeout.as_secs_f64();
    let headline = if !silent.is_empty() {
        let ranks: Vec<usize> = silent.iter().flat_map(|g| g.1.iter().copied()).collect();
        let hosts: Vec<&str> = silent.iter().map(|g| g.0.as_str()).collect();
        format!("{} on {} did not answer", ranks_text(&ranks), hosts_text(&hosts))
    } else if groups.len() > 1 {
        let first = &groups[0];
        format!("{} on {} are behind the rest", ranks_text(&first.1), hosts_text(&first.2))
    } else {
        "every rank waits at the same place".to_string()
    };
    let mut lines =
        vec![format!("{name}: no progress on any rank for {secs}s; ending the job (--timeout): {headline}")];
    let mut all: Vec<String> = silent
        .iter()
        .map(|(host, ranks, why)| format!("{name}:   {} on {host}: no answer ({why})", ranks_text(ranks)))
        .collect();
    all.extend(groups.iter().map(|(p, ranks, hosts)| {
        let mark = if behind(p) { " (behind)" } else { "" };
        format!("{name}:   {} on {}: {}{mark}", ranks_text(ranks), hosts_text(hosts), where_text(*p))
    }));
    let shown = all.len().min(MAX_GROUPS);
    lines.extend(all.drain(..shown));
    if !all.is_empty() {
        lines.push(format!("{name}:   and {} more groups of ranks: the run record's `hang` has every rank", all.len()));
    }
    let ranks: Vec<serde_json::Value> = answers
        .iter()
        .map(|(e, a)| match a {
            Ok(a) => serde_json::json!({
                "rank": e.rank,
                "host": e.host,
                "step": Step::from_u8(a.at.step).describe(),
                "datatype": Datatype::from_code(a.at.datatype).map(Datatype::mpi_name),
                "size": a.at.size,
                "iteration": a.at.iteration,
                "still_ms": a.still_ms,
                "behind": behind(&a.at),
            }),
            Err(why) => serde_json::json!({"rank": e.rank, "host": e.host, "answered": false, "why": why}),
        })
        .collect();
    let table = serde_json::json!({"timeout_s": secs, "summary": lines, "ranks": ranks});
    (lines, table)
}

/// Where a rank is, for a line of its own: `at message size 4096
/// (MPI_CHAR), step: timed iterations after iteration 17`.
fn where_text(p: Position) -> String {
    let t = position(p);
    t.strip_prefix(" ").or_else(|| t.strip_prefix(", ")).unwrap_or(&t).to_string()
}

fn position(Position { step, datatype: dt, size, iteration }: Position) -> String {
    let step = Step::from_u8(step);
    let mut where_ = String::new();
    if matches!(step, Step::Setup | Step::Warmup | Step::Timed | Step::Results) {
        where_.push_str(&format!(" at message size {size}"));
        if let Some(dt) = Datatype::from_code(dt) {
            where_.push_str(&format!(" ({})", dt.mpi_name()));
        }
    }
    let iter = if matches!(step, Step::Warmup | Step::Timed) && iteration > 0 {
        format!(" after iteration {iteration}")
    } else {
        String::new()
    };
    format!("{where_}, step: {}{iter}", step.describe())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_size_and_step() {
        let at = Position { step: Step::Timed as u8, datatype: 1, size: 4096, iteration: 17 };
        let m = describe("osu_bw rank 1 on h", Duration::from_secs(5), at);
        assert_eq!(
            m,
            "osu_bw rank 1 on h: no progress for 5s at message size 4096 (MPI_CHAR), step: timed iterations \
             after iteration 17; ending the job (--timeout)"
        );
        let m = describe("x", Duration::from_millis(1500), Position::default());
        assert_eq!(m, "x: no progress for 1.5s, step: start-up (MPI initialisation and rank exchange); ending the job (--timeout)");
    }

    /// nccl-tests' types beyond OSU's three (double, half ...) name
    /// themselves in a hang's message; they once indexed past OSU's list.
    #[test]
    fn every_type_names_itself_where_a_rank_stalled() {
        let p = Progress::default();
        for dt in [Datatype::Double, Datatype::Half, Datatype::F8e5m2] {
            p.enter(Step::Timed, Some(dt), 8);
            let m = describe("all_reduce_perf rank 0 on h", Duration::from_secs(5), p.position_now());
            assert!(m.contains(&format!("at message size 8 ({}), step:", dt.mpi_name())), "{m}");
        }
    }

    #[test]
    fn progress_snapshot_moves() {
        let p = Progress::default();
        let a = p.position_now();
        p.enter(Step::Warmup, Some(Datatype::Int), 64);
        p.iteration(0);
        let b = p.position_now();
        assert_ne!(a, b);
        assert_eq!(b, Position { step: Step::Warmup as u8, datatype: 2, size: 64, iteration: 1 });
    }

    fn answered(rank: usize, host: &str, iteration: u64) -> (Endpoint, Result<Answer, String>) {
        let at = Position { step: Step::Timed as u8, datatype: 1, size: 65536, iteration };
        (Endpoint { rank, host: host.into(), port: 1, addrs: vec![] }, Ok(Answer { at, still_ms: 600_000 }))
    }

    #[test]
    fn a_hang_names_who_is_behind_and_who_did_not_answer() {
        // 512 ranks, 8 per host: ranks 16-17 on node02 one iteration behind.
        let mut answers: Vec<_> = (0..512)
            .map(|r| answered(r, &format!("node{:02}", r / 8), if r == 16 || r == 17 { 233 } else { 234 }))
            .collect();
        let (lines, table) = report("osu_allreduce", Duration::from_secs(600), &answers);
        assert_eq!(
            lines,
            [
                "osu_allreduce: no progress on any rank for 600s; ending the job (--timeout): ranks 16-17 on node02 are \
                 behind the rest",
                "osu_allreduce:   ranks 16-17 on node02: at message size 65536 (MPI_CHAR), step: timed iterations after \
                 iteration 233 (behind)",
                "osu_allreduce:   ranks 0-15,18-511 on node00, node01, node02 and 61 more hosts: at message size 65536 \
                 (MPI_CHAR), step: timed iterations after iteration 234",
            ]
        );
        assert_eq!(table["ranks"].as_array().unwrap().len(), 512);
        assert_eq!(table["ranks"][16]["behind"], true);
        assert_eq!(table["ranks"][15]["behind"], false);
        assert_eq!(table["ranks"][0]["datatype"], "MPI_CHAR");
        // A host whose ranks did not answer comes first.
        for a in &mut answers[40..48] {
            a.1 = Err("no answer within 2s".into());
        }
        let (lines, table) = report("osu_allreduce", Duration::from_secs(600), &answers);
        assert_eq!(
            lines[0],
            "osu_allreduce: no progress on any rank for 600s; ending the job (--timeout): ranks 40-47 on node05 did \
             not answer"
        );
        assert_eq!(lines[1], "osu_allreduce:   ranks 40-47 on node05: no answer (no answer within 2s)");
        assert_eq!(table["ranks"][40]["answered"], false);
        // Everyone at one place; and many places cut to a few lines.
        let same: Vec<_> = (0..4).map(|r| answered(r, "h", 9)).collect();
        let (lines, _) = report("osu_bw", Duration::from_secs(2), &same);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].ends_with("(--timeout): every rank waits at the same place"), "{lines:?}");
        let spread: Vec<_> = (0..20).map(|r| answered(r, "h", r as u64)).collect();
        let (lines, table) = report("osu_bw", Duration::from_secs(2), &spread);
        assert_eq!(lines.len(), 1 + MAX_GROUPS + 1);
        assert_eq!(
            lines.last().unwrap(),
            "osu_bw:   and 14 more groups of ranks: the run record's `hang` has every rank"
        );
        assert_eq!(table["summary"].as_array().unwrap().len(), lines.len());
    }
}
