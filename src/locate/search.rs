//! Where the fault lies, from as few probes as it takes: pure logic over
//! a [`Prober`], which runs one short job over a set of hosts and says
//! whether it worked (ended within its bound) and, when it did, which of
//! its hosts and links its criteria singled out as slow.
//!
//! The search:
//! 1. All hosts together. When that works, its slow hosts and links are
//!    the answer (one probe).
//! 2. Otherwise halve the failing set and probe each half; recurse into a
//!    half that fails; a single host that fails alone is a bad host.
//! 3. When both halves work but not together, the fault is between them:
//!    halve the larger side and probe each part with the other side,
//!    down to one host on each side, which is a bad link.
//! 4. The hosts not named, together once more: this checks what the
//!    halves never ran together and measures their speed as in 1 (a new
//!    failure goes back to 2).
//!
//! A slow verdict stands only when a second probe of the same hosts
//! repeats it (one noisy round is not a fault).
//!
//! With one bad host among n, that is at most 2 * ceil(log2 n) + 2
//! probes (one more to confirm a slow one), of which ceil(log2 n) + 1
//! fail (and so may run into the bound); see [`probe_bound`]. Whatever
//! fails, one search runs at most [`search_bound`] probes (or the limit
//! given), and stops at once on a signal or when a probe could not run.
//!
//! No host is blamed on evidence that could be the probe's own: a probe
//! that could not run (no place to write, pairs refusing its arguments,
//! nothing measured) stops the search as the probe's failure, and a host
//! that fails alone only because the launcher gave up before starting is
//! named only when some probe of the search got as far as its hosts (a
//! launcher refusing its own options fails every probe that way).

use serde::Serialize;

/// How a probe ended, as the search weighs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ran {
    /// Ended by itself within its bound with every direction measured
    /// (its criteria may still have failed: then the slow fields of
    /// [`Seen`] say where).
    Works,
    /// Ran on its hosts and failed, or ran into its bound: the fault is
    /// among them.
    #[default]
    Fails,
    /// The launcher gave up before the job started anywhere: the fault is
    /// among the hosts or in the launcher's own arguments. Only a probe
    /// that got further (a witness) tells which, so a host that fails
    /// alone this way is named only when some probe of the search ran.
    NotStarted,
    /// The probe itself could not run (no place to write, pairs refused
    /// its arguments, nothing measured): no host is to blame, and the
    /// search stops.
    Broken,
    /// A signal stopped it: the search stops.
    Interrupted,
}

/// What one probe saw, with hosts as indices into the searched list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seen {
    pub ran: Ran,
    /// Hosts every pair through which failed the criteria.
    pub slow_hosts: Vec<usize>,
    /// Host pairs whose pair failed the criteria, not blamed on a host.
    pub slow_links: Vec<(usize, usize)>,
    /// Every pair failed: nothing singled out.
    pub all_slow: bool,
}

impl Seen {
    pub(crate) fn works() -> Seen {
        Seen::ran(Ran::Works)
    }
    pub fn fails() -> Seen {
        Seen::ran(Ran::Fails)
    }
    pub fn ran(ran: Ran) -> Seen {
        Seen { ran, ..Seen::default() }
    }
    pub fn ok(&self) -> bool {
        self.ran == Ran::Works
    }

    fn is_slow(&self) -> bool {
        self.all_slow || !self.slow_hosts.is_empty() || !self.slow_links.is_empty()
    }

    /// What `again` (a second probe of the same hosts) repeats of this
    /// one's slow verdicts, and how many it did not.
    fn confirmed_by(&self, again: &Seen) -> (Seen, usize) {
        let hosts: Vec<usize> = self.slow_hosts.iter().copied().filter(|h| again.slow_hosts.contains(h)).collect();
        let links: Vec<(usize, usize)> =
            self.slow_links.iter().copied().filter(|l| again.slow_links.contains(l)).collect();
        let all = self.all_slow && again.all_slow;
        let dropped = (self.slow_hosts.len() - hosts.len())
            + (self.slow_links.len() - links.len())
            + usize::from(self.all_slow && !all);
        (Seen { ran: Ran::Works, slow_hosts: hosts, slow_links: links, all_slow: all }, dropped)
    }
}

/// Runs one probe over `hosts` (indices, ascending); each call is one
/// short job.
pub trait Prober {
    fn probe(&mut self, hosts: &[usize]) -> Seen;
}

/// Why a set is named.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Fails even alone (hangs, cannot start, or its job fails).
    Host,
    /// Each end works alone (and with others); the two together fail.
    Link,
    /// Ran, but every pair through it failed the criteria.
    SlowHost,
    /// Ran, but this pair failed the criteria.
    SlowLink,
    /// Every pair failed the criteria: nothing stands out.
    AllSlow,
    /// Fails together though every part tried works: the fault needs
    /// more of the set than the search takes apart.
    Unresolved,
    /// The probe itself failed (it could not run, or no probe of the
    /// search ever started): no host named. Its hosts are empty; its
    /// probe is the one whose words say why.
    ProbeFailed,
}

/// One thing found: its kind, the hosts it concerns and the probe (1-based)
/// that showed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    pub hosts: Vec<usize>,
    pub probe: usize,
}

/// Why a search ended before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// It had run as many probes as it may ([`search_bound`]).
    Bound,
    /// A signal stopped a probe.
    Interrupted,
}

/// What the search found, in the order found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Findings {
    pub found: Vec<Finding>,
    pub probes: usize,
    /// Slow verdicts of one probe that its repeat did not show (noise).
    pub unconfirmed: usize,
    /// Set when the search ended early: what it found is what it had
    /// found so far.
    pub stopped: Option<Stopped>,
}

impl Findings {
    fn named(&self, kind: Kind) -> impl Iterator<Item = &Finding> + '_ {
        self.found.iter().filter(move |f| f.kind == kind)
    }
    /// Hosts found bad (kind `Host`).
    pub(crate) fn bad_hosts(&self) -> Vec<usize> {
        self.named(Kind::Host).map(|f| f.hosts[0]).collect()
    }
    /// Whether the probe itself failed.
    pub fn probe_failed(&self) -> bool {
        self.named(Kind::ProbeFailed).next().is_some()
    }
}

/// Probes at most taken for `n` hosts with one bad host or link, and a
/// slow one: the hang search, then the hosts left and their repeat.
pub fn probe_bound(n: usize) -> usize {
    let levels = n.max(1).next_power_of_two().trailing_zeros() as usize;
    2 * levels + 3
}

/// The most probes one search runs on `n` hosts unless told otherwise:
/// twice [`probe_bound`] (4 * ceil(log2 n) + 6), room for a bad link or a
/// few bad hosts; when every host fails, the search stops there instead of
/// probing each one alone (2n - 1 probes).
pub fn search_bound(n: usize) -> usize {
    2 * probe_bound(n)
}

struct Search<'a, P: Prober> {
    prober: &'a mut P,
    f: Findings,
    /// The most probes to run.
    limit: usize,
    /// Set once the search must stop (bound, signal, a broken probe).
    halted: bool,
    /// A probe got as far as its hosts (it worked, or ran and failed).
    witness: bool,
    /// The first probe the launcher gave up on before it started.
    first_not_started: Option<usize>,
    /// Findings (indices into `f.found`) that rest on a probe that did not
    /// start: they stand only with a witness.
    unwitnessed: Vec<usize>,
}

impl<P: Prober> Search<'_, P> {
    /// One probe; None once the search is to stop (at its bound, on a
    /// signal, or when the probe itself failed).
    fn probe(&mut self, hosts: &[usize]) -> Option<Seen> {
        if self.halted {
            return None;
        }
        if self.f.probes >= self.limit {
            self.halted = true;
            self.f.stopped = Some(Stopped::Bound);
            return None;
        }
        self.f.probes += 1;
        let seen = self.prober.probe(hosts);
        match seen.ran {
            Ran::Works | Ran::Fails => self.witness = true,
            Ran::NotStarted => {
                self.first_not_started.get_or_insert(self.f.probes);
            }
            Ran::Broken => {
                self.note(Kind::ProbeFailed, Vec::new());
                self.halted = true;
                return None;
            }
            Ran::Interrupted => {
                self.halted = true;
                self.f.stopped = Some(Stopped::Interrupted);
                return None;
            }
        }
        Some(seen)
    }

    fn note(&mut self, kind: Kind, hosts: Vec<usize>) {
        let probe = self.f.probes;
        self.f.found.push(Finding { kind, hosts, probe });
    }

    /// `s` fails (as `ran` says): find the bad hosts inside it, or the
    /// links across its halves.
    fn isolate(&mut self, s: &[usize], ran: Ran) {
        if s.len() == 1 {
            if ran == Ran::NotStarted {
                self.unwitnessed.push(self.f.found.len());
            }
            self.note(Kind::Host, s.to_vec());
            return;
        }
        let (a, b) = s.split_at(s.len().div_ceil(2));
        let Some(sa) = self.probe(a) else { return };
        if !sa.ok() {
            self.isolate(a, sa.ran);
        }
        let Some(sb) = self.probe(b) else { return };
        if !sb.ok() {
            self.isolate(b, sb.ran);
        }
        if sa.ok() && sb.ok() {
            self.cross(a, b);
        }
    }

    /// `a` and `b` each work; together they fail.
    fn cross(&mut self, a: &[usize], b: &[usize]) {
        if a.len() == 1 && b.len() == 1 {
            self.note(Kind::Link, vec![a[0].min(b[0]), a[0].max(b[0])]);
            return;
        }
        let (big, other) = if a.len() >= b.len() { (a, b) } else { (b, a) };
        let (x1, x2) = big.split_at(big.len().div_ceil(2));
        let mut any = false;
        for x in [x1, x2] {
            let mut both: Vec<usize> = x.iter().chain(other).copied().collect();
            both.sort_unstable();
            let Some(seen) = self.probe(&both) else { return };
            if !seen.ok() {
                any = true;
                self.cross(x, other);
            }
        }
        if !any && !self.halted {
            let mut all: Vec<usize> = a.iter().chain(b).copied().collect();
            all.sort_unstable();
            self.note(Kind::Unresolved, all);
        }
    }

    fn slow(&mut self, seen: &Seen) {
        for &h in &seen.slow_hosts {
            self.note(Kind::SlowHost, vec![h]);
        }
        for &(x, y) in &seen.slow_links {
            self.note(Kind::SlowLink, vec![x.min(y), x.max(y)]);
        }
    }

    /// The findings, once no more probes run: without a witness, a host
    /// that failed alone only because the launcher gave up is no finding,
    /// and (unless a signal cut the search short) the probe itself is
    /// what failed.
    fn finish(mut self) -> Findings {
        if !self.witness && !self.unwitnessed.is_empty() {
            let drop = std::mem::take(&mut self.unwitnessed);
            let mut at = 0;
            self.f.found.retain(|_| {
                at += 1;
                !drop.contains(&(at - 1))
            });
        }
        let interrupted = self.f.stopped == Some(Stopped::Interrupted);
        if let (false, false, Some(p)) = (self.witness, interrupted, self.first_not_started) {
            if !self.f.probe_failed() {
                self.f.found.push(Finding { kind: Kind::ProbeFailed, hosts: Vec::new(), probe: p });
            }
        }
        self.f
    }
}

/// Searches hosts `0..n` with at most [`search_bound`] probes.
pub fn locate<P: Prober>(n: usize, prober: &mut P) -> Findings {
    locate_within(n, search_bound(n), prober)
}

/// Searches hosts `0..n` with at most `limit` probes.
pub(crate) fn locate_within<P: Prober>(n: usize, limit: usize, prober: &mut P) -> Findings {
    let mut s = Search {
        prober,
        f: Findings::default(),
        limit,
        halted: false,
        witness: false,
        first_not_started: None,
        unwitnessed: Vec::new(),
    };
    let mut left: Vec<usize> = (0..n).collect();
    if left.is_empty() {
        return s.f;
    }
    let Some(mut seen) = s.probe(&left) else { return s.finish() };
    // Each pass names at least one host or link, or stops.
    for _ in 0..=n * n {
        if seen.ok() {
            if seen.is_slow() {
                // A slow verdict stands only when a second probe of the
                // same hosts repeats it: one noisy round is not a fault.
                let Some(again) = s.probe(&left) else { break };
                if !again.ok() {
                    // The repeat failed outright: that failure is the
                    // finding now.
                    seen = again;
                    continue;
                }
                let (kept, dropped) = seen.confirmed_by(&again);
                s.f.unconfirmed += dropped;
                seen = kept;
            }
            if seen.all_slow {
                s.note(Kind::AllSlow, left.clone());
            }
            s.slow(&seen);
            break;
        }
        let before = s.f.found.len();
        s.isolate(&left, seen.ran);
        if s.halted {
            break;
        }
        let found = &s.f.found[before..];
        if found.is_empty() {
            s.note(Kind::Unresolved, left.clone());
            break;
        }
        // A link found leaves both ends in the set, which would fail
        // again: the set is not run together once more.
        if found.iter().any(|f| matches!(f.kind, Kind::Link | Kind::Unresolved)) {
            break;
        }
        let bad = s.f.bad_hosts();
        left.retain(|h| !bad.contains(h));
        if left.len() < 2 {
            break;
        }
        let Some(next) = s.probe(&left) else { break };
        seen = next;
    }
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A described system: hosts that fail alone, links that fail, slow
    /// hosts; records every probe.
    #[derive(Default)]
    struct System {
        bad: Vec<usize>,
        links: Vec<(usize, usize)>,
        slow: Vec<usize>,
        /// How a probe with a bad host or link ends: [`Ran::Fails`]
        /// unless set.
        bad_ends: Option<Ran>,
        probes: Vec<Vec<usize>>,
    }

    impl Prober for System {
        fn probe(&mut self, hosts: &[usize]) -> Seen {
            assert!(hosts.windows(2).all(|w| w[0] < w[1]), "{hosts:?}");
            self.probes.push(hosts.to_vec());
            let has = |h: &usize| hosts.contains(h);
            if self.bad.iter().any(has) || self.links.iter().any(|(a, b)| has(a) && has(b)) {
                return Seen::ran(self.bad_ends.unwrap_or(Ran::Fails));
            }
            let slow: Vec<usize> = self.slow.iter().copied().filter(has).collect();
            // As pairs' blame: a host is singled out only when some pair
            // without it passed.
            let others = hosts.len() - slow.len();
            if !slow.is_empty() && others < 2 {
                return Seen { ran: Ran::Works, all_slow: true, ..Seen::default() };
            }
            Seen { ran: Ran::Works, slow_hosts: slow, ..Seen::default() }
        }
    }

    /// Host 0 fails every probe it is in, until probe `from` on, which
    /// ends as `ends` (a probe that broke, or a signal).
    struct HostZeroUntil {
        calls: usize,
        from: usize,
        ends: Ran,
    }

    impl Prober for HostZeroUntil {
        fn probe(&mut self, hosts: &[usize]) -> Seen {
            self.calls += 1;
            match (self.calls >= self.from, hosts.contains(&0)) {
                (true, _) => Seen::ran(self.ends),
                (false, true) => Seen::fails(),
                (false, false) => Seen::works(),
            }
        }
    }

    fn kinds(f: &Findings) -> Vec<(Kind, Vec<usize>)> {
        f.found.iter().map(|x| (x.kind.clone(), x.hosts.clone())).collect()
    }

    #[test]
    fn a_healthy_set_takes_one_probe() {
        let mut s = System::default();
        let f = locate(16, &mut s);
        assert_eq!((f.probes, f.found.len()), (1, 0));
    }

    #[test]
    fn one_bad_host_is_named_alone_within_the_bound() {
        for n in [1, 2, 3, 4, 5, 7, 8, 13, 16, 64, 100] {
            for bad in 0..n {
                let mut s = System { bad: vec![bad], ..System::default() };
                let f = locate(n, &mut s);
                assert_eq!(kinds(&f), [(Kind::Host, vec![bad])], "n {n} bad {bad}");
                assert!(f.probes <= probe_bound(n), "n {n} bad {bad}: {} > {}", f.probes, probe_bound(n));
                assert_eq!(f.probes, s.probes.len());
                // The hosts left were run together at the end.
                if n > 2 {
                    let left: Vec<usize> = (0..n).filter(|&h| h != bad).collect();
                    assert_eq!(s.probes.last(), Some(&left), "n {n} bad {bad}");
                }
            }
        }
        assert_eq!((probe_bound(4), probe_bound(8), probe_bound(5), probe_bound(1)), (7, 9, 9, 3));
    }

    #[test]
    fn two_bad_hosts_are_both_named() {
        let mut s = System { bad: vec![2, 9], ..System::default() };
        let f = locate(12, &mut s);
        assert_eq!(kinds(&f), [(Kind::Host, vec![2]), (Kind::Host, vec![9])]);
        let mut s = System { bad: vec![4, 5], ..System::default() };
        let f = locate(8, &mut s);
        assert_eq!(f.bad_hosts(), [4, 5]);
    }

    #[test]
    fn a_bad_link_is_named_by_its_two_ends() {
        for n in [2, 3, 4, 8, 11] {
            for a in 0..n {
                for b in a + 1..n {
                    let mut s = System { links: vec![(a, b)], ..System::default() };
                    let f = locate(n, &mut s);
                    assert_eq!(kinds(&f), [(Kind::Link, vec![a, b])], "n {n} link {a}-{b}");
                    assert!(f.probes <= 2 * probe_bound(n), "n {n}: {}", f.probes);
                }
            }
        }
    }

    #[test]
    fn a_slow_host_comes_from_the_first_probe_and_its_repeat() {
        let mut s = System { slow: vec![3], ..System::default() };
        let f = locate(4, &mut s);
        assert_eq!((kinds(&f), f.probes), (vec![(Kind::SlowHost, vec![3])], 2));
        assert_eq!(s.probes, [vec![0, 1, 2, 3], vec![0, 1, 2, 3]]);
        // Two hosts: nothing to tell a slow host from a slow link.
        let mut s = System { slow: vec![1], ..System::default() };
        assert_eq!(kinds(&locate(2, &mut s)), [(Kind::AllSlow, vec![0, 1])]);
    }

    /// A slow pair seen once and not again is noise: not named, counted.
    #[test]
    fn a_slow_verdict_not_repeated_is_dropped() {
        struct Noisy(usize);
        impl Prober for Noisy {
            fn probe(&mut self, _: &[usize]) -> Seen {
                self.0 += 1;
                match self.0 {
                    1 => Seen {
                        ran: Ran::Works,
                        slow_links: vec![(0, 1), (2, 3)],
                        slow_hosts: vec![4],
                        ..Seen::default()
                    },
                    _ => Seen { ran: Ran::Works, slow_links: vec![(2, 3)], ..Seen::default() },
                }
            }
        }
        let f = locate(5, &mut Noisy(0));
        assert_eq!(kinds(&f), [(Kind::SlowLink, vec![2, 3])]);
        assert_eq!((f.probes, f.unconfirmed, f.found[0].probe), (2, 2, 2));
    }

    #[test]
    fn a_slow_host_behind_a_bad_one_is_measured_at_the_end() {
        let mut s = System { bad: vec![0], slow: vec![5], ..System::default() };
        let f = locate(8, &mut s);
        assert_eq!(kinds(&f), [(Kind::Host, vec![0]), (Kind::SlowHost, vec![5])]);
        assert_eq!(f.found[1].probe, f.probes);
    }

    /// Every host failing: the search stops at its bound (twice what one
    /// bad host or link takes) instead of probing every host alone.
    #[test]
    fn every_host_failing_stops_at_the_search_bound() {
        for n in [2, 3, 8, 100] {
            let mut s = System { bad: (0..n).collect(), ..System::default() };
            let f = locate(n, &mut s);
            assert!(f.probes <= 2 * probe_bound(n), "n {n}: {} probes", f.probes);
            assert_eq!(f.probes, s.probes.len());
        }
    }

    /// A launcher that refuses its own options fails every probe before
    /// anything starts: no probe ever got as far as the hosts, so no host
    /// is named; the probe itself failed, as the first probe said, within
    /// the search's bound.
    #[test]
    fn every_probe_failing_to_start_blames_no_host() {
        for n in [1, 2, 3, 8, 100] {
            let mut s = System { bad: (0..n).collect(), bad_ends: Some(Ran::NotStarted), ..System::default() };
            let f = locate(n, &mut s);
            assert_eq!(kinds(&f), [(Kind::ProbeFailed, vec![])], "n {n}");
            assert_eq!(f.found[0].probe, 1, "n {n}");
            assert!(f.probes <= search_bound(n), "n {n}: {}", f.probes);
            assert_eq!(f.stopped, (f.probes == search_bound(n)).then_some(Stopped::Bound), "n {n}");
        }
        assert_eq!((search_bound(2), search_bound(100)), (10, 34));
    }

    /// A host the launcher cannot start on (its failure is the launcher
    /// giving up) is named once another probe shows the launcher works.
    #[test]
    fn a_host_that_cannot_start_is_named_once_a_probe_ran() {
        for n in [2, 3, 8, 13] {
            for bad in 0..n {
                let mut s = System { bad: vec![bad], bad_ends: Some(Ran::NotStarted), ..System::default() };
                let f = locate(n, &mut s);
                assert_eq!(kinds(&f), [(Kind::Host, vec![bad])], "n {n} bad {bad}");
                assert!(f.probes <= probe_bound(n), "n {n} bad {bad}");
            }
        }
        // One host: nothing can tell it from the probe.
        let mut s = System { bad: vec![0], bad_ends: Some(Ran::NotStarted), ..System::default() };
        assert_eq!(kinds(&locate(1, &mut s)), [(Kind::ProbeFailed, vec![])]);
    }

    /// A probe that could not run stops the search: one finding, no host,
    /// no further probe.
    #[test]
    fn a_probe_that_could_not_run_stops_the_search() {
        let mut s = System { bad: (0..8).collect(), bad_ends: Some(Ran::Broken), ..System::default() };
        let f = locate(8, &mut s);
        assert_eq!((kinds(&f), f.probes, s.probes.len()), (vec![(Kind::ProbeFailed, vec![])], 1, 1));
        assert_eq!(f.stopped, None);
        // Mid-search (after a host was named on a run's evidence).
        let f = locate(4, &mut HostZeroUntil { calls: 0, from: 4, ends: Ran::Broken });
        assert_eq!(kinds(&f), [(Kind::Host, vec![0]), (Kind::ProbeFailed, vec![])]);
        assert_eq!((f.probes, f.found[1].probe), (4, 4));
    }

    /// A signal stops the search at once, with what it found so far, and
    /// makes no finding of the probe it stopped.
    #[test]
    fn a_signal_stops_the_search_with_what_was_found() {
        // 8 hosts: all, 0-3, 0-1, 0 alone (host 0 named), then stopped.
        let mut p = HostZeroUntil { calls: 0, from: 5, ends: Ran::Interrupted };
        let f = locate(8, &mut p);
        assert_eq!(kinds(&f), [(Kind::Host, vec![0])]);
        assert_eq!((f.probes, p.calls, f.stopped), (5, 5, Some(Stopped::Interrupted)));
        // Stopped before any probe ran on a host: nothing, not even the
        // probe's failure, is concluded.
        let mut s = System { bad: vec![0, 1], bad_ends: Some(Ran::Interrupted), ..System::default() };
        let f = locate(4, &mut s);
        assert_eq!((f.found.len(), f.probes, f.stopped), (0, 1, Some(Stopped::Interrupted)));
    }

    /// The limit given is kept, and says the search stopped there.
    #[test]
    fn the_search_keeps_the_limit_given() {
        let mut s = System { bad: (0..16).collect(), ..System::default() };
        let f = locate_within(16, 3, &mut s);
        assert_eq!((f.probes, s.probes.len(), f.stopped), (3, 3, Some(Stopped::Bound)));
        assert!(f.found.is_empty(), "{f:?}");
        let mut s = System { bad: vec![2], ..System::default() };
        let f = locate_within(4, 100, &mut s);
        assert_eq!((kinds(&f), f.stopped), (vec![(Kind::Host, vec![2])], None));
    }

    /// A repeat that fails outright (after a slow first probe) is a failed
    /// set like any other: searched, never passed.
    #[test]
    fn a_failing_repeat_is_searched() {
        struct Then(usize);
        impl Prober for Then {
            fn probe(&mut self, hosts: &[usize]) -> Seen {
                self.0 += 1;
                match (self.0, hosts.contains(&3)) {
                    (1, _) => Seen { ran: Ran::Works, slow_hosts: vec![3], ..Seen::default() },
                    (_, true) => Seen::fails(),
                    _ => Seen::works(),
                }
            }
        }
        let f = locate(4, &mut Then(0));
        assert_eq!(kinds(&f), [(Kind::Host, vec![3])]);
    }

    /// A set that fails only whole (a collective that needs every host):
    /// the search says so instead of naming an innocent host.
    #[test]
    fn a_fault_of_the_whole_set_is_unresolved() {
        struct Whole;
        impl Prober for Whole {
            fn probe(&mut self, hosts: &[usize]) -> Seen {
                if hosts.len() == 6 {
                    Seen::fails()
                } else {
                    Seen::works()
                }
            }
        }
        let f = locate(6, &mut Whole);
        assert_eq!(kinds(&f), [(Kind::Unresolved, vec![0, 1, 2, 3, 4, 5])]);
        assert!(f.probes <= 5, "{}", f.probes);
    }
}
