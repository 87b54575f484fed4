//! What a `gpu-bw` run measured, free of any CUDA type: one
//! [`Measurement`] per timing, the arithmetic that turns bytes, copies and
//! seconds into GB/s or microseconds, and the GPU-by-GPU matrices built
//! from them. Formatting and files read only this.

use serde::Serialize;

use crate::matrix::Matrix;

/// Which copy a timing measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Host memory to one GPU.
    H2d,
    /// One GPU to host memory.
    D2h,
    /// Within one GPU (bytes counted twice: read and write).
    D2d,
    /// From one GPU to another (the diagonal: within one GPU).
    P2pUni,
    /// Both ways between two GPUs at once.
    P2pBidir,
    /// A small copy from one GPU to another: time per copy.
    P2pLatency,
}

impl Kind {
    /// The name in the CSV's `test` column.
    pub fn name(self) -> &'static str {
        match self {
            Kind::H2d => "h2d",
            Kind::D2h => "d2h",
            Kind::D2d => "d2d",
            Kind::P2pUni => "p2p_uni",
            Kind::P2pBidir => "p2p_bidir",
            Kind::P2pLatency => "p2p_latency",
        }
    }

    /// Whether the value is a time per copy (else a bandwidth).
    pub(crate) fn is_latency(self) -> bool {
        self == Kind::P2pLatency
    }
}

/// The host side of a host<->GPU copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HostMemory {
    /// Page-locked (cuMemHostAlloc), copied asynchronously.
    Pinned,
    /// Ordinary process memory, copied synchronously.
    Pageable,
}

impl HostMemory {
    pub fn name(self) -> &'static str {
        match self {
            HostMemory::Pinned => "pinned",
            HostMemory::Pageable => "pageable",
        }
    }
}

/// How the seconds of a timing were taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// CUDA events recorded on the stream around the copies.
    GpuEvents,
    /// The host's monotonic clock around each synchronous copy, summed.
    HostClock,
}

impl Clock {
    pub fn name(self) -> &'static str {
        match self {
            Clock::GpuEvents => "gpu_events",
            Clock::HostClock => "host_clock",
        }
    }
}

/// One timing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measurement {
    pub kind: Kind,
    /// Source GPU (None: host memory).
    pub src: Option<usize>,
    /// Destination GPU (None: host memory).
    pub dst: Option<usize>,
    /// For host<->GPU copies.
    pub host_memory: Option<HostMemory>,
    /// For GPU-to-GPU copies between two GPUs: whether peer access was on.
    pub peer_access: Option<bool>,
    /// Bytes per copy.
    pub bytes: u64,
    /// Copies in the timing (per direction for a bidirectional one).
    pub reps: usize,
    /// Bytes the bandwidth counts: bytes x reps x directions, twice
    /// again for a copy within one GPU.
    pub bytes_counted: u64,
    /// Seconds the timing took.
    pub seconds: f64,
    pub clock: Clock,
    /// GB/s, or microseconds per copy for latency.
    pub value: f64,
}

/// The bytes a timing counts: `bytes` x `reps` x `directions`, and twice
/// that when source and destination are the same GPU (each byte is read
/// and written in that GPU's memory), as bandwidthTest and
/// p2pBandwidthLatencyTest count a copy within one device.
pub(crate) fn counted_bytes(bytes: u64, reps: usize, directions: u32, within_one_gpu: bool) -> u64 {
    let once = bytes.saturating_mul(reps as u64).saturating_mul(directions as u64);
    if within_one_gpu {
        once.saturating_mul(2)
    } else {
        once
    }
}

/// GB/s: bytes / seconds / 10^9 (0 when no time passed, so a broken
/// clock cannot print infinity).
pub(crate) fn gb_per_s(bytes_counted: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes_counted as f64 / seconds / 1e9
    } else {
        0.0
    }
}

/// Microseconds per copy: seconds / reps x 10^6.
pub(crate) fn latency_us(seconds: f64, reps: usize) -> f64 {
    seconds / reps.max(1) as f64 * 1e6
}

impl Measurement {
    /// A bandwidth timing; `directions` is 2 for a bidirectional one.
    #[allow(clippy::too_many_arguments)]
    pub fn bandwidth(
        kind: Kind,
        src: Option<usize>,
        dst: Option<usize>,
        host_memory: Option<HostMemory>,
        peer_access: Option<bool>,
        (bytes, reps, directions): (u64, usize, u32),
        seconds: f64,
        clock: Clock,
    ) -> Measurement {
        let within = src.is_some() && src == dst;
        let bytes_counted = counted_bytes(bytes, reps, directions, within);
        Measurement {
            kind,
            src,
            dst,
            host_memory,
            peer_access,
            bytes,
            reps,
            bytes_counted,
            seconds,
            clock,
            value: gb_per_s(bytes_counted, seconds),
        }
    }

    /// A latency timing from `src` to `dst`.
    pub fn latency(src: usize, dst: usize, peer_access: Option<bool>, bytes: u64, reps: usize, seconds: f64) -> Self {
        Measurement {
            kind: Kind::P2pLatency,
            src: Some(src),
            dst: Some(dst),
            host_memory: None,
            peer_access,
            bytes,
            reps,
            bytes_counted: counted_bytes(bytes, reps, 1, false),
            seconds,
            clock: Clock::GpuEvents,
            value: latency_us(seconds, reps),
        }
    }

    /// The unit of `value`.
    pub fn unit(&self) -> &'static str {
        if self.kind.is_latency() {
            "us"
        } else {
            "GB/s"
        }
    }
}

/// The GPU-pair matrices: one per kind and peer-access setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MatrixId {
    pub kind: Kind,
    pub peer_access: bool,
}

impl MatrixId {
    /// The six matrices, in print order.
    pub const ALL: [MatrixId; 6] = [
        MatrixId { kind: Kind::P2pUni, peer_access: false },
        MatrixId { kind: Kind::P2pUni, peer_access: true },
        MatrixId { kind: Kind::P2pBidir, peer_access: false },
        MatrixId { kind: Kind::P2pBidir, peer_access: true },
        MatrixId { kind: Kind::P2pLatency, peer_access: false },
        MatrixId { kind: Kind::P2pLatency, peer_access: true },
    ];

    /// The file-name part: `uni_p2p_on_GBps`.
    pub(crate) fn file_kind(self) -> String {
        let what = match self.kind {
            Kind::P2pBidir => "bidir",
            Kind::P2pLatency => "lat",
            _ => "uni",
        };
        let unit = if self.kind.is_latency() { "us" } else { "GBps" };
        format!("{what}_p2p_{}_{unit}", if self.peer_access { "on" } else { "off" })
    }

    /// The heading printed above the matrix.
    pub fn title(self) -> String {
        let p2p = if self.peer_access { "P2P=Enabled" } else { "P2P=Disabled" };
        match self.kind {
            Kind::P2pBidir => format!("Bidirectional bandwidth, {p2p} (GB/s, both directions added)"),
            Kind::P2pLatency => format!("Latency, {p2p} (us per copy, GPU time)"),
            _ => format!("Unidirectional bandwidth, {p2p} (GB/s)"),
        }
    }

    /// Whether a measurement belongs here. The diagonal (a copy within one
    /// GPU, where peer access means nothing) belongs to both settings.
    pub fn holds(self, m: &Measurement) -> bool {
        m.kind == self.kind && (m.src == m.dst || m.peer_access == Some(self.peer_access))
    }

    /// The matrix of `devices` x `devices` cells (CUDA ordinals), values in
    /// GB/s or us, empty where nothing was measured.
    pub fn matrix(self, devices: usize, ms: &[Measurement]) -> Matrix {
        let mut x = Matrix::new(devices);
        for m in ms.iter().filter(|m| self.holds(m)) {
            if let (Some(s), Some(d)) = (m.src, m.dst) {
                x.set(s, d, m.value);
            }
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        // 32e6 bytes x 100 copies in 0.128 s is 25 GB/s.
        assert_eq!(counted_bytes(32_000_000, 100, 1, false), 3_200_000_000);
        assert!((gb_per_s(3_200_000_000, 0.128) - 25.0).abs() < 1e-9);
        // Within one GPU every byte is read and written.
        assert_eq!(counted_bytes(32_000_000, 100, 1, true), 6_400_000_000);
        // Both ways: twice the bytes.
        assert_eq!(counted_bytes(160_000_000, 5, 2, false), 1_600_000_000);
        assert_eq!(gb_per_s(100, 0.0), 0.0);
        assert!((latency_us(0.000_25, 100) - 2.5).abs() < 1e-9);
        assert_eq!(latency_us(1.0, 0), 1e6);
        assert_eq!(counted_bytes(u64::MAX, 2, 1, false), u64::MAX);
    }

    #[test]
    fn measurements_carry_their_convention() {
        let d2d = Measurement::bandwidth(
            Kind::D2d,
            Some(1),
            Some(1),
            None,
            None,
            (1_000_000_000, 10, 1),
            10.0,
            Clock::GpuEvents,
        );
        assert_eq!((d2d.bytes_counted, d2d.value, d2d.unit()), (20_000_000_000, 2.0, "GB/s"));
        let bidir = Measurement::bandwidth(
            Kind::P2pBidir,
            Some(0),
            Some(1),
            None,
            Some(true),
            (1_000_000_000, 5, 2),
            2.0,
            Clock::GpuEvents,
        );
        assert_eq!(bidir.value, 5.0);
        let h2d = Measurement::bandwidth(
            Kind::H2d,
            None,
            Some(0),
            Some(HostMemory::Pageable),
            None,
            (1_000_000_000, 4, 1),
            0.5,
            Clock::HostClock,
        );
        assert_eq!(h2d.value, 8.0, "host memory on one side is not a copy within one GPU");
        let lat = Measurement::latency(0, 1, Some(false), 16, 100, 0.001);
        assert!((lat.value - 10.0).abs() < 1e-9);
        assert_eq!((lat.unit(), lat.bytes_counted), ("us", 1600));
    }

    #[test]
    fn matrices_split_by_peer_access_and_share_the_diagonal() {
        let bw = |s, d, peer, secs| {
            Measurement::bandwidth(
                Kind::P2pUni,
                Some(s),
                Some(d),
                None,
                peer,
                (1_000_000_000, 1, 1),
                secs,
                Clock::GpuEvents,
            )
        };
        let ms = vec![
            bw(0, 0, None, 1.0),
            bw(0, 2, Some(false), 0.1),
            bw(0, 2, Some(true), 0.02),
            Measurement::latency(2, 0, Some(true), 16, 10, 1e-5),
        ];
        let off = MatrixId { kind: Kind::P2pUni, peer_access: false }.matrix(3, &ms);
        let on = MatrixId { kind: Kind::P2pUni, peer_access: true }.matrix(3, &ms);
        assert_eq!((off.get(0, 0), on.get(0, 0)), (Some(2.0), Some(2.0)));
        assert_eq!((off.get(0, 2), on.get(0, 2)), (Some(10.0), Some(50.0)));
        assert_eq!((off.get(2, 0), off.get(1, 1)), (None, None));
        let lat = MatrixId { kind: Kind::P2pLatency, peer_access: true }.matrix(3, &ms);
        assert!((lat.get(2, 0).unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(MatrixId::ALL[1].file_kind(), "uni_p2p_on_GBps");
        assert_eq!(MatrixId::ALL[4].file_kind(), "lat_p2p_off_us");
        assert_eq!(MatrixId::ALL[3].title(), "Bidirectional bandwidth, P2P=Enabled (GB/s, both directions added)");
    }
}
