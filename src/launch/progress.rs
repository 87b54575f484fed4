//! What the suite tells the person watching: on stderr, on a terminal one
//! line rewritten in place (which benchmark, i/N, elapsed, ETA from the
//! benchmarks already finished), otherwise one plain line when each
//! benchmark starts and ends; on stdout, the benchmarks' own output as it
//! comes, in whole lines, with the progress line cleared first so the two
//! never share a line on a terminal.

use std::io::Write;
use std::time::{Duration, Instant};

/// Progress over the benchmarks of one suite.
pub struct Progress {
    total: usize,
    tty: bool,
    started: Instant,
    finished: Vec<Duration>,
    current: Option<(usize, String, Instant)>,
    last_draw: Option<Instant>,
    /// Whether the progress line is on the terminal now.
    drawn: bool,
    /// Where the benchmarks' output is echoed (stdout).
    out: Box<dyn Write + Send>,
}

/// `m:ss` (or `h:mm:ss`).
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Time left: the mean of the finished benchmarks for each one not yet
/// finished, less what the current one has already taken. None before
/// anything has finished.
pub(crate) fn eta(finished: &[Duration], total: usize, current_elapsed: Duration) -> Option<Duration> {
    if finished.is_empty() {
        return None;
    }
    let mean = finished.iter().sum::<Duration>() / finished.len() as u32;
    let left = total.saturating_sub(finished.len()) as u32;
    Some((mean * left).saturating_sub(current_elapsed))
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        // SAFETY: isatty only inspects the descriptor.
        let tty = unsafe { libc::isatty(2) } == 1;
        Progress::with_output(total, tty, Box::new(std::io::stdout()))
    }

    /// Progress with the echo going to `out`; `tty` says whether stderr is
    /// a terminal (the line rewritten in place).
    pub(crate) fn with_output(total: usize, tty: bool, out: Box<dyn Write + Send>) -> Progress {
        Progress {
            total,
            tty,
            started: Instant::now(),
            finished: Vec::new(),
            current: None,
            last_draw: None,
            drawn: false,
            out,
        }
    }

    /// Writes whole lines of a benchmark's output to stdout at once; on a
    /// terminal the progress line is cleared first and drawn again on the
    /// next tick, below them.
    pub fn echo(&mut self, lines: &[u8]) {
        if lines.is_empty() {
            return;
        }
        if self.tty && self.drawn {
            crate::diag::write_once("\r\x1b[2K");
            self.drawn = false;
        }
        let _ = self.out.write_all(lines);
        let _ = self.out.flush();
    }

    pub fn start(&mut self, index: usize, name: &str, command: &str) {
        self.current = Some((index, name.to_string(), Instant::now()));
        if self.tty {
            self.draw(true);
        } else {
            say(&format!("suite: [{}/{}] {name} started: {command}", index + 1, self.total));
        }
    }

    /// Called while the benchmark runs; redraws at most twice a second,
    /// or at once after an echo took the line away.
    pub(crate) fn tick(&mut self) {
        if self.tty {
            let force = !self.drawn;
            self.draw(force);
        }
    }

    pub fn finish(&mut self, status: &str, took: Duration) {
        self.finished.push(took);
        let Some((index, name, _)) = self.current.take() else { return };
        let line = format!("[{}/{}] {name} {status} in {:.1} s", index + 1, self.total, took.as_secs_f64());
        if self.tty {
            // Clear the progress line, leave a permanent one.
            crate::diag::write_once(&format!("\r\x1b[2K{line}\n"));
            self.drawn = false;
        } else {
            say(&format!("suite: {line}"));
        }
    }

    fn draw(&mut self, force: bool) {
        let now = Instant::now();
        if !force && self.last_draw.is_some_and(|t| now.duration_since(t) < Duration::from_millis(500)) {
            return;
        }
        self.last_draw = Some(now);
        let Some((index, name, since)) = &self.current else { return };
        let eta = match eta(&self.finished, self.total, now.duration_since(*since)) {
            Some(d) => format!("ETA {}", clock(d)),
            None => "ETA --".into(),
        };
        self.drawn = true;
        crate::diag::write_once(&format!(
            "\r\x1b[2K[{}/{}] {name}  running {}  elapsed {}  {eta}",
            index + 1,
            self.total,
            clock(now.duration_since(*since)),
            clock(now.duration_since(self.started)),
        ));
    }
}

use crate::diag::say;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_format() {
        assert_eq!(clock(Duration::from_secs(5)), "0:05");
        assert_eq!(clock(Duration::from_secs(125)), "2:05");
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }

    #[test]
    fn eta_from_finished() {
        let s = Duration::from_secs;
        assert_eq!(eta(&[], 8, s(3)), None);
        // Two done at 4 s and 6 s: 6 left at 5 s each, 2 s into the current one.
        assert_eq!(eta(&[s(4), s(6)], 8, s(2)), Some(s(28)));
        assert_eq!(eta(&[s(1)], 2, s(10)), Some(s(0)));
    }
}
