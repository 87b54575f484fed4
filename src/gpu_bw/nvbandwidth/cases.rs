//! nvbandwidth's single-node test cases, by index and name, in its order:
//! what each copies, between which buffers, from which context, and which
//! figure it reports. The descriptions `-l` prints are ours.

/// Who moves the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The copy engine (cuMemcpyAsync).
    Ce,
    /// A copy kernel on the GPU's SMs.
    Sm,
}

/// What a case copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Host and each GPU in turn; `to_device`: host to GPU; `both`: a
    /// copy the other way runs at the same time.
    HostDevice { to_device: bool, both: bool },
    /// Each ordered pair of GPUs that can map each other's memory;
    /// `read`: the row's GPU pulls from the column's (in its own
    /// context); `both`: a copy the other way runs at the same time and
    /// both are reported with their total.
    Peer { read: bool, both: bool },
    /// One GPU and the host while every other GPU copies with the host at
    /// the same time; `to_host`: GPU to host.
    AllHost { to_host: bool, both: bool },
    /// Every GPU that can reach it copies into (write) or is read by one
    /// GPU at once; the figure is that GPU's total.
    AllToOne { read: bool },
    /// One GPU copies to (write) or is read by every GPU it can reach at
    /// once; the figure is that GPU's total.
    OneToAll { read: bool },
    /// A pointer chase by a GPU through 2 MiB of host memory.
    HostLatency,
    /// A pointer chase by each GPU through 2 MiB of every peer's memory.
    PeerLatency,
    /// A copy within each GPU's memory.
    Local,
}

#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub key: &'static str,
    pub about: &'static str,
    pub engine: Engine,
    pub shape: Shape,
}

impl Case {
    /// Whether it needs a pair of GPUs that can map each other's memory
    /// (else it is waived).
    pub fn needs_peers(&self) -> bool {
        matches!(self.shape, Shape::Peer { .. } | Shape::AllToOne { .. } | Shape::OneToAll { .. } | Shape::PeerLatency)
    }

    /// Whether it runs kernels.
    pub fn needs_kernels(&self) -> bool {
        self.engine == Engine::Sm
    }

    fn engine_name(&self) -> &'static str {
        match self.engine {
            Engine::Ce => "CE",
            Engine::Sm => "SM",
        }
    }

    /// The title of each matrix it prints, with its key (the `SUM` line's
    /// name).
    pub fn matrices(&self) -> Vec<(String, String)> {
        let e = self.engine_name();
        let one = |between: &str| vec![(self.key.to_string(), format!("memcpy {e} {between} bandwidth (GB/s)"))];
        let arrow = |forward: bool| if forward { "->" } else { "<-" };
        match self.shape {
            Shape::HostDevice { both: true, .. } | Shape::AllHost { both: true, .. } => one("CPU(row) <-> GPU(column)"),
            Shape::HostDevice { to_device, .. } => one(&format!("CPU(row) {} GPU(column)", arrow(to_device))),
            Shape::AllHost { to_host, .. } => one(&format!("CPU(row) {} GPU(column)", arrow(!to_host))),
            Shape::Peer { read, both: false } => one(&format!("GPU(row) {} GPU(column)", arrow(read))),
            Shape::Peer { read, both: true } => {
                let word = if read { "Read" } else { "Write" };
                let lower = word.to_lowercase();
                vec![
                    (
                        format!("{}_{lower}1", self.key),
                        format!("memcpy {e} GPU(row) <-> GPU(column) {word}1 bandwidth (GB/s)"),
                    ),
                    (
                        format!("{}_{lower}2", self.key),
                        format!("memcpy {e} GPU(row) <-> GPU(column) {word}2 bandwidth (GB/s)"),
                    ),
                    (
                        format!("{}_total", self.key),
                        format!("memcpy {e} GPU(row) <-> GPU(column) Total bandwidth (GB/s)"),
                    ),
                ]
            }
            Shape::AllToOne { read } => one(&format!("GPU(row) {} GPU(column)", arrow(read))),
            Shape::OneToAll { read } => one(&format!("GPU(row) {} GPU(column)", arrow(!read))),
            Shape::HostLatency => {
                vec![(self.key.to_string(), "memory latency SM CPU(row) <-> GPU(column) (ns)".to_string())]
            }
            Shape::PeerLatency => {
                vec![(self.key.to_string(), "Device to Device Latency SM GPU(row) <-> GPU(column) (ns)".to_string())]
            }
            Shape::Local => vec![(self.key.to_string(), "memcpy local GPU(column) bandwidth (GB/s)".to_string())],
        }
    }
}

const fn case(key: &'static str, about: &'static str, engine: Engine, shape: Shape) -> Case {
    Case { key, about, engine, shape }
}

use Engine::{Ce, Sm};
use Shape::*;

/// Every single-node case, at nvbandwidth's index.
pub const CASES: [Case; 35] = [
    case("host_to_device_memcpy_ce", "\tCopy engine, pinned host memory to each GPU (cuMemcpyAsync).", Ce, HostDevice { to_device: true, both: false }),
    case("device_to_host_memcpy_ce", "\tCopy engine, each GPU to pinned host memory (cuMemcpyAsync).", Ce, HostDevice { to_device: false, both: false }),
    case("host_to_device_bidirectional_memcpy_ce", "\tCopy engine, host to GPU, timed while a GPU to host copy runs beside it.\n\tThe figure is the host to GPU copy's.", Ce, HostDevice { to_device: true, both: true }),
    case("device_to_host_bidirectional_memcpy_ce", "\tCopy engine, GPU to host, timed while a host to GPU copy runs beside it.\n\tThe figure is the GPU to host copy's.", Ce, HostDevice { to_device: false, both: true }),
    case("device_to_device_memcpy_read_ce", "\tCopy engine between every pair of GPUs with peer access.\n\tRead: the row's GPU pulls from the column's, issued in the row's context.", Ce, Peer { read: true, both: false }),
    case("device_to_device_memcpy_write_ce", "\tCopy engine between every pair of GPUs with peer access.\n\tWrite: the row's GPU pushes to the column's, issued in the row's context.", Ce, Peer { read: false, both: false }),
    case("device_to_device_bidirectional_memcpy_read_ce", "\tCopy engine between every pair of GPUs with peer access, both ways at once.\n\tEach direction's figure is shown, and their total.\n\tRead: each copy is issued by the GPU it lands on.", Ce, Peer { read: true, both: true }),
    case("device_to_device_bidirectional_memcpy_write_ce", "\tCopy engine between every pair of GPUs with peer access, both ways at once.\n\tEach direction's figure is shown, and their total.\n\tWrite: each copy is issued by the GPU it leaves.", Ce, Peer { read: false, both: true }),
    case("all_to_host_memcpy_ce", "\tCopy engine, one GPU to the host while every other GPU also copies to the host.", Ce, AllHost { to_host: true, both: false }),
    case("all_to_host_bidirectional_memcpy_ce", "\tCopy engine, one GPU to the host while it also copies from the host,\n\tand every other GPU copies both ways with the host. The figure is the GPU to host copy's.", Ce, AllHost { to_host: true, both: true }),
    case("host_to_all_memcpy_ce", "\tCopy engine, the host to one GPU while the host also copies to every other GPU.", Ce, AllHost { to_host: false, both: false }),
    case("host_to_all_bidirectional_memcpy_ce", "\tCopy engine, the host to one GPU while it also copies to the host,\n\tand every other GPU copies both ways with the host. The figure is the host to GPU copy's.", Ce, AllHost { to_host: false, both: true }),
    case("all_to_one_write_ce", "\tCopy engine, every peer GPU writes into one GPU at once.\n\tThe figure is that GPU's total inbound bandwidth.", Ce, AllToOne { read: false }),
    case("all_to_one_read_ce", "\tCopy engine, every peer GPU reads from one GPU at once.\n\tThe figure is that GPU's total outbound bandwidth.", Ce, AllToOne { read: true }),
    case("one_to_all_write_ce", "\tCopy engine, one GPU writes into every peer GPU at once.\n\tThe figure is that GPU's total outbound bandwidth.", Ce, OneToAll { read: false }),
    case("one_to_all_read_ce", "\tCopy engine, one GPU reads from every peer GPU at once.\n\tThe figure is that GPU's total inbound bandwidth.", Ce, OneToAll { read: true }),
    case("host_to_device_memcpy_sm", "\tCopy kernel, pinned host memory to each GPU.", Sm, HostDevice { to_device: true, both: false }),
    case("device_to_host_memcpy_sm", "\tCopy kernel, each GPU to pinned host memory.", Sm, HostDevice { to_device: false, both: false }),
    case("host_to_device_bidirectional_memcpy_sm", "\tCopy kernel moving data both ways between the host and a GPU, half its warps each way.\n\tThe figure is one direction's: half the bytes moved.", Sm, HostDevice { to_device: true, both: true }),
    case("device_to_host_bidirectional_memcpy_sm", "\tCopy kernel moving data both ways between a GPU and the host, half its warps each way.\n\tThe figure is one direction's: half the bytes moved.", Sm, HostDevice { to_device: false, both: true }),
    case("device_to_device_memcpy_read_sm", "\tCopy kernel between every pair of GPUs with peer access.\n\tRead: the row's GPU pulls from the column's, run in the row's context.", Sm, Peer { read: true, both: false }),
    case("device_to_device_memcpy_write_sm", "\tCopy kernel between every pair of GPUs with peer access.\n\tWrite: the row's GPU pushes to the column's, run in the row's context.", Sm, Peer { read: false, both: false }),
    case("device_to_device_bidirectional_memcpy_read_sm", "\tCopy kernels between every pair of GPUs with peer access, both ways at once.\n\tEach direction's figure is shown, and their total.\n\tRead: each copy runs on the GPU it lands on.", Sm, Peer { read: true, both: true }),
    case("device_to_device_bidirectional_memcpy_write_sm", "\tCopy kernels between every pair of GPUs with peer access, both ways at once.\n\tEach direction's figure is shown, and their total.\n\tWrite: each copy runs on the GPU it leaves.", Sm, Peer { read: false, both: true }),
    case("all_to_host_memcpy_sm", "\tCopy kernel, one GPU to the host while every other GPU also copies to the host.", Sm, AllHost { to_host: true, both: false }),
    case("all_to_host_bidirectional_memcpy_sm", "\tCopy kernel both ways between one GPU and the host, half its warps each way,\n\twhile every other GPU does the same. The figure is one direction's.", Sm, AllHost { to_host: true, both: true }),
    case("host_to_all_memcpy_sm", "\tCopy kernel, the host to one GPU while the host also copies to every other GPU.", Sm, AllHost { to_host: false, both: false }),
    case("host_to_all_bidirectional_memcpy_sm", "\tCopy kernel both ways between the host and one GPU, half its warps each way,\n\twhile every other GPU does the same. The figure is one direction's.", Sm, AllHost { to_host: false, both: true }),
    case("all_to_one_write_sm", "\tCopy kernels, every peer GPU writes into one GPU at once.\n\tThe figure is that GPU's total inbound bandwidth.", Sm, AllToOne { read: false }),
    case("all_to_one_read_sm", "\tCopy kernels, every peer GPU reads from one GPU at once.\n\tThe figure is that GPU's total outbound bandwidth.", Sm, AllToOne { read: true }),
    case("one_to_all_write_sm", "\tCopy kernels, one GPU writes into every peer GPU at once.\n\tThe figure is that GPU's total outbound bandwidth.", Sm, OneToAll { read: false }),
    case("one_to_all_read_sm", "\tCopy kernels, one GPU reads from every peer GPU at once.\n\tThe figure is that GPU's total inbound bandwidth.", Sm, OneToAll { read: true }),
    case("host_device_latency_sm", "\tLatency of a GPU's loads from pinned host memory: a pointer chase kernel\n\tthrough a 2 MiB host buffer.", Sm, HostLatency),
    case("device_to_device_latency_sm", "\tLatency of a GPU's loads from a peer GPU's memory: a pointer chase kernel\n\tthrough a 2 MiB buffer on the peer. The buffer size option does not apply.", Sm, PeerLatency),
    case("device_local_copy", "\tCopy engine, between two buffers in each GPU's own memory.\n", Ce, Local),
];

/// What `-t` names: a case's index (as C's `strtol` reads a whole word)
/// or its name.
pub fn find(id: &str) -> Result<&'static Case, String> {
    let digits = id.strip_prefix(['-', '+']).unwrap_or(id);
    if !id.is_empty() && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return match id.parse::<usize>() {
            Ok(i) if i < CASES.len() => Ok(&CASES[i]),
            _ => Err(format!("Testcase index {id} out of bound!")),
        };
    }
    CASES.iter().find(|c| c.key == id).ok_or_else(|| format!("Testcase {id} not found!"))
}

/// The cases whose names start with any of `prefixes`, in index order.
pub fn with_prefixes(prefixes: &[String]) -> Vec<&'static Case> {
    CASES.iter().filter(|c| prefixes.iter().any(|p| c.key.starts_with(p.as_str()))).collect()
}

/// `-l`: the header, then per case its index and name and its
/// description.
pub fn list_text() -> String {
    let mut s = String::from("Index, Name:\n\tDescription\n=======================\n");
    for (i, c) in CASES.iter().enumerate() {
        s.push_str(&format!("{i}, {}:\n{}\n\n", c.key, c.about));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_indices() {
        assert_eq!(CASES[0].key, "host_to_device_memcpy_ce");
        assert_eq!(CASES[16].key, "host_to_device_memcpy_sm");
        assert_eq!(CASES[32].key, "host_device_latency_sm");
        assert_eq!(CASES[34].key, "device_local_copy");
        assert_eq!(find("4").unwrap().key, "device_to_device_memcpy_read_ce");
        assert_eq!(find("35").unwrap_err(), "Testcase index 35 out of bound!");
        assert_eq!(find("-1").unwrap_err(), "Testcase index -1 out of bound!");
        assert_eq!(find("4x").unwrap_err(), "Testcase 4x not found!");
        let names: std::collections::HashSet<_> = CASES.iter().map(|c| c.key).collect();
        assert_eq!(names.len(), 35);
        for c in CASES {
            let suffix = if c.engine == Engine::Ce { "_ce" } else { "_sm" };
            assert!(c.key.ends_with(suffix) || c.key == "device_local_copy", "{}", c.key);
        }
        assert_eq!(with_prefixes(&["all_to_one".into()]).len(), 4);
    }

    #[test]
    fn titles() {
        assert_eq!(CASES[0].matrices()[0].1, "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)");
        assert_eq!(CASES[1].matrices()[0].1, "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)");
        assert_eq!(CASES[8].matrices()[0].1, "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)");
        assert_eq!(CASES[10].matrices()[0].1, "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)");
        assert_eq!(CASES[4].matrices()[0].1, "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)");
        assert_eq!(CASES[12].matrices()[0].1, "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)");
        assert_eq!(CASES[13].matrices()[0].1, "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)");
        assert_eq!(CASES[14].matrices()[0].1, "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)");
        assert_eq!(CASES[15].matrices()[0].1, "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)");
        let bidir = CASES[23].matrices();
        assert_eq!(bidir[0].0, "device_to_device_bidirectional_memcpy_write_sm_write1");
        assert_eq!(bidir[2].1, "memcpy SM GPU(row) <-> GPU(column) Total bandwidth (GB/s)");
    }
}
