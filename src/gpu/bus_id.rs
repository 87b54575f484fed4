//! A PCI bus id as the driver, NVML and sysfs spell it, in one form, so the
//! same GPU is recognised whichever named it.

/// `00000000:3B:00.0` or `0000:3b:00.0` as `0000:3b:00.0`.
pub(crate) fn normalize(text: &str) -> Option<String> {
    let t = text.trim().trim_end_matches('\0');
    let mut parts = t.split(':');
    let (domain, bus, rest) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let (device, function) = rest.split_once('.')?;
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    let (d, b, v, f) = (hex(domain)?, hex(bus)?, hex(device)?, hex(function)?);
    (b <= 0xff && v <= 0x1f && f <= 0x7).then(|| format!("{d:04x}:{b:02x}:{v:02x}.{f:x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_ids() {
        assert_eq!(normalize("00000000:3B:00.0").as_deref(), Some("0000:3b:00.0"));
        assert_eq!(normalize("0000:c1:00.1\0\0").as_deref(), Some("0000:c1:00.1"));
        assert_eq!(normalize("3b:00.0"), None);
        assert_eq!(normalize("0000:3b:00"), None);
        assert_eq!(normalize("0000:zz:00.0"), None);
        assert_eq!(normalize("0000:3b:00.9"), None);
    }
}
