//! nccl-tests' NCCL_TESTS_SPLIT: the processes of a job split into
//! communicators by colour (MPI_Comm_split with the world rank as the
//! key), each a communicator of its own over which the data moves, while
//! the world stays the control plane. Pure arithmetic on ranks.

use serde::Serialize;

/// `NCCL_TESTS_SPLIT_MASK` or `NCCL_TESTS_SPLIT`: the colour of process
/// `proc` (MPI's world rank), by which processes split into communicators.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// One communicator.
    #[default]
    None,
    /// `proc & n` (`NCCL_TESTS_SPLIT_MASK`, hexadecimal, or `AND n`);
    /// nccl-tests keeps `n` in a C `int`, and so does this.
    And(i32),
    Or(i32),
    Mod(i32),
    Div(i32),
}

impl Split {
    /// The colour of world rank `proc`, with C's `int` arithmetic.
    pub fn color(self, proc: i32) -> i32 {
        match self {
            Split::None => 0,
            Split::And(m) => proc & m,
            Split::Or(m) => proc | m,
            Split::Mod(m) => proc.wrapping_rem(m),
            Split::Div(m) => proc.wrapping_div(m),
        }
    }

    /// The rule in NCCL_TESTS_SPLIT's words (`MOD 3`); empty for none.
    #[cfg(test)]
    pub fn words(self) -> String {
        match self {
            Split::None => String::new(),
            Split::And(m) => format!("AND {m}"),
            Split::Or(m) => format!("OR {m}"),
            Split::Mod(m) => format!("MOD {m}"),
            Split::Div(m) => format!("DIV {m}"),
        }
    }

    /// Whether there is a split (more than one communicator may result).
    pub fn is_none(&self) -> bool {
        *self == Split::None
    }

    /// World rank `proc`'s communicator among `procs` processes, as
    /// MPI_Comm_split makes it with the world rank as the key: `proc`'s
    /// place in it and its size.
    pub fn group_of(self, proc: usize, procs: usize) -> (usize, usize) {
        let color = self.color(proc as i32);
        let mut members = (0..procs).filter(|&p| self.color(p as i32) == color);
        let place = members.by_ref().take_while(|&p| p != proc).count();
        (place, place + 1 + members.count())
    }

    /// Every communicator's colour among `procs` processes, in the order
    /// of their first members.
    fn colors(self, procs: usize) -> Vec<i32> {
        let mut colors = Vec::new();
        for p in 0..procs {
            let c = self.color(p as i32);
            if !colors.contains(&c) {
                colors.push(c);
            }
        }
        colors
    }

    /// The sizes of every communicator among `procs` processes, in the
    /// order of their first members.
    #[cfg(test)]
    pub fn group_sizes(self, procs: usize) -> Vec<usize> {
        let colors: Vec<i32> = (0..procs).map(|p| self.color(p as i32)).collect();
        self.colors(procs).into_iter().map(|c| colors.iter().filter(|&&k| k == c).count()).collect()
    }

    /// The place of world rank `proc`'s communicator in that order.
    pub fn group_index(self, proc: usize, procs: usize) -> usize {
        let mine = self.color(proc as i32);
        self.colors(procs).iter().position(|&c| c == mine).unwrap_or(0)
    }
}
