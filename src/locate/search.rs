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
//! fail (and so may run into the bound); see [`probe_bound`].

use serde::Serialize;

/// What one probe saw, with hosts as indices into the searched list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seen {
    /// The job ended by itself within its bound (its criteria may still
    /// have failed: then the slow fields say where).
    pub works: bool,
    /// Hosts every pair through which failed the criteria.
    pub slow_hosts: Vec<usize>,
    /// Host pairs whose pair failed the criteria, not blamed on a host.
    pub slow_links: Vec<(usize, usize)>,
    /// Every pair failed: nothing singled out.
    pub all_slow: bool,
}

impl Seen {
    pub fn works() -> Seen {
        Seen { works: true, ..Seen::default() }
    }
    pub fn fails() -> Seen {
        Seen::default()
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
        (Seen { works: true, slow_hosts: hosts, slow_links: links, all_slow: all }, dropped)
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
}

/// One thing found: its kind, the hosts it concerns and the probe (1-based)
/// that showed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    pub hosts: Vec<usize>,
    pub probe: usize,
}

/// What the search found, in the order found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Findings {
    pub found: Vec<Finding>,
    pub probes: usize,
    /// Slow verdicts of one probe that its repeat did not show (noise).
    pub unconfirmed: usize,
}

impl Findings {
    fn named(&self, kind: Kind) -> impl Iterator<Item = &Finding> + '_ {
        self.found.iter().filter(move |f| f.kind == kind)
    }
    /// Hosts found bad (kind `Host`).
    pub fn bad_hosts(&self) -> Vec<usize> {
        self.named(Kind::Host).map(|f| f.hosts[0]).collect()
    }
}

/// Probes at most taken for `n` hosts with one bad host or link, and a
/// slow one: the hang search, then the hosts left and their repeat.
pub fn probe_bound(n: usize) -> usize {
    let levels = n.max(1).next_power_of_two().trailing_zeros() as usize;
    2 * levels + 3
}

struct Search<'a, P: Prober> {
    prober: &'a mut P,
    f: Findings,
}

impl<P: Prober> Search<'_, P> {
    fn probe(&mut self, hosts: &[usize]) -> Seen {
        self.f.probes += 1;
        self.prober.probe(hosts)
    }

    fn note(&mut self, kind: Kind, hosts: Vec<usize>) {
        let probe = self.f.probes;
        self.f.found.push(Finding { kind, hosts, probe });
    }

    /// `s` fails: find the bad hosts inside it, or the links across its
    /// halves.
    fn isolate(&mut self, s: &[usize]) {
        if s.len() == 1 {
            self.note(Kind::Host, s.to_vec());
            return;
        }
        let (a, b) = s.split_at(s.len().div_ceil(2));
        let ra = self.probe(a).works;
        if !ra {
            self.isolate(a);
        }
        let rb = self.probe(b).works;
        if !rb {
            self.isolate(b);
        }
        if ra && rb {
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
            if !self.probe(&both).works {
                any = true;
                self.cross(x, other);
            }
        }
        if !any {
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
}

/// Searches hosts `0..n`.
pub fn locate<P: Prober>(n: usize, prober: &mut P) -> Findings {
    let mut s = Search { prober, f: Findings::default() };
    let mut left: Vec<usize> = (0..n).collect();
    if left.is_empty() {
        return s.f;
    }
    let mut seen = s.probe(&left);
    // Each pass names at least one host or link, or stops.
    for _ in 0..=n * n {
        if seen.works {
            if seen.is_slow() {
                // A slow verdict stands only when a second probe of the
                // same hosts repeats it: one noisy round is not a fault.
                let again = s.probe(&left);
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
        s.isolate(&left);
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
        seen = s.probe(&left);
    }
    s.f
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
        probes: Vec<Vec<usize>>,
    }

    impl Prober for System {
        fn probe(&mut self, hosts: &[usize]) -> Seen {
            assert!(hosts.windows(2).all(|w| w[0] < w[1]), "{hosts:?}");
            self.probes.push(hosts.to_vec());
            let has = |h: &usize| hosts.contains(h);
            if self.bad.iter().any(has) || self.links.iter().any(|(a, b)| has(a) && has(b)) {
                return Seen::fails();
            }
            let slow: Vec<usize> = self.slow.iter().copied().filter(has).collect();
            // As pairs' blame: a host is singled out only when some pair
            // without it passed.
            let others = hosts.len() - slow.len();
            if !slow.is_empty() && others < 2 {
                return Seen { works: true, all_slow: true, ..Seen::default() };
            }
            Seen { works: true, slow_hosts: slow, ..Seen::default() }
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
                    1 => Seen { works: true, slow_links: vec![(0, 1), (2, 3)], slow_hosts: vec![4], ..Seen::default() },
                    _ => Seen { works: true, slow_links: vec![(2, 3)], ..Seen::default() },
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
