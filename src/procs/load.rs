//! What competed with a rank for its CPUs during a run, as this host's
//! /proc and the kernel's counters say, and the rule that calls a run's
//! host busy. Each rank samples at its start ([`begin`]), between sizes
//! ([`note_size`], never inside a timed loop) and at its end ([`finish`]);
//! the run record keeps what each rank saw ([`RankLoad`]), and compare,
//! `history check` and the suite's summary say [`Busy::line`] where the
//! record says so. A sample reads three small files and calls getrusage:
//! tens of microseconds, outside anything timed.
//!
//! What a sample holds (every field absent where this host does not say:
//! not Linux, no /proc, odd content; never a made-up zero):
//! - `load1` and `runnable`: /proc/loadavg's 1-minute load average and
//!   its count of runnable tasks at that instant (the `R` of `R/T`);
//! - `online_cpus`: the host's online CPUs (sysconf), against which the
//!   load is read; the rank's own allowed CPUs are the record's
//!   `cpus`/`cpu_count`;
//! - `cpu_ticks` and `steal_ticks`: /proc/stat's all-CPU line, so that the
//!   share of the host's CPU time a hypervisor took (steal) is the
//!   difference between two samples;
//! - `involuntary_switches`: getrusage's `ru_nivcsw` for the process, the
//!   times the kernel took its CPU from it while it could still run;
//! - `migrations`: /proc/self/sched's `se.nr_migrations`, the times the
//!   kernel moved the rank's main thread to another CPU (absent on
//!   kernels without scheduler debug data: "unknown");
//! - `runq_wait_ns`: /proc/thread-self/schedstat's second field, the
//!   nanoseconds the sampling thread (the rank's main thread, which runs
//!   the timed loops) spent runnable on a run queue without a CPU.
//!
//! ## When a host was busy
//!
//! A run's host was busy when any of these held during the run
//! ([`RankLoad::busy`]):
//! - **load**: the highest 1-minute load seen (at the start, between sizes,
//!   at the end) was above the host's online CPUs. The load counts the
//!   tasks that ran or waited to; the ranks poll, so a host running only
//!   the job, one rank per CPU, stays at or below its CPU count, and more
//!   than that means some task waited for a CPU: another job, a build, or
//!   the run's own ranks oversubscribing the host. The average spans a
//!   minute, so a busy minute just before a short run counts too: it says
//!   the run was measured on a host in use, which is what a reader of a
//!   failing verdict needs to know.
//! - **steal**: more than [`STEAL_BUSY_PCT`] percent of the host's CPU time
//!   between the first and the last sample was stolen by a hypervisor for
//!   other guests: a virtual machine's CPUs that are not its own.
//! - **preemption**: a rank was switched out against its will more than
//!   [`PREEMPT_BUSY_PER_S`] times a second over the run (of at least
//!   [`MIN_RATE_SPAN_S`]). A rank alone on its CPU is switched out by
//!   kernel work only, a few times a second; one that shares its CPU with
//!   a task that also wants to run is switched out at every scheduler
//!   slice (a few milliseconds), hundreds of times a second.
//! - **waiting**: a rank's main thread waited for a CPU more than
//!   [`WAIT_BUSY_PCT`] percent of the run, and at least [`MIN_WAIT_S`] in
//!   all. This is the one rule a run shorter than a second is judged by
//!   as well as a long one: it is a share of time, not a rate of events,
//!   and it measures what a competitor costs the rank rather than how
//!   often the kernel looked. A rank polling alone on its CPU waits only
//!   while kernel work or the MPI library's own helper threads run, a
//!   fraction of a percent; one sharing its CPU with a task that also
//!   wants it waits for whole slices, tens of percent. The floor keeps a
//!   single slice taken from a run of a few milliseconds from calling it
//!   busy.
//!
//! The runnable count is kept (its highest value too) but decides nothing:
//! it is one instant, and the sampling rank is itself among it.

use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Steal above this share of the host's CPU time (percent) makes it busy.
pub const STEAL_BUSY_PCT: f64 = 5.0;

/// Involuntary switches a second above which a rank was preempted.
pub const PREEMPT_BUSY_PER_S: f64 = 100.0;

/// The shortest span (seconds) over which a switch rate is judged: over
/// less, a handful of switches is a large rate of nothing.
pub const MIN_RATE_SPAN_S: f64 = 1.0;

/// Percent of the run a rank's main thread waited for a CPU above which
/// its host was busy.
pub const WAIT_BUSY_PCT: f64 = 10.0;

/// The least waiting (seconds, summed over the run) that can make a host
/// busy: more than one scheduler slice.
pub const MIN_WAIT_S: f64 = 0.01;

/// Size samples a rank keeps at most (a long sweep keeps its first ones;
/// the highest load and runnable count still see every size).
const MAX_SIZE_SAMPLES: usize = 256;

/// One look at the host and the process.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds after the rank's first sample.
    pub at_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load1: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runnable: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online_cpus: Option<usize>,
    /// /proc/stat's all-CPU ticks (user to steal), cumulative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ticks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ticks: Option<u64>,
    /// The process's involuntary context switches, cumulative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub involuntary_switches: Option<u64>,
    /// The main thread's migrations between CPUs, cumulative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrations: Option<u64>,
    /// Nanoseconds the main thread waited on a run queue, cumulative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runq_wait_ns: Option<u64>,
}

/// What one rank saw between sizes: after the size's rows were out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeSample {
    pub size: usize,
    pub at_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load1: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runnable: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub involuntary_switches: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runq_wait_ns: Option<u64>,
}

/// What one rank saw over its run, as the run record keeps it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankLoad {
    pub before: Sample,
    /// Absent where the run did not get to its end on this rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Sample>,
    /// The highest 1-minute load and runnable count of any sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_load1: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_runnable: Option<u64>,
    /// One entry per size point, in the order measured (at most
    /// [`MAX_SIZE_SAMPLES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<SizeSample>,
}

/// Why a host was busy: what [`RankLoad::busy`] found on it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Busy {
    pub host: String,
    /// The highest load and the online CPUs, where the load was above them.
    pub load: Option<(f64, usize)>,
    /// Percent of the host's CPU time stolen, where above the threshold.
    pub steal_pct: Option<f64>,
    /// The rank preempted most and its rate a second, where above the
    /// threshold.
    pub preempted: Option<(usize, f64)>,
    /// The rank that waited most for a CPU and the percent of the run it
    /// waited, where above the threshold.
    pub waited: Option<(usize, f64)>,
}

impl Busy {
    /// How much the load exceeded the CPUs (or steal, or preemption
    /// weighed as alike), to name the busiest of several hosts.
    fn weight(&self) -> f64 {
        let load = self.load.map_or(0.0, |(l, c)| l / c.max(1) as f64);
        let steal = self.steal_pct.map_or(0.0, |s| 1.0 + s / 100.0);
        let preempt = self.preempted.map_or(0.0, |(_, r)| 1.0 + r / 1000.0);
        let wait = self.waited.map_or(0.0, |(_, w)| 1.0 + w / 100.0);
        load.max(steal).max(preempt).max(wait)
    }

    /// The line a reader of a verdict gets: `the host was busy: load 8.2
    /// on 2 cores during the run` (`the host n1 was busy: ...` with
    /// `name_host`, where the run had several hosts).
    pub fn line(&self, name_host: bool) -> String {
        let mut why = Vec::new();
        if let Some((load, cpus)) = self.load {
            why.push(format!("load {load:.1} on {cpus} core{}", if cpus == 1 { "" } else { "s" }));
        }
        if let Some(s) = self.steal_pct {
            why.push(format!("{s:.0}% of its CPU time stolen by the hypervisor"));
        }
        if let Some((rank, rate)) = self.preempted {
            why.push(format!("rank {rank} preempted {rate:.0} times a second"));
        }
        if let Some((rank, pct)) = self.waited {
            why.push(format!("rank {rank} waited for a CPU {pct:.0}% of the time"));
        }
        let host = if name_host { format!("the host {} was busy", self.host) } else { "the host was busy".into() };
        format!("{host}: {} during the run", why.join(", "))
    }
}

impl RankLoad {
    /// The highest 1-minute load of any sample.
    fn highest_load(&self) -> Option<f64> {
        let all = [self.before.load1, self.after.as_ref().and_then(|a| a.load1), self.max_load1];
        all.into_iter().flatten().filter(|l| l.is_finite()).reduce(f64::max)
    }

    /// The host's online CPUs, as the last sample that says gives them.
    fn online_cpus(&self) -> Option<usize> {
        self.after.as_ref().and_then(|a| a.online_cpus).or(self.before.online_cpus).filter(|&n| n > 0)
    }

    /// How much cumulative counter `c` grew between the first and last
    /// samples; None without both, or where it went backwards (another
    /// boot?).
    fn growth(&self, c: impl Fn(&Sample) -> Option<u64>) -> Option<u64> {
        c(self.after.as_ref()?)?.checked_sub(c(&self.before)?)
    }

    /// Seconds between the first and last samples.
    fn span_s(&self) -> Option<f64> {
        Some(self.after.as_ref()?.at_s - self.before.at_s)
    }

    /// Percent of the host's CPU time stolen between the first and last
    /// samples; None without both, or with no ticks between them.
    pub fn steal_pct(&self) -> Option<f64> {
        let total = self.growth(|s| s.cpu_ticks)?;
        let steal = self.growth(|s| s.steal_ticks)?;
        (total > 0).then(|| 100.0 * steal as f64 / total as f64)
    }

    /// Involuntary switches a second over the run, where it was long
    /// enough to judge ([`MIN_RATE_SPAN_S`]).
    pub fn preemptions_per_s(&self) -> Option<f64> {
        let (span, n) = (self.span_s()?, self.growth(|s| s.involuntary_switches)?);
        (span >= MIN_RATE_SPAN_S).then(|| n as f64 / span)
    }

    /// Percent of the run the main thread waited for a CPU, and the
    /// seconds it waited; None where the kernel does not say or the run
    /// took no time.
    pub fn wait(&self) -> Option<(f64, f64)> {
        let (span, waited) = (self.span_s()?, self.growth(|s| s.runq_wait_ns)? as f64 / 1e9);
        (span > 0.0).then(|| (100.0 * waited / span, waited))
    }

    /// Migrations over the run; None ("unknown") where the kernel does
    /// not say.
    pub fn migrations(&self) -> Option<u64> {
        self.growth(|s| s.migrations)
    }

    /// Whether this rank's host was busy by the rule of this module, and
    /// why; `rank` is the rank's number, `host` its host.
    pub fn busy(&self, rank: usize, host: &str) -> Option<Busy> {
        let load = self.highest_load().zip(self.online_cpus()).filter(|&(l, c)| l > c as f64);
        let steal_pct = self.steal_pct().filter(|&s| s > STEAL_BUSY_PCT);
        let preempted = self.preemptions_per_s().filter(|&r| r > PREEMPT_BUSY_PER_S).map(|r| (rank, r));
        let waited = self.wait().filter(|&(pct, s)| pct > WAIT_BUSY_PCT && s >= MIN_WAIT_S).map(|(pct, _)| (rank, pct));
        (load.is_some() || steal_pct.is_some() || preempted.is_some() || waited.is_some()).then(|| Busy {
            host: host.to_string(),
            load,
            steal_pct,
            preempted,
            waited,
        })
    }
}

/// The busiest host of a run whose ranks saw `ranks` (rank, host, what it
/// saw), each host's reasons merged over its ranks; None when no host was
/// busy (or no rank said).
pub fn busiest<'a>(ranks: impl IntoIterator<Item = (usize, &'a str, &'a RankLoad)>) -> Option<Busy> {
    let mut hosts: Vec<Busy> = Vec::new();
    for (rank, host, load) in ranks {
        let Some(b) = load.busy(rank, host) else { continue };
        match hosts.iter_mut().find(|h| h.host == host) {
            None => hosts.push(b),
            Some(h) => {
                h.load = max_by(h.load, b.load, |x| x.0);
                h.steal_pct = max_by(h.steal_pct, b.steal_pct, |x| *x);
                h.preempted = max_by(h.preempted, b.preempted, |x| x.1);
                h.waited = max_by(h.waited, b.waited, |x| x.1);
            }
        }
    }
    hosts.into_iter().reduce(|a, b| if b.weight() > a.weight() { b } else { a })
}

fn max_by<T: Copy>(a: Option<T>, b: Option<T>, key: impl Fn(&T) -> f64) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if key(&y) > key(&x) { y } else { x }),
        (x, y) => x.or(y),
    }
}

/// The busy line of a run record read as JSON (its `hosts` and each of its
/// `ranks`' `load`), naming the host where the run had several; None when
/// the record does not say the host was busy (a quiet run, or a record
/// from before loads were kept). Odd content is passed over.
pub fn busy_line_of_record(record: &serde_json::Value) -> Option<String> {
    let ranks = record.get("ranks")?.as_array()?;
    let loads: Vec<(usize, String, RankLoad)> = ranks
        .iter()
        .filter_map(|r| {
            let load = serde_json::from_value(r.get("load")?.clone()).ok()?;
            let rank = r.get("rank").and_then(serde_json::Value::as_u64).unwrap_or(0) as usize;
            let host = r.get("host").and_then(|h| h.as_str()).unwrap_or("").to_string();
            Some((rank, host, load))
        })
        .collect();
    let several = match record.get("hosts").and_then(|h| h.as_array()) {
        Some(h) => h.len() > 1,
        None => {
            let mut hosts: Vec<&str> = loads.iter().map(|l| l.1.as_str()).collect();
            hosts.sort_unstable();
            hosts.dedup();
            hosts.len() > 1
        }
    };
    busiest(loads.iter().map(|(r, h, l)| (*r, h.as_str(), l))).map(|b| b.line(several))
}

/// The highest 1-minute load any rank of a run record (JSON) saw, with
/// that rank's host's online CPUs where known; None where no rank says.
pub fn highest_load_of_record(record: &serde_json::Value) -> Option<(Option<f64>, Option<usize>)> {
    let ranks = record.get("ranks")?.as_array()?;
    let loads = ranks.iter().filter_map(|r| serde_json::from_value::<RankLoad>(r.get("load")?.clone()).ok());
    let best =
        loads
            .filter_map(|l| Some((l.highest_load()?, l.online_cpus())))
            .reduce(|a, b| if b.0 > a.0 { b } else { a })?;
    Some((Some(best.0), best.1))
}

/// The fields of /proc/loadavg: the 1-minute load and the runnable count.
pub fn parse_loadavg(text: &str) -> (Option<f64>, Option<u64>) {
    let mut words = text.split_whitespace();
    let load1 = words.next().and_then(|w| w.parse::<f64>().ok()).filter(|l| l.is_finite() && *l >= 0.0);
    let runnable = words.nth(2).and_then(|w| w.split_once('/')).and_then(|(r, _)| r.parse().ok());
    (load1, runnable)
}

/// /proc/stat's all-CPU line: (total ticks, steal ticks). The total is
/// user, nice, system, idle, iowait, irq, softirq and steal (the guest
/// fields are already in user and nice); a kernel too old to count steal
/// gives a total and no steal.
pub fn parse_stat(text: &str) -> (Option<u64>, Option<u64>) {
    let Some(line) = text.lines().find(|l| l.split_whitespace().next() == Some("cpu")) else { return (None, None) };
    let fields: Vec<u64> = line.split_whitespace().skip(1).map_while(|w| w.parse().ok()).take(8).collect();
    if fields.len() < 4 {
        return (None, None);
    }
    let total = fields.iter().try_fold(0u64, |a, &b| a.checked_add(b));
    (total, fields.get(7).copied())
}

/// /proc/<pid>/sched's `se.nr_migrations`.
pub fn parse_sched_migrations(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        (name.trim() == "se.nr_migrations").then(|| value.trim().parse().ok()).flatten()
    })
}

/// /proc/<pid>/schedstat's second field: nanoseconds spent runnable on
/// a run queue.
pub fn parse_schedstat_wait(text: &str) -> Option<u64> {
    let mut words = text.split_whitespace();
    words.next()?.parse::<u64>().ok()?;
    words.next()?.parse().ok()
}

/// The calling thread's run-queue wait so far.
fn runq_wait_ns() -> Option<u64> {
    read("/proc/thread-self/schedstat").and_then(|t| parse_schedstat_wait(&t))
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn involuntary_switches() -> Option<u64> {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes the struct it is given; RUSAGE_SELF is valid.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    // SAFETY: zeroed, and filled by a successful call.
    (rc == 0).then(|| unsafe { ru.assume_init() }.ru_nivcsw).and_then(|n| u64::try_from(n).ok())
}

fn online_cpus() -> Option<usize> {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).ok().filter(|&n| n > 0)
}

/// A sample now, `at_s` seconds after the rank's first.
pub fn sample(at_s: f64) -> Sample {
    let (load1, runnable) = read("/proc/loadavg").map(|t| parse_loadavg(&t)).unwrap_or_default();
    let (cpu_ticks, steal_ticks) = read("/proc/stat").map(|t| parse_stat(&t)).unwrap_or_default();
    Sample {
        at_s,
        load1,
        runnable,
        online_cpus: online_cpus(),
        cpu_ticks,
        steal_ticks,
        involuntary_switches: involuntary_switches(),
        migrations: read("/proc/self/sched").and_then(|t| parse_sched_migrations(&t)),
        runq_wait_ns: runq_wait_ns(),
    }
}

/// This process's run as sampled so far.
struct Trace {
    start: Instant,
    load: RankLoad,
}

impl Trace {
    fn note(&mut self, load1: Option<f64>, runnable: Option<u64>) {
        let l = &mut self.load;
        l.max_load1 = max_by(l.max_load1, load1.filter(|x| x.is_finite()), |x| *x);
        l.max_runnable = max_by(l.max_runnable, runnable, |x| *x as f64);
    }
}

static TRACE: Mutex<Option<Trace>> = Mutex::new(None);

/// The rank's first sample: taken now the first time, the same one after.
pub fn begin() -> Sample {
    let Ok(mut t) = TRACE.lock() else { return sample(0.0) };
    let trace = t.get_or_insert_with(|| {
        let before = sample(0.0);
        let mut trace = Trace { start: Instant::now(), load: RankLoad { before, ..RankLoad::default() } };
        let b = &trace.load.before;
        let (l, r) = (b.load1, b.runnable);
        trace.note(l, r);
        trace
    });
    trace.load.before.clone()
}

/// Forgets this process's run as sampled so far: the next [`begin`] starts
/// another (a shared launch's next benchmark).
pub fn restart() {
    if let Ok(mut t) = TRACE.lock() {
        *t = None;
    }
}

/// A sample after size `size` was measured, where [`begin`] was called
/// (nothing otherwise: a test of the measurement with stand-in ranks).
pub fn note_size(size: usize) {
    let Ok(mut t) = TRACE.lock() else { return };
    let Some(trace) = t.as_mut() else { return };
    let at_s = trace.start.elapsed().as_secs_f64();
    let (load1, runnable) = read("/proc/loadavg").map(|t| parse_loadavg(&t)).unwrap_or_default();
    trace.note(load1, runnable);
    if trace.load.sizes.len() < MAX_SIZE_SAMPLES {
        let involuntary_switches = involuntary_switches();
        let runq_wait_ns = runq_wait_ns();
        trace.load.sizes.push(SizeSample { size, at_s, load1, runnable, involuntary_switches, runq_wait_ns });
    }
}

/// The last sample, and everything this rank saw since [`begin`]; None
/// where it was never called.
pub fn finish() -> Option<RankLoad> {
    let Ok(mut t) = TRACE.lock() else { return None };
    let trace = t.as_mut()?;
    let after = sample(trace.start.elapsed().as_secs_f64());
    trace.note(after.load1, after.runnable);
    trace.load.after = Some(after);
    Some(trace.load.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loadavg_fields_and_odd_content() {
        assert_eq!(parse_loadavg("8.21 4.02 1.50 9/512 4242\n"), (Some(8.21), Some(9)));
        assert_eq!(parse_loadavg("0.00 0.01 0.05 1/87 1"), (Some(0.0), Some(1)));
        assert_eq!(parse_loadavg(""), (None, None));
        assert_eq!(parse_loadavg("x y z"), (None, None));
        assert_eq!(parse_loadavg("nan 1 2 3/4 5"), (None, Some(3)));
        assert_eq!(parse_loadavg("-1 1 2 a/4 5"), (None, None));
        assert_eq!(parse_loadavg("1.5 1 2"), (Some(1.5), None));
    }

    #[test]
    fn stat_totals_and_steal() {
        let text = "cpu  100 5 50 800 10 1 2 32 7 0\ncpu0 50 2 25 400 5 0 1 16 3 0\nintr 1\n";
        assert_eq!(parse_stat(text), (Some(1000), Some(32)));
        // A kernel without the steal field: a total, no steal.
        assert_eq!(parse_stat("cpu 1 2 3 4\n"), (Some(10), None));
        assert_eq!(parse_stat("cpu0 1 2 3 4\n"), (None, None));
        assert_eq!(parse_stat("cpu 1 x\n"), (None, None));
        assert_eq!(parse_stat(""), (None, None));
        let huge = format!("cpu {} {} 0 0\n", u64::MAX, u64::MAX);
        assert_eq!(parse_stat(&huge), (None, None));
    }

    #[test]
    fn sched_migrations() {
        let text = "osu_latency (4242, #threads: 3)\n---------\nse.exec_start : 1.5\n\
                    se.nr_migrations                             :                   17\nnr_switches : 9\n";
        assert_eq!(parse_sched_migrations(text), Some(17));
        assert_eq!(parse_sched_migrations("se.nr_migrations : many\n"), None);
        assert_eq!(parse_sched_migrations("nothing here"), None);
    }

    fn quiet() -> RankLoad {
        let before = Sample {
            at_s: 0.0,
            load1: Some(1.1),
            runnable: Some(2),
            online_cpus: Some(2),
            cpu_ticks: Some(10_000),
            steal_ticks: Some(0),
            involuntary_switches: Some(5),
            migrations: Some(1),
            runq_wait_ns: Some(1_000_000),
        };
        let after = Sample {
            at_s: 4.0,
            load1: Some(1.9),
            cpu_ticks: Some(10_800),
            steal_ticks: Some(8),
            involuntary_switches: Some(25),
            migrations: Some(1),
            runq_wait_ns: Some(21_000_000),
            ..before.clone()
        };
        RankLoad { before, after: Some(after), max_load1: Some(1.9), max_runnable: Some(3), sizes: Vec::new() }
    }

    #[test]
    fn a_quiet_run_is_not_busy() {
        let q = quiet();
        assert_eq!(q.busy(0, "n1"), None);
        assert_eq!(q.steal_pct(), Some(1.0));
        assert_eq!(q.preemptions_per_s(), Some(5.0));
        assert_eq!(q.migrations(), Some(0));
        let (pct, s) = q.wait().unwrap();
        assert!((pct - 0.5).abs() < 1e-9 && (s - 0.02).abs() < 1e-12, "{pct} {s}");
        // Exactly as many as the CPUs is not above them.
        let mut at = quiet();
        at.max_load1 = Some(2.0);
        assert_eq!(at.busy(0, "n1"), None);
    }

    #[test]
    fn load_above_the_cpus_is_busy_and_says_so() {
        let mut l = quiet();
        l.max_load1 = Some(8.2);
        let b = l.busy(1, "n1").unwrap();
        assert_eq!(b.load, Some((8.2, 2)));
        assert_eq!(b.line(false), "the host was busy: load 8.2 on 2 cores during the run");
        assert_eq!(b.line(true), "the host n1 was busy: load 8.2 on 2 cores during the run");
    }

    #[test]
    fn steal_and_preemption_wordings() {
        let mut l = quiet();
        l.after.as_mut().unwrap().steal_ticks = Some(120);
        l.after.as_mut().unwrap().involuntary_switches = Some(2005);
        let b = l.busy(1, "n1").unwrap();
        assert_eq!(
            b.line(false),
            "the host was busy: 15% of its CPU time stolen by the hypervisor, rank 1 preempted 500 times a second \
             during the run"
        );
        // Too short a run to judge a rate.
        l.after.as_mut().unwrap().at_s = 0.5;
        assert_eq!(l.preemptions_per_s(), None);
    }

    #[test]
    fn schedstat_wait() {
        assert_eq!(parse_schedstat_wait("51033506 4193952 163\n"), Some(4193952));
        assert_eq!(parse_schedstat_wait("51033506"), None);
        assert_eq!(parse_schedstat_wait("x 4193952 163"), None);
        assert_eq!(parse_schedstat_wait(""), None);
    }

    /// A short run is judged by its waiting: a share of its time, with a
    /// floor of more than one slice in all.
    #[test]
    fn waiting_for_a_cpu_makes_a_short_run_busy() {
        // 0.16 s, half of it waiting: too short for a switch rate, and
        // the load below the CPUs, as a rank sharing its CPU with a task
        // started just before it measured here.
        let mut l = quiet();
        let a = l.after.as_mut().unwrap();
        a.at_s = 0.16;
        a.runq_wait_ns = Some(1_000_000 + 80_000_000);
        assert_eq!(l.preemptions_per_s(), None);
        let b = l.busy(0, "n1").unwrap();
        assert_eq!((b.load, b.steal_pct, b.preempted), (None, None, None));
        assert_eq!(b.waited.map(|(r, p)| (r, p.round())), Some((0, 50.0)));
        assert_eq!(b.line(false), "the host was busy: rank 0 waited for a CPU 50% of the time during the run");
        // Below the threshold (9.4%).
        l.after.as_mut().unwrap().runq_wait_ns = Some(1_000_000 + 15_000_000);
        assert_eq!(l.busy(0, "n1"), None);
        // A run of 2 ms that waited 0.4 ms of it (one wakeup of a helper
        // thread) is a large share of little: under the floor.
        let a = l.after.as_mut().unwrap();
        a.at_s = 0.002;
        a.runq_wait_ns = Some(1_000_000 + 400_000);
        assert!(l.wait().unwrap().0 > WAIT_BUSY_PCT);
        assert_eq!(l.busy(0, "n1"), None);
        // Several ranks of one host: the one that waited most is named.
        let mut w1 = quiet();
        w1.after.as_mut().unwrap().runq_wait_ns = Some(1_000_000 + 800_000_000);
        let mut w2 = quiet();
        w2.after.as_mut().unwrap().runq_wait_ns = Some(1_000_000 + 2_000_000_000);
        let got = busiest([(0, "n1", &w1), (1, "n1", &w2), (2, "n1", &quiet())]).unwrap();
        assert_eq!(got.waited.map(|(r, p)| (r, p.round())), Some((1, 50.0)));
    }

    #[test]
    fn what_a_host_does_not_say_decides_nothing() {
        let l = RankLoad { before: Sample::default(), after: Some(Sample::default()), ..RankLoad::default() };
        assert_eq!(l.busy(0, "n1"), None);
        assert_eq!((l.steal_pct(), l.preemptions_per_s(), l.migrations(), l.wait()), (None, None, None, None));
        // Counters that went backwards (another boot?) are no difference.
        let mut back = quiet();
        back.after.as_mut().unwrap().cpu_ticks = Some(1);
        assert_eq!(back.steal_pct(), None);
        // A load with no CPU count is not judged.
        let mut no_cpus = quiet();
        no_cpus.max_load1 = Some(50.0);
        no_cpus.before.online_cpus = None;
        no_cpus.after.as_mut().unwrap().online_cpus = None;
        assert_eq!(no_cpus.busy(0, "n1"), None);
    }

    #[test]
    fn the_busiest_host_is_named() {
        let mut a = quiet();
        a.max_load1 = Some(3.0);
        let mut b = quiet();
        b.max_load1 = Some(8.2);
        let q = quiet();
        let got = busiest([(0, "a", &a), (1, "b", &b), (2, "c", &q)]).unwrap();
        assert_eq!(got.host, "b");
        assert_eq!(busiest([(0, "c", &q)]), None);
        let v = serde_json::json!({
            "hosts": ["a", "b"],
            "ranks": [
                {"rank": 0, "host": "a", "load": serde_json::to_value(&a).unwrap()},
                {"rank": 1, "host": "b", "load": serde_json::to_value(&b).unwrap()},
                {"rank": 2, "host": "b", "load": {"before": "odd"}},
                {"rank": 3, "host": "b"}
            ]
        });
        assert_eq!(busy_line_of_record(&v).as_deref(), Some("the host b was busy: load 8.2 on 2 cores during the run"));
        assert_eq!(busy_line_of_record(&serde_json::json!({"ranks": 3})), None);
    }

    #[test]
    fn a_record_keeps_what_the_host_did_not_say_absent() {
        let l = RankLoad { before: Sample { at_s: 0.0, load1: Some(0.5), ..Sample::default() }, ..RankLoad::default() };
        let text = serde_json::to_string(&l).unwrap();
        assert_eq!(text, r#"{"before":{"at_s":0.0,"load1":0.5}}"#);
        assert_eq!(serde_json::from_str::<RankLoad>(&text).unwrap(), l);
    }

    /// This host's own sample: whatever it says is plausible.
    #[test]
    fn this_host_samples() {
        let s = sample(0.0);
        if cfg!(target_os = "linux") {
            assert!(s.load1.is_some_and(|l| l >= 0.0));
            assert!(s.online_cpus.is_some_and(|n| n >= 1));
            assert!(s.involuntary_switches.is_some());
            assert!(s.runq_wait_ns.is_some());
        }
    }
}
