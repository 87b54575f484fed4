//! Pairing schemes and the rounds they expand to. A round says, for every
//! rank, whom it sends to and whom it receives from; in a pairing round the
//! two are the same partner. Pure functions of (scheme, rank count), so the
//! rules (a matching per round, every pair exactly once) are unit-tested
//! for every rank count up to 1024 without MPI.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// How ranks are paired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// One round: rank r with r ^ K.
    Xor(usize),
    /// One round: rank r with r ^ n/2 (power of two n) or r + n/2.
    Half,
    /// Every unordered pair once, in rounds of disjoint pairs.
    All,
    /// Ring shifts: rank r sends to r + k and receives from r - k (mod n),
    /// for every k in 1..n, or for one given k.
    Shift(Option<usize>),
    /// Random perfect matchings from a seed.
    Random,
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scheme::Xor(k) => write!(f, "xor:{k}"),
            Scheme::Half => f.write_str("half"),
            Scheme::All => f.write_str("all"),
            Scheme::Shift(None) => f.write_str("shift"),
            Scheme::Shift(Some(k)) => write!(f, "shift:{k}"),
            Scheme::Random => f.write_str("random"),
        }
    }
}

/// A `--scheme` word that names no scheme.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SchemeError {
    #[error("'{0}' is not a scheme (use xor:K, half, all, shift, shift:K or random)")]
    Unknown(String),
    #[error("'{0}' needs its distance: xor:K pairs rank r with rank r ^ K")]
    XorWithoutDistance(String),
}

impl FromStr for Scheme {
    type Err = SchemeError;

    fn from_str(s: &str) -> Result<Scheme, SchemeError> {
        let bad = || SchemeError::Unknown(s.to_string());
        let number = |v: &str| v.parse::<usize>().map_err(|_| bad());
        match s.split_once(':') {
            Some(("xor", k)) => Ok(Scheme::Xor(number(k)?)),
            Some(("shift", k)) => Ok(Scheme::Shift(Some(number(k)?))),
            Some(_) => Err(bad()),
            None => match s {
                "half" => Ok(Scheme::Half),
                "all" => Ok(Scheme::All),
                "shift" => Ok(Scheme::Shift(None)),
                "random" => Ok(Scheme::Random),
                "xor" => Err(SchemeError::XorWithoutDistance(s.to_string())),
                _ => Err(bad()),
            },
        }
    }
}

/// Parameters of `random`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RandomRounds {
    pub rounds: usize,
    pub seed: u64,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ScheduleError {
    #[error("commbench pairs needs at least 2 processes, got {0}")]
    TooFewRanks(usize),
    #[error("xor:0 would pair every rank with itself; give K from 1 to np-1")]
    XorZero,
    #[error("xor:{k} needs K below the number of processes ({n})")]
    XorTooLarge { k: usize, n: usize },
    #[error(
        "xor:{k} pairs rank {rank} with rank {partner}, which does not exist with {n} processes \
         (use a multiple of {block} processes)"
    )]
    XorOutside { k: usize, n: usize, rank: usize, partner: usize, block: usize },
    #[error("shift:{k} needs K from 1 to np-1 ({n} processes)")]
    ShiftRange { k: usize, n: usize },
    #[error("random needs at least 1 round")]
    NoRounds,
    #[error(
        "random: --rounds {rounds} with {n} processes would draw {} partners on every rank before the first \
         round, more than {MAX_DRAWN} (lower --rounds; --scheme all measures every pair once)",
        *rounds as u128 * *n as u128
    )]
    TooManyDraws { rounds: usize, n: usize },
}

/// The most partners `random` draws (rounds times ranks): the matchings
/// are drawn on every rank before the first round, 16 bytes each, so this
/// is 64 MiB per rank and a fraction of a second of drawing (2 million
/// rounds of 2 ranks, 4096 of 1024). Beyond it a run would sit silent for
/// minutes, or run out of memory, before it measured anything.
pub(crate) const MAX_DRAWN: u128 = 1 << 22;

/// What one rank does in a round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    pub to: Option<usize>,
    pub from: Option<usize>,
}

impl Flow {
    pub fn idle(&self) -> bool {
        self.to.is_none() && self.from.is_none()
    }

    /// The partner when this rank sends to and receives from one rank.
    pub fn partner(&self) -> Option<usize> {
        match (self.to, self.from) {
            (Some(a), Some(b)) if a == b => Some(a),
            _ => None,
        }
    }
}

/// One round: a flow per rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    pub flows: Vec<Flow>,
}

impl Round {
    /// Whether every busy rank sends to and receives from the same partner.
    pub fn is_pairing(&self) -> bool {
        self.flows.iter().all(|f| f.idle() || f.partner().is_some())
    }

    /// The (lower, higher) pairs of a pairing round.
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        self.flows.iter().enumerate().filter_map(|(r, f)| f.partner().filter(|&p| r < p).map(|p| (r, p))).collect()
    }

    /// Every (sender, receiver) of the round.
    pub fn edges(&self) -> Vec<(usize, usize)> {
        self.flows.iter().enumerate().filter_map(|(r, f)| f.to.map(|t| (r, t))).collect()
    }
}

/// The rounds of a scheme for `n` ranks. Any rank's flow in any round is
/// computed on demand in constant time (random keeps its drawn matchings),
/// so a rank of a 1024-rank job holds no 1023 x 1024 table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Schedule {
    scheme: Scheme,
    n: usize,
    len: usize,
    /// Partner of each rank in each random round.
    drawn: Vec<Vec<Option<usize>>>,
}

impl Schedule {
    /// Checks the scheme against the rank count.
    pub fn new(scheme: Scheme, n: usize, random: RandomRounds) -> Result<Schedule, ScheduleError> {
        if n < 2 {
            return Err(ScheduleError::TooFewRanks(n));
        }
        let mut drawn = Vec::new();
        let len = match scheme {
            Scheme::Xor(k) => {
                check_xor(n, k)?;
                1
            }
            Scheme::Half => 1,
            Scheme::All if n.is_power_of_two() => n - 1,
            // The circle method needs an even count: odd adds a phantom.
            Scheme::All => n + n % 2 - 1,
            Scheme::Shift(None) => n - 1,
            Scheme::Shift(Some(k)) if k == 0 || k >= n => return Err(ScheduleError::ShiftRange { k, n }),
            Scheme::Shift(Some(_)) => 1,
            Scheme::Random if random.rounds == 0 => return Err(ScheduleError::NoRounds),
            Scheme::Random if random.rounds as u128 * n as u128 > MAX_DRAWN => {
                return Err(ScheduleError::TooManyDraws { rounds: random.rounds, n })
            }
            Scheme::Random => {
                drawn = draw_matchings(n, random);
                random.rounds
            }
        };
        Ok(Schedule { scheme, n, len, drawn })
    }

    /// Number of rounds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The partner of `rank` in round `i` of a pairing scheme (None: idle,
    /// or a shift scheme).
    pub fn partner(&self, i: usize, rank: usize) -> Option<usize> {
        let n = self.n;
        let p = match self.scheme {
            Scheme::Xor(k) => rank ^ k,
            Scheme::Half if n.is_power_of_two() => rank ^ (n / 2),
            Scheme::Half if rank < n / 2 => rank + n / 2,
            Scheme::Half if rank < 2 * (n / 2) => rank - n / 2,
            Scheme::Half => return None,
            Scheme::All if n.is_power_of_two() => rank ^ (i + 1),
            Scheme::All => tournament_partner(n + n % 2, i, rank),
            Scheme::Shift(_) => return None,
            Scheme::Random => return self.drawn.get(i).and_then(|d| d.get(rank).copied().flatten()),
        };
        (p < n).then_some(p)
    }

    /// What `rank` does in round `i`.
    pub(crate) fn flow(&self, i: usize, rank: usize) -> Flow {
        let n = self.n;
        match self.scheme {
            Scheme::Shift(k) => {
                let k = k.unwrap_or(i + 1);
                Flow { to: Some((rank + k) % n), from: Some((rank + n - k % n) % n) }
            }
            _ => {
                let p = self.partner(i, rank);
                Flow { to: p, from: p }
            }
        }
    }

    /// Round `i` for every rank.
    pub fn round(&self, i: usize) -> Round {
        Round { flows: (0..self.n).map(|r| self.flow(i, r)).collect() }
    }

    /// Whether every round pairs ranks (a shift by n/2 does too).
    pub(crate) fn is_pairing(&self) -> bool {
        match self.scheme {
            Scheme::Shift(Some(k)) => 2 * k == self.n,
            Scheme::Shift(None) => self.n == 2,
            _ => true,
        }
    }

    /// Ranks that take part in no round (half with an odd count).
    pub(crate) fn never_busy(&self) -> Vec<usize> {
        (0..self.n).filter(|&r| (0..self.len).all(|i| self.flow(i, r).idle())).collect()
    }

    /// Directions measured over all rounds.
    pub fn directions(&self) -> usize {
        (0..self.len).map(|i| (0..self.n).filter(|&r| self.flow(i, r).to.is_some()).count()).sum()
    }
}

/// Expands a scheme for `n` ranks into all its rounds.
pub fn rounds(scheme: Scheme, n: usize, random: RandomRounds) -> Result<Vec<Round>, ScheduleError> {
    let s = Schedule::new(scheme, n, random)?;
    Ok((0..s.len()).map(|i| s.round(i)).collect())
}

fn check_xor(n: usize, k: usize) -> Result<(), ScheduleError> {
    if k == 0 {
        return Err(ScheduleError::XorZero);
    }
    if k >= n {
        return Err(ScheduleError::XorTooLarge { k, n });
    }
    if let Some(rank) = (0..n).find(|&r| r ^ k >= n) {
        // XOR with K permutes blocks of twice K's highest bit.
        let block = 2 << (usize::BITS - 1 - k.leading_zeros());
        return Err(ScheduleError::XorOutside { k, n, rank, partner: rank ^ k, block });
    }
    Ok(())
}

/// Round-robin tournament (circle method) for an even count m: player
/// m-1 stays put and meets player t in round t; the others sit on a ring
/// of m-1 and pair off symmetrically around t, so x meets 2t - x. With an
/// odd rank count, m-1 is a phantom and its opponent sits the round out.
fn tournament_partner(m: usize, t: usize, x: usize) -> usize {
    let ring = m - 1;
    if x == ring {
        t
    } else if x == t {
        ring
    } else {
        (2 * t + ring - x) % ring
    }
}

/// SplitMix64: a small, well-mixed generator, enough for shuffling ranks
/// reproducibly from a seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..bound (bound > 0), by rejection.
    fn below(&mut self, bound: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % bound;
        loop {
            let v = self.next();
            if v < zone {
                return v % bound;
            }
        }
    }
}

/// Each round shuffles the ranks and pairs neighbours in the shuffled
/// order; with an odd count the last one sits out. Returns each rank's
/// partner per round.
fn draw_matchings(n: usize, p: RandomRounds) -> Vec<Vec<Option<usize>>> {
    let mut rng = SplitMix64(p.seed);
    (0..p.rounds)
        .map(|_| {
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                order.swap(i, j);
            }
            let mut partner = vec![None; n];
            for c in order.chunks_exact(2) {
                partner[c[0]] = Some(c[1]);
                partner[c[1]] = Some(c[0]);
            }
            partner
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: RandomRounds = RandomRounds { rounds: 3, seed: 7 };

    /// Flows agree with each other: whoever r sends to receives from r.
    fn assert_consistent(n: usize, round: &Round) {
        assert_eq!(round.flows.len(), n);
        for (r, f) in round.flows.iter().enumerate() {
            if let Some(t) = f.to {
                assert!(t < n && t != r, "n={n}: {r} sends to {t}");
                assert_eq!(round.flows[t].from, Some(r), "n={n}: {t} does not expect {r}");
            }
            if let Some(s) = f.from {
                assert!(s < n && s != r, "n={n}: {r} receives from {s}");
                assert_eq!(round.flows[s].to, Some(r), "n={n}: {s} does not send to {r}");
            }
        }
    }

    /// A pairing round is a matching: no rank in two pairs.
    fn assert_matching(n: usize, round: &Round) {
        assert_consistent(n, round);
        assert!(round.is_pairing(), "n={n}: not a pairing round");
        let mut seen = vec![false; n];
        for (a, b) in round.pairs() {
            assert!(a < b && b < n);
            for x in [a, b] {
                assert!(!seen[x], "n={n}: rank {x} twice in a round");
                seen[x] = true;
            }
        }
    }

    #[test]
    fn all_visits_every_pair_once_up_to_1024() {
        // seen[a * n + b] == n marks pair (a, b) as met for this n, so the
        // table needs no clearing between rank counts.
        let mut seen = vec![0u32; 1024 * 1024];
        for n in 2..=1024usize {
            let s = Schedule::new(Scheme::All, n, R).unwrap();
            assert_eq!(s.len(), if n % 2 == 0 { n - 1 } else { n }, "n={n}");
            let mut count = 0;
            let mut partner = vec![None; n];
            for i in 0..s.len() {
                for (r, slot) in partner.iter_mut().enumerate() {
                    *slot = s.partner(i, r);
                }
                let mut idle = 0;
                for r in 0..n {
                    let Some(p) = partner[r] else {
                        idle += 1;
                        continue;
                    };
                    assert!(p < n && p != r, "n={n} round {i}: {r} with {p}");
                    // Each rank has one partner per round and partners are
                    // mutual, so the round is a matching: no rank twice.
                    assert!(partner[p] == Some(r), "n={n} round {i}: {r} -> {p} not mutual");
                    if r < p {
                        let cell = &mut seen[r * n + p];
                        assert!(*cell != n as u32, "n={n}: pair ({r},{p}) twice");
                        *cell = n as u32;
                        count += 1;
                    }
                }
                // Nobody waits more than necessary: at most one idle rank.
                assert!(idle == n % 2, "n={n} round {i}: {idle} idle");
            }
            assert_eq!(count, n * (n - 1) / 2, "n={n}");
        }
    }

    #[test]
    fn materialised_rounds_agree_with_partners() {
        for n in 2..=64usize {
            let s = Schedule::new(Scheme::All, n, R).unwrap();
            let all = rounds(Scheme::All, n, R).unwrap();
            assert_eq!(all.len(), s.len());
            for (i, round) in all.iter().enumerate() {
                assert_matching(n, round);
                for r in 0..n {
                    assert_eq!(round.flows[r].partner(), s.partner(i, r));
                }
            }
            assert_eq!(s.directions(), n * (n - 1));
        }
    }

    #[test]
    fn all_uses_xor_rounds_for_powers_of_two() {
        let rounds = rounds(Scheme::All, 16, R).unwrap();
        for (i, round) in rounds.iter().enumerate() {
            for (r, f) in round.flows.iter().enumerate() {
                assert_eq!(f.partner(), Some(r ^ (i + 1)));
            }
        }
    }

    #[test]
    fn half_is_a_matching_up_to_1024() {
        for n in 2..=1024usize {
            let rounds = rounds(Scheme::Half, n, R).unwrap();
            assert_eq!(rounds.len(), 1);
            assert_matching(n, &rounds[0]);
            let pairs = rounds[0].pairs();
            assert_eq!(pairs.len(), n / 2, "n={n}");
            for (a, b) in pairs {
                assert_eq!(b, if n.is_power_of_two() { a ^ (n / 2) } else { a + n / 2 }, "n={n}");
            }
            let s = Schedule::new(Scheme::Half, n, R).unwrap();
            assert_eq!(s.never_busy(), if n % 2 == 1 { vec![n - 1] } else { vec![] }, "n={n}");
        }
    }

    #[test]
    fn xor_is_a_matching_or_a_clear_error() {
        for n in 2..=1024usize {
            for k in [1, 2, 3, 5, 8, 16, n / 2, n - 1] {
                match rounds(Scheme::Xor(k), n, R) {
                    Ok(r) => {
                        assert_matching(n, &r[0]);
                        assert_eq!(r[0].pairs().len(), n / 2, "n={n} k={k}");
                        assert!(r[0].pairs().iter().all(|&(a, b)| a ^ k == b));
                    }
                    Err(ScheduleError::XorOutside { rank, partner, block, .. }) => {
                        assert!(partner >= n && rank ^ k == partner);
                        assert!(n % block != 0, "n={n} k={k} block={block}");
                    }
                    Err(ScheduleError::XorZero) => assert_eq!(k, 0),
                    Err(ScheduleError::XorTooLarge { .. }) => assert!(k >= n),
                    Err(e) => panic!("n={n} k={k}: {e}"),
                }
                // The rule in the message is exact: valid iff n is a
                // multiple of the block.
                if k > 0 && k < n {
                    let block = 2 << (usize::BITS - 1 - k.leading_zeros());
                    assert_eq!(rounds(Scheme::Xor(k), n, R).is_ok(), n % block == 0, "n={n} k={k}");
                }
            }
        }
        assert_eq!(rounds(Scheme::Xor(0), 4, R), Err(ScheduleError::XorZero));
        assert_eq!(rounds(Scheme::Xor(4), 4, R), Err(ScheduleError::XorTooLarge { k: 4, n: 4 }));
        let e = rounds(Scheme::Xor(8), 12, R).unwrap_err();
        assert_eq!(
            e.to_string(),
            "xor:8 pairs rank 4 with rank 12, which does not exist with 12 processes (use a multiple of 16 processes)"
        );
    }

    #[test]
    fn shift_sends_every_direction_once() {
        for n in (2..=1024usize).step_by(37).chain([2, 3, 4, 5, 8, 64]) {
            let rounds = rounds(Scheme::Shift(None), n, R).unwrap();
            assert_eq!(rounds.len(), n - 1);
            let mut seen = vec![false; n * n];
            for (i, round) in rounds.iter().enumerate() {
                assert_consistent(n, round);
                for (s, d) in round.edges() {
                    assert_eq!(d, (s + i + 1) % n);
                    assert!(!seen[s * n + d], "n={n}: {s}->{d} twice");
                    seen[s * n + d] = true;
                }
            }
            assert_eq!(seen.iter().filter(|&&x| x).count(), n * (n - 1), "n={n}");
        }
        assert!(rounds(Scheme::Shift(Some(2)), 4, R).unwrap()[0].is_pairing());
        assert!(!rounds(Scheme::Shift(Some(1)), 4, R).unwrap()[0].is_pairing());
        assert_eq!(rounds(Scheme::Shift(Some(4)), 4, R), Err(ScheduleError::ShiftRange { k: 4, n: 4 }));
        assert_eq!(rounds(Scheme::Shift(Some(0)), 4, R), Err(ScheduleError::ShiftRange { k: 0, n: 4 }));
    }

    #[test]
    fn random_matchings_are_seeded() {
        for n in 2..=1024usize {
            let a = rounds(Scheme::Random, n, R).unwrap();
            assert_eq!(a.len(), 3);
            for round in &a {
                assert_matching(n, round);
                assert_eq!(round.pairs().len(), n / 2);
            }
            assert_eq!(a, rounds(Scheme::Random, n, R).unwrap(), "same seed, same rounds");
        }
        let a = rounds(Scheme::Random, 64, R).unwrap();
        let b = rounds(Scheme::Random, 64, RandomRounds { rounds: 3, seed: 8 }).unwrap();
        assert_ne!(a, b);
        assert_eq!(rounds(Scheme::Random, 4, RandomRounds { rounds: 0, seed: 1 }), Err(ScheduleError::NoRounds));
        // More draws than a run can hold before its first round: refused
        // at once, in one line.
        let start = std::time::Instant::now();
        let e = Schedule::new(Scheme::Random, 2, RandomRounds { rounds: 1_000_000_000, seed: 1 }).unwrap_err();
        assert_eq!(e, ScheduleError::TooManyDraws { rounds: 1_000_000_000, n: 2 });
        assert_eq!(
            e.to_string(),
            "random: --rounds 1000000000 with 2 processes would draw 2000000000 partners on every rank before the \
             first round, more than 4194304 (lower --rounds; --scheme all measures every pair once)"
        );
        assert!(start.elapsed() < crate::procs::under_load(std::time::Duration::from_secs(1)));
        assert!(Schedule::new(Scheme::Random, 1024, RandomRounds { rounds: 4096, seed: 1 }).is_ok());
        assert!(Schedule::new(Scheme::Random, 1024, RandomRounds { rounds: 4097, seed: 1 }).is_err());
    }

    #[test]
    fn too_few_ranks() {
        for s in [Scheme::All, Scheme::Half, Scheme::Xor(1), Scheme::Shift(None), Scheme::Random] {
            assert_eq!(rounds(s, 1, R), Err(ScheduleError::TooFewRanks(1)));
        }
    }

    #[test]
    fn scheme_words() {
        for w in ["xor:8", "half", "all", "shift", "shift:3", "random"] {
            assert_eq!(w.parse::<Scheme>().unwrap().to_string(), w);
        }
        for w in ["xor:x", "rings", "shift:-1", "all:2", ""] {
            assert_eq!(w.parse::<Scheme>(), Err(SchemeError::Unknown(w.to_string())), "{w}");
        }
        assert_eq!(
            "xor".parse::<Scheme>().unwrap_err().to_string(),
            "'xor' needs its distance: xor:K pairs rank r with rank r ^ K"
        );
        assert_eq!(
            "ring".parse::<Scheme>().unwrap_err().to_string(),
            "'ring' is not a scheme (use xor:K, half, all, shift, shift:K or random)"
        );
    }
}
