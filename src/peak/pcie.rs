//! A PCIe link's rate from what sysfs says of it: the current link speed
//! (`current_link_speed`, "16.0 GT/s PCIe") and width (`current_link_width`,
//! "16") of a PCI device, and the line encoding of that generation. The
//! figure is the link's data rate after encoding, one direction, before
//! packet (TLP) overheads, which a real transfer also pays.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// One PCIe link as trained now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PcieLink {
    /// Transfers per second per lane, in GT/s.
    pub gts: f64,
    pub width: u32,
    /// The encoding in words: "128b/130b".
    pub encoding: String,
    /// One direction, 10^6 bytes per second.
    pub mbps: f64,
    /// Where the speed and width were read.
    pub source: String,
}

/// The share of transferred bits that carry data, by signalling rate:
/// 8b/10b up to 5 GT/s (generations 1 and 2), 128b/130b from 8 to 32 GT/s
/// (3 to 5), and at 64 GT/s (6) flit mode, whose 256-byte flits spend 14
/// bytes on forward error correction and CRC.
pub(crate) fn encoding(gts: f64) -> Option<(f64, &'static str)> {
    match gts {
        g if (g - 2.5).abs() < 0.01 || (g - 5.0).abs() < 0.01 => Some((8.0 / 10.0, "8b/10b")),
        g if [8.0, 16.0, 32.0].iter().any(|x| (g - x).abs() < 0.01) => Some((128.0 / 130.0, "128b/130b")),
        g if (g - 64.0).abs() < 0.01 => Some((242.0 / 256.0, "flit mode, 242 of 256 bytes")),
        _ => None,
    }
}

/// "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> GT/s; None for "Unknown" or
/// anything else.
pub(crate) fn parse_speed(text: &str) -> Option<f64> {
    let t = text.trim();
    let number = t.split_whitespace().next()?;
    let unit = t.split_whitespace().nth(1)?;
    if unit != "GT/s" {
        return None;
    }
    number.parse::<f64>().ok().filter(|g| g.is_finite() && *g > 0.0)
}

/// The link of one PCI device from its speed and width texts; Err says why
/// it has no rate (`where_` names the device in the message).
pub fn link(speed: &str, width: &str, source: String) -> Result<PcieLink, String> {
    let gts = parse_speed(speed).ok_or_else(|| format!("{source}: link speed '{}' is not a rate", speed.trim()))?;
    let width: u32 = width
        .trim()
        .parse()
        .ok()
        .filter(|w| *w > 0)
        .ok_or_else(|| format!("{source}: link width '{}' (the link is down)", width.trim()))?;
    let (share, name) = encoding(gts).ok_or_else(|| format!("{source}: no PCIe generation signals at {gts} GT/s"))?;
    let mbps = gts * 1e9 * f64::from(width) * share / 8.0 / 1e6;
    Ok(PcieLink { gts, width, encoding: name.to_string(), mbps, source })
}

/// The sysfs tree PCIe links are read from: `COMMBENCH_SYSFS_ROOT` (a
/// fixture tree, for tests or a copy taken from another node), else `/sys`.
pub(crate) fn sysfs_root() -> std::path::PathBuf {
    std::env::var_os("COMMBENCH_SYSFS_ROOT")
        .filter(|v| !v.is_empty())
        .map_or_else(|| "/sys".into(), std::path::PathBuf::from)
}

/// The link of the PCI device `bus_id` (`0000:3b:00.0`) under `sys` (/sys).
pub fn read(sys: &Path, bus_id: &str) -> Result<PcieLink, String> {
    let dir = sys.join("bus/pci/devices").join(bus_id);
    let speed_path = dir.join("current_link_speed");
    // A copied tree (COMMBENCH_SYSFS_ROOT) may hold anything: a FIFO there
    // is refused, not waited on.
    let read = |p: &Path| crate::input_file::read_small_text(p, 64 << 10).map_err(|e| format!("{}: {e}", p.display()));
    let speed = read(&speed_path)?;
    let width = read(&dir.join("current_link_width"))?;
    link(&speed, &width, format!("{}/current_link_{{speed,width}}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_by_generation() {
        let mb = |s: &str, w: &str| link(s, w, "x".into()).map(|l| (l.mbps * 10.0).round() / 10.0);
        assert_eq!(mb("2.5 GT/s PCIe", "1"), Ok(250.0));
        assert_eq!(mb("5.0 GT/s PCIe", "8"), Ok(4000.0));
        // Gen3 x16: 8 GT/s x 16 lanes x 128/130 / 8 = 15.75 GB/s.
        assert_eq!(mb("8 GT/s", "16"), Ok(15753.8));
        assert_eq!(mb("16.0 GT/s PCIe", "16"), Ok(31507.7));
        assert_eq!(mb("32.0 GT/s PCIe", "16"), Ok(63015.4));
        assert_eq!(mb("64.0 GT/s PCIe", "16"), Ok(121000.0));
        assert_eq!(link("16.0 GT/s PCIe", "16", "x".into()).unwrap().encoding, "128b/130b");
    }

    #[test]
    fn what_has_no_rate() {
        assert_eq!(link("Unknown", "16", "dev".into()).unwrap_err(), "dev: link speed 'Unknown' is not a rate");
        assert_eq!(link("8.0 GT/s PCIe", "0\n", "dev".into()).unwrap_err(), "dev: link width '0' (the link is down)");
        assert_eq!(link("7 GT/s", "4", "dev".into()).unwrap_err(), "dev: no PCIe generation signals at 7 GT/s");
        assert_eq!(parse_speed("16.0 Gb/s"), None);
        assert_eq!(parse_speed(""), None);
    }

    #[test]
    fn reads_a_fixture_tree() {
        let root = tempfile::tempdir().unwrap();
        let dev = root.path().join("bus/pci/devices/0000:3b:00.0");
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("current_link_speed"), "16.0 GT/s PCIe\n").unwrap();
        std::fs::write(dev.join("current_link_width"), "8\n").unwrap();
        let l = read(root.path(), "0000:3b:00.0").unwrap();
        assert_eq!((l.gts, l.width, l.mbps.round()), (16.0, 8, 15754.0));
        assert!(l.source.ends_with("0000:3b:00.0/current_link_{speed,width}"), "{}", l.source);
        let missing = read(root.path(), "0000:00:01.0").unwrap_err();
        assert!(missing.contains("0000:00:01.0/current_link_speed"), "{missing}");
    }
}
