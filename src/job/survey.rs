//! Where every rank is when a job hangs, asked without MPI (MPI is what
//! hangs). Once MPI has started, and before anything is timed, each rank's
//! watchdog listens on a TCP port of its own host, and rank 0 learns every
//! rank's port and addresses, and every rank a random token, over MPI (one
//! broadcast and one gather, O(np) bytes at rank 0 only). When rank 0's
//! watchdog sees no progress for the timeout, it asks every rank where it
//! is: a request is one line carrying the token, and a request without it
//! is dropped unanswered; each exchange is one short line each way, bounded
//! in size and time, so a frozen or unreachable rank costs the asker a few
//! seconds at most. The measuring thread only stores its position in
//! atomics, as it always has: nothing here touches the timed region. No
//! shared file system is needed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::watchdog::{Position, Progress};
use crate::backend::Control;

/// The first word of every request and answer (and the protocol's
/// version).
const MAGIC: &str = "commbench-survey-1";
/// The longest line read either way.
const MAX_LINE: u64 = 256;
/// How long an asker waits to connect to one address, and then for the
/// answer.
const CONNECT: Duration = Duration::from_millis(700);
const ANSWER: Duration = Duration::from_secs(2);
/// At most this many ranks are asked at once.
const PARALLEL: usize = 64;

/// Where one rank listens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    pub rank: usize,
    pub host: String,
    /// 0: the rank could not listen.
    pub port: u16,
    pub addrs: Vec<IpAddr>,
}

/// What a rank said of itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub at: Position,
    /// How long its position has not moved, as its watchdog saw it.
    pub still_ms: u64,
}

impl Answer {
    /// This rank's answer now.
    fn of(progress: &Progress) -> Answer {
        let still_ms = progress.still_for().map_or(0, |d| d.as_millis() as u64);
        Answer { at: progress.position_now(), still_ms }
    }
}

/// This rank's side of the survey: the token, when it was last asked, and
/// at rank 0 every rank's endpoint.
pub struct Survey {
    pub rank: usize,
    token: String,
    roster: Vec<Endpoint>,
    asked_ms: Arc<AtomicU64>,
    born: Instant,
}

impl Survey {
    /// Every rank at once (collective, over MPI, before anything is timed):
    /// listens, shares the token and gathers the endpoints at rank 0. A
    /// rank that cannot listen says port 0 and is reported as unreachable
    /// if the job hangs.
    pub fn open<C: Control>(world: &C, host: &str, progress: Arc<Progress>) -> Survey {
        let rank = world.rank();
        let mine = if rank == 0 { new_token() } else { String::new() };
        let token = String::from_utf8_lossy(&world.bcast_bytes(mine.as_bytes())).into_owned();
        let listener = TcpListener::bind((Ipv4Addr::UNSPECIFIED, 0)).ok();
        let port = listener.as_ref().and_then(|l| l.local_addr().ok()).map_or(0, |a| a.port());
        let me = Endpoint { rank, host: host.to_string(), port, addrs: local_addrs() };
        let all = world.gather_bytes(&serde_json::to_vec(&me).unwrap_or_default());
        let roster = if rank == 0 {
            all.iter()
                .enumerate()
                .map(|(r, b)| {
                    serde_json::from_slice(b).unwrap_or(Endpoint { rank: r, host: "?".into(), port: 0, addrs: vec![] })
                })
                .collect()
        } else {
            Vec::new()
        };
        let asked_ms = Arc::new(AtomicU64::new(0));
        let born = Instant::now();
        if let Some(l) = listener {
            let (token, asked) = (token.clone(), asked_ms.clone());
            let _ = std::thread::Builder::new()
                .name("commbench-survey".into())
                .spawn(move || serve(l, &token, rank, &progress, &asked, born));
        }
        Survey { rank, token, roster, asked_ms, born }
    }

    /// Whether rank 0 asked this rank where it was within `d`.
    pub(crate) fn asked_within(&self, d: Duration) -> bool {
        match self.asked_ms.load(Relaxed) {
            0 => false,
            ms => self.born.elapsed().saturating_sub(Duration::from_millis(ms)) < d,
        }
    }

    /// Rank 0: every rank's answer (its own from `progress`), in rank
    /// order; Err says why a rank gave none.
    pub(crate) fn ask_all(&self, progress: &Progress) -> Vec<(Endpoint, Result<Answer, String>)> {
        let here = self.roster.first().map_or("", |e| e.host.as_str());
        let mut out = Vec::with_capacity(self.roster.len());
        // The roster is in rank order, and so are the answers.
        for chunk in self.roster.chunks(PARALLEL) {
            std::thread::scope(|s| {
                let asked: Vec<_> =
                    chunk
                        .iter()
                        .map(|e| {
                            s.spawn(move || {
                                if e.rank == self.rank {
                                    Ok(Answer::of(progress))
                                } else {
                                    ask(e, &self.token, here)
                                }
                            })
                        })
                        .collect();
                for (e, h) in chunk.iter().zip(asked) {
                    let answer = h.join().unwrap_or_else(|_| Err("asking it failed".into()));
                    out.push((e.clone(), answer));
                }
            });
        }
        out
    }
}

/// 128 random bits, in hex.
fn new_token() -> String {
    let mut b = [0u8; 16];
    let filled = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_ok();
    if !filled {
        // Not secret then, but still unique to this job.
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        b[..8].copy_from_slice(&(t.as_nanos() as u64).to_le_bytes());
        b[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// This host's IPv4 addresses that are up, loopback last.
fn local_addrs() -> Vec<IpAddr> {
    let mut out = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list`, freed below; every entry is read
    // only while the list lives, and an address only when its family says
    // it is a sockaddr_in.
    unsafe {
        if libc::getifaddrs(&mut list) == 0 {
            let mut p = list;
            while !p.is_null() {
                let a = (*p).ifa_addr;
                let up = (*p).ifa_flags & libc::IFF_UP as u32 != 0;
                if up && !a.is_null() && (*a).sa_family as i32 == libc::AF_INET {
                    let sin = &*(a as *const libc::sockaddr_in);
                    let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                    if !ip.is_loopback() && !out.contains(&IpAddr::V4(ip)) {
                        out.push(IpAddr::V4(ip));
                    }
                }
                p = (*p).ifa_next;
            }
            libc::freeifaddrs(list);
        }
    }
    out.push(IpAddr::V4(Ipv4Addr::LOCALHOST));
    out
}

/// Whether two tokens are equal, in time that does not depend on where
/// they differ.
fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Reads one line of at most [`MAX_LINE`] bytes.
fn read_line(s: &TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    BufReader::new(s.take(MAX_LINE)).read_until(b'\n', &mut buf).ok()?;
    buf.ends_with(b"\n").then(|| String::from_utf8_lossy(&buf).trim_end().to_string())
}

/// The listening thread: one request at a time, each read with a deadline;
/// only a request with the token is answered (with the rank's position).
fn serve(l: TcpListener, token: &str, rank: usize, progress: &Progress, asked: &AtomicU64, born: Instant) {
    for conn in l.incoming() {
        let Ok(mut s) = conn else { continue };
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        let _ = s.set_write_timeout(Some(Duration::from_secs(1)));
        let Some(line) = read_line(&s) else { continue };
        let mut words = line.split(' ');
        if words.next() != Some(MAGIC) || !same_token(words.next().unwrap_or(""), token) {
            continue;
        }
        asked.store((born.elapsed().as_millis() as u64).max(1), Relaxed);
        let Answer { at: p, still_ms } = Answer::of(progress);
        let _ = writeln!(s, "{MAGIC} {rank} {} {} {} {} {still_ms}", p.step, p.datatype, p.size, p.iteration);
    }
}

/// Asks `e` where it is: its addresses in turn (loopback first when it is
/// on `here`, the asker's host), the answer checked to come from that rank.
fn ask(e: &Endpoint, token: &str, here: &str) -> Result<Answer, String> {
    if e.port == 0 {
        return Err("it could not listen for the watchdog".into());
    }
    let mut addrs = e.addrs.clone();
    if e.host == here {
        addrs.sort_by_key(|a| !a.is_loopback());
    } else {
        addrs.retain(|a| !a.is_loopback());
    }
    let mut why = "it has no address".to_string();
    for ip in addrs {
        let at = SocketAddr::new(ip, e.port);
        let mut s = match TcpStream::connect_timeout(&at, CONNECT) {
            Ok(s) => s,
            Err(err) => {
                why = format!("{at}: {err}");
                continue;
            }
        };
        let _ = s.set_read_timeout(Some(ANSWER));
        let _ = s.set_write_timeout(Some(ANSWER));
        if writeln!(s, "{MAGIC} {token}").is_err() {
            why = format!("{at}: the request could not be sent");
            continue;
        }
        match read_line(&s).as_deref().map(parse) {
            Some(Some((rank, a))) if rank == e.rank => return Ok(a),
            Some(Some((rank, _))) => why = format!("{at}: rank {rank} answered there"),
            Some(None) => why = format!("{at}: an answer commbench does not read"),
            // Something listens there and says nothing: the rank, frozen
            // (a process that is stopped still has its connections
            // accepted), or a stranger; its other addresses would say the
            // same after as long again.
            None => return Err(format!("no answer within {}s", ANSWER.as_secs())),
        }
    }
    Err(why)
}

fn parse(line: &str) -> Option<(usize, Answer)> {
    let w: Vec<&str> = line.split(' ').collect();
    if w.len() != 7 || w[0] != MAGIC {
        return None;
    }
    let n = |i: usize| w[i].parse::<u64>().ok();
    let at = Position { step: n(2)? as u8, datatype: n(3)? as u8, size: n(4)?, iteration: n(5)? };
    Some((n(1)? as usize, Answer { at, still_ms: n(6)? }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::watchdog::Step;

    fn serving(rank: usize) -> (Endpoint, Arc<Progress>, Arc<AtomicU64>) {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        let progress = Arc::new(Progress::default());
        progress.enter(Step::Timed, None, 4096);
        progress.iteration(16);
        let asked = Arc::new(AtomicU64::new(0));
        let (p, a) = (progress.clone(), asked.clone());
        std::thread::spawn(move || serve(l, "t0ken", rank, &p, &a, Instant::now()));
        let e = Endpoint { rank, host: "h".into(), port, addrs: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)] };
        (e, progress, asked)
    }

    #[test]
    fn only_the_token_gets_an_answer_and_it_is_the_rank_s_position() {
        let (e, _p, asked) = serving(3);
        let a = ask(&e, "t0ken", "h").unwrap();
        assert_eq!(a.at, Position { step: Step::Timed as u8, datatype: 0, size: 4096, iteration: 17 });
        assert!(asked.load(Relaxed) > 0);
        // A wrong token, or the right token from a rank that is not the one
        // asked for, gives nothing to believe.
        assert_eq!(ask(&e, "t0kem", "h").unwrap_err(), "no answer within 2s");
        let other = Endpoint { rank: 4, ..e.clone() };
        assert!(ask(&other, "t0ken", "h").unwrap_err().ends_with("rank 3 answered there"));
        // A line longer than the bound is not read to its end.
        let mut s = TcpStream::connect(("127.0.0.1", e.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let _ = s.write_all(&vec![b'x'; 10_000]);
        let mut buf = String::new();
        assert_eq!(s.read_to_string(&mut buf).unwrap_or(0), 0);
        assert_eq!(ask(&e, "t0ken", "h").map(|a| a.at.size), Ok(4096), "still answering");
        // A rank on another host is not looked for on loopback.
        assert_eq!(ask(&e, "t0ken", "elsewhere").unwrap_err(), "it has no address");
        assert_eq!(ask(&Endpoint { port: 0, ..e }, "t0ken", "h").unwrap_err(), "it could not listen for the watchdog");
    }

    #[test]
    fn tokens_are_random_and_compared_whole() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(same_token(&a, &a.clone()));
        assert!(!same_token(&a, &b));
        assert!(!same_token(&a, &a[..31]));
        assert!(local_addrs().last().is_some_and(|ip| ip.is_loopback()));
    }
}
