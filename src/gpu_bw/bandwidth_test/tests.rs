use super::*;

/// Each run of digits as one `#`, as a parser sees a layout.
fn masked(t: &str) -> String {
    let mut m = String::new();
    for c in t.chars() {
        if !c.is_ascii_digit() {
            m.push(c);
        } else if !m.ends_with('#') {
            m.push('#');
        }
    }
    m
}

/// The shmoo's 81 sizes: 1 kB steps to 20 kB, then 2 kB, 10 kB, 100 kB,
/// 1 MB, 2 MB and 4 MB steps, the last past 64 MB.
#[test]
fn shmoo_sweeps_the_sample_s_81_sizes() {
    let s = Mode::Shmoo.sizes();
    assert_eq!(s.len(), 81);
    assert_eq!(&s[..3], &[1_000, 2_000, 3_000]);
    assert_eq!(&s[19..22], &[20_000, 22_000, 24_000]);
    assert_eq!(&s[34..36], &[50_000, 60_000]);
    assert_eq!(&s[39..41], &[100_000, 200_000]);
    assert_eq!(&s[48..50], &[1_000_000, 2_000_000]);
    assert_eq!(&s[63..65], &[16_000_000, 18_000_000]);
    assert_eq!(&s[71..73], &[32_000_000, 36_000_000]);
    assert_eq!(&s[78..], &[60_000_000, 64_000_000, 68_000_000]);
    assert!(s.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn range_sizes_step_from_start_while_within_end() {
    let r = Mode::Range { start: 1024, end: 102_400, increment: 1024 };
    let s = r.sizes();
    assert_eq!((s.len(), s[0], s[99]), (100, 1024, 102_400));
    let uneven = Mode::Range { start: 1000, end: 3500, increment: 1000 }.sizes();
    assert_eq!(uneven, vec![1000, 2000, 3000]);
    assert_eq!(Mode::Quick.sizes(), vec![32_000_000]);
}

/// The readable table as the sample's format strings print it: heading,
/// memory, column heads with a tab, each size then three tabs (four
/// below 10000 bytes) and one decimal; a blank line after. The
/// write-combining note has no newline of its own.
#[test]
fn readable_tables_follow_the_sample_s_format() {
    let s = Series { dir: Direction::HostToDevice, host: HostSide::Pinned { write_combined: false }, wc: false };
    let t = readable(s, 1, &[1000, 32_000_000], &[0.25, 12.345]);
    assert_eq!(
        t,
        " Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n   1000\t\t\t\t0.2\n   32000000\t\t\t12.3\n\n"
    );
    let wc = Series { dir: Direction::DeviceToHost, host: HostSide::Pinned { write_combined: true }, wc: true };
    let t = readable(wc, 8, &[4096], &[100.0]);
    assert!(t.starts_with(" Device to Host Bandwidth, 8 Device(s)\n PINNED Memory Transfers\n Write-Combined Memory Writes are Enabled   Transfer Size (Bytes)\tBandwidth(GB/s)\n"), "{t}");
    let d2d = Series { dir: Direction::DeviceToDevice, host: HostSide::Pageable, wc: false };
    assert!(readable(d2d, 1, &[1], &[1.0])
        .starts_with(" Device to Device Bandwidth, 1 Device(s)\n PAGEABLE Memory Transfers\n   Transfer"));
    // `--wc` with pageable memory: the note all the same.
    let paged_wc = Series { dir: Direction::HostToDevice, host: HostSide::Pageable, wc: true };
    assert!(readable(paged_wc, 1, &[1], &[1.0])
        .contains(" PAGEABLE Memory Transfers\n Write-Combined Memory Writes are Enabled   Transfer"));
}

/// `--csv`: one line per size, the configuration named as the sample
/// names it, the time of one copy at the (summed) bandwidth.
#[test]
fn csv_lines_follow_the_sample_s_format() {
    let cases = [
        (Direction::HostToDevice, HostSide::Pinned { write_combined: false }, "H2D-Pinned"),
        (Direction::HostToDevice, HostSide::Pinned { write_combined: true }, "H2D-Pinned-WriteCombined"),
        (Direction::DeviceToHost, HostSide::Pageable, "D2H-Paged"),
        (Direction::DeviceToDevice, HostSide::Pageable, "D2D"),
        (Direction::DeviceToDevice, HostSide::Pinned { write_combined: true }, "D2D"),
    ];
    for (dir, host, name) in cases {
        let t = csv(Series { dir, host, wc: false }, 2, &[32_000_000, 1000], &[12.5, 0.5]);
        assert_eq!(
            t,
            format!(
                "bandwidthTest-{name}, Bandwidth = 12.5 GB/s, Time = 0.00256 s, Size = 32000000 bytes, NumDevsUsed = 2\n\
                 bandwidthTest-{name}, Bandwidth = 0.5 GB/s, Time = 0.00000 s, Size = 1000 bytes, NumDevsUsed = 2\n"
            )
        );
        assert_eq!(
            masked(t.lines().next().unwrap()),
            masked(&format!(
                "bandwidthTest-{name}, Bandwidth = 1.0 GB/s, Time = 0.00000 s, Size = 1 bytes, NumDevsUsed = 1"
            ))
        );
    }
}

/// What the docs checker asks: the arguments the sample reads nothing
/// from.
#[test]
fn unread_arguments_are_those_the_sample_ignores() {
    let argv: Vec<String> = ["--htod", "-CSV", "--memory=pinned", "--incremental", "--verbose", "--dtod2", "x"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // `--incremental` starts with `increment`: its value is read (as 0).
    assert_eq!(unread_arguments(&argv), vec!["--verbose".to_string(), "--dtod2".to_string(), "x".to_string()]);
}
