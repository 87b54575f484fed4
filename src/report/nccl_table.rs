//! `--format nccl-tests`: the nccl-tests table on stdout as a [`Sink`]. Rows
//! come in pairs per size (out-of-place, then in-place, as the measurement
//! runs them) and are printed as one line; the footer sums every cell. The
//! layout itself is [`super::nccl_tests`]'s (pure functions); this file
//! turns OSU-shaped rows and the run's options into its inputs.

use std::io::{self, Write};

use super::nccl_json::{self, NcclJson};
use super::nccl_tests::{self as nt, Cell, Collective, Device, RowLabels, Settings, Step, Totals};
use super::{Row, Sink};
use crate::datatype::Datatype;
use crate::options::{Options, RootRank, Sweep};
use crate::spec::{BenchSpec, CollectiveCall};

/// One rank's device line, as it travels to rank 0: tab-separated pid,
/// host, CUDA index, PCI bus id (`0000:1b:00.0`) and GPU name.
pub(crate) fn device_text(pid: u32, host: &str, index: usize, pci_bus_id: &str, name: &str) -> String {
    let clean = |s: &str| s.replace(['\t', '\n'], " ");
    format!("{pid}\t{}\t{index}\t{}\t{}", clean(host), clean(pci_bus_id), clean(name))
}

/// The device line of rank `rank` from [`device_text`]; a PCI bus id that
/// does not parse shows as 0000:00:00.
pub(crate) fn parse_device(rank: usize, text: &str) -> Device {
    let f: Vec<&str> = text.splitn(5, '\t').collect();
    let field = |i: usize| f.get(i).copied().unwrap_or("");
    let (pci_domain, pci_bus, pci_device) = parse_bus_id(field(3)).unwrap_or((0, 0, 0));
    Device {
        rank,
        group: 0,
        pid: field(0).parse().unwrap_or(0),
        host: field(1).to_string(),
        device: field(2).parse().unwrap_or(0),
        pci_domain,
        pci_bus,
        pci_device,
        name: field(4).to_string(),
    }
}

/// `0000:1b:00.0` → (domain, bus, device).
fn parse_bus_id(id: &str) -> Option<(u32, u32, u32)> {
    let mut parts = id.split(':');
    let domain = u32::from_str_radix(parts.next()?, 16).ok()?;
    let bus = u32::from_str_radix(parts.next()?, 16).ok()?;
    let device = parts.next()?.split('.').next()?;
    Some((domain, bus, u32::from_str_radix(device, 16).ok()?))
}

/// The table on `out` (stdout on rank 0).
pub(crate) struct NcclTestsTable<W: Write> {
    out: W,
    coll: Collective,
    program: &'static str,
    np: usize,
    root: usize,
    /// The `redop` column's operation (where the collective reduces).
    reduction: crate::datatype::Reduction,
    datatype: Datatype,
    settings: Settings,
    devices: Vec<Device>,
    min_busbw: Option<f64>,
    totals: Totals,
    /// The loaded NCCL's version code, for the version line.
    library: Option<i32>,
    /// The sweep's largest size, where the GPUs' memory lowered it.
    lowered_max: Option<u64>,
    /// `-S 1`: each row ends with the local time.
    timestamps: bool,
    /// `-C 1`: the time columns show rank 0's host time up to the last
    /// completion (the bandwidths stay those of the time).
    cputime: bool,
    /// `-J FILE.json`: where nccl-tests' JSON document goes, then the
    /// document once open.
    json_path: Option<std::path::PathBuf>,
    json: Option<NcclJson<std::io::BufWriter<std::fs::File>>>,
    /// `-M 1`: the GPUs' memory the run took, for the footer.
    memory: Option<crate::report::MemoryUsage>,
    /// alltoallv's pattern (its size column), and whether each cell is
    /// preceded by its summary (`NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY`).
    traffic: Option<crate::traffic::Traffic>,
    traffic_summary: bool,
}

impl<W: Write> NcclTestsTable<W> {
    /// None for a benchmark nccl-tests has no program for (options refuse
    /// the format there). `max_size` is the plan's largest size.
    pub fn new(
        out: W,
        spec: &BenchSpec,
        call: Option<CollectiveCall>,
        opts: &Options,
        max_size: usize,
        np: usize,
        devices: Vec<Device>,
    ) -> Option<Self> {
        let coll = call.and_then(Collective::of_call)?;
        let d = &spec.defaults;
        let osu = |size: usize| coll.osu_bytes(size, np) as u64;
        let sweep = opts.sweep.unwrap_or(Sweep {
            min: osu(opts.min_size),
            max: osu(max_size),
            step: Step::Factor(2),
            cycles: 1,
        });
        let settings = Settings {
            threads: opts.threads_per_process,
            gpus: opts.gpus_per_thread,
            min_bytes: sweep.min,
            max_bytes: sweep.max,
            step: sweep.step,
            warmup_iters: opts.warmup.unwrap_or(d.small_warmup),
            iters: opts.iterations.unwrap_or(d.small_iterations),
            agg_iters: opts.aggregate.max(1),
            validation: if opts.validation.is_some() { opts.check_rounds } else { 0 },
            graph: opts.graph_launches,
            parallel_init: opts.parallel_init,
            unalign: opts.unalign,
            blocking: opts.blocking,
            per_iteration: opts.iteration_events,
        };
        let root = match opts.root {
            RootRank::Fixed(r) => r,
            RootRank::Rotate => 0,
        };
        Some(NcclTestsTable {
            out,
            coll,
            program: coll.program(),
            np,
            root,
            datatype: opts.datatypes.first().copied().unwrap_or(Datatype::Float),
            reduction: opts.reduction,
            settings,
            devices,
            min_busbw: opts.min_busbw,
            totals: Totals::default(),
            library: None,
            lowered_max: None,
            timestamps: opts.timestamps,
            cputime: opts.cputime,
            json_path: opts.json_output.clone(),
            json: None,
            memory: None,
            traffic: opts.traffic.clone(),
            traffic_summary: opts.traffic_summary,
        })
    }

    /// The table of a run with NCCL `library` (its version code) loaded:
    /// the preamble starts with nccl-tests' version line.
    pub fn with_library(self, library: Option<i32>) -> Self {
        NcclTestsTable { library, ..self }
    }

    /// The table of a run whose sweep the GPUs' memory cut at `lowered`
    /// bytes: the preamble's maxBytes is the one asked for, and a line
    /// after the devices says what runs.
    pub fn with_lowered_max(self, lowered_max: Option<u64>) -> Self {
        NcclTestsTable { lowered_max, ..self }
    }

    #[cfg(test)]
    pub fn into_inner(self) -> W {
        self.out
    }

    /// The lines before the first row: program, options, devices, header.
    pub fn preamble(&mut self) -> io::Result<()> {
        // `-J`: the file first, as nccl-tests opens it before anything
        // else, and says where (or that it cannot).
        let mut lines = Vec::new();
        if let Some(path) = self.json_path.take() {
            let (line, json) = nccl_json::open(&path);
            lines.push(line);
            self.json = json;
        }
        lines.extend(self.library.map(nt::version_line));
        lines.extend(nt::preamble(self.program, &self.settings));
        lines.extend(nt::devices(&self.devices));
        lines.extend(self.lowered_max.map(nt::lowered_max_lines).into_iter().flatten());
        lines.extend(nt::header(self.timestamps, self.cputime, self.settings.per_iteration.is_some()));
        if self.coll == Collective::HyperCube && !self.np.is_power_of_two() {
            lines.push(nt::skipped_line(self.np));
        }
        self.write_lines(&lines)?;
        if let Some(json) = self.json.as_mut() {
            let env: Vec<String> =
                std::env::vars_os().map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy())).collect();
            let start = crate::report::time::local_now(nt::TIMESTAMP_FORMAT);
            let version = self.library.unwrap_or(0);
            let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
            json.head(&start, &args, &env, version, &self.settings, &self.devices)?;
        }
        Ok(())
    }

    fn write_lines(&mut self, lines: &[String]) -> io::Result<()> {
        for l in lines {
            writeln!(self.out, "{l}")?;
        }
        self.out.flush()
    }

    /// The time (us) a row's bandwidths come from: the one `-a` picked
    /// (the average where the kernel did not pick).
    fn time_us(&self, row: &Row) -> f64 {
        row.time_us.or(row.avg_lat_us).unwrap_or(f64::NAN)
    }

    fn cell(&self, row: &Row) -> Cell {
        let time_us = match (self.cputime, row.issue_us) {
            (true, Some(issue)) => issue,
            _ => self.time_us(row),
        };
        let (algbw, busbw) = row.algbw_busbw.unwrap_or((f64::NAN, f64::NAN));
        Cell { time_us, algbw, busbw, wrong: row.wrong_elements }
    }
}

impl<W: Write> Sink for NcclTestsTable<W> {
    fn begin_datatype(&mut self, dt: Datatype) -> io::Result<()> {
        self.datatype = dt;
        Ok(())
    }

    fn begin_operation(&mut self, op: crate::datatype::Reduction, root: Option<usize>) -> io::Result<()> {
        self.reduction = op;
        if let Some(r) = root {
            self.root = r;
        }
        Ok(())
    }

    /// One line per size: its out-of-place and in-place cells (a size cut
    /// short has no line).
    fn point(&mut self, rows: &[Row]) -> io::Result<()> {
        let [out, inp] = rows else {
            return match rows {
                [r] if r.in_place == Some(false) => Ok(()),
                _ => Err(io::Error::other(format!(
                    "nccl-tests' table takes a size's out-of-place and in-place rows together, got {}",
                    rows.len()
                ))),
            };
        };
        let (size, out_of_place, cell) = (out.size, self.cell(out), self.cell(inp));
        let (bytes, count) = self.coll.row_columns(size, self.datatype.size(), self.np, self.traffic.as_ref());
        let labels = RowLabels {
            size: bytes,
            count,
            type_name: self.datatype.nccl_name(),
            redop: self.coll.redop_column(self.reduction.name()),
            root: self.coll.root_column(self.root),
        };
        self.totals.add(&out_of_place);
        self.totals.add(&cell);
        if let Some(json) = self.json.as_mut() {
            let per_iteration = [out.per_iteration.as_ref(), inp.per_iteration.as_ref()];
            json.result(&labels, &out_of_place, &cell, per_iteration, self.settings.iters)?;
        }
        // -I 1: each cell's iteration summary after it (N/A where a cell
        // has no device times).
        let after = |r: &Row| match (self.settings.per_iteration, &r.per_iteration) {
            (None, _) => String::new(),
            (Some(_), Some(p)) => nt::iteration_columns(&p.stats()),
            (Some(_), None) => format!("{:>9}", "N/A").repeat(4),
        };
        // alltoallv's summary, where nccl-tests prints it: as each cell's
        // bandwidths are worked out, after the labels (on their line) and
        // after the first cell.
        let before = |r: &Row| match (&self.traffic, self.traffic_summary) {
            (Some(t), true) => {
                let lines = t.summary_lines(self.np, (size * self.np) as u64, self.time_us(r) / 1e6);
                lines.iter().map(|l| format!("{l}\n")).collect()
            }
            _ => String::new(),
        };
        let mut line =
            nt::row_around(&labels, [(&before(out), &out_of_place, &after(out)), (&before(inp), &cell, &after(inp))]);
        if self.timestamps {
            line.push_str(&nt::timestamp_cell(&crate::report::time::local_now(nt::TIMESTAMP_FORMAT)));
        }
        self.write_lines(&[line])
    }

    fn memory_usage(&mut self, usage: &crate::report::MemoryUsage) -> io::Result<()> {
        self.memory = Some(*usage);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let below = self.min_busbw.map(|min| self.totals.avg_busbw() < min);
        let mut lines = nt::footer(&self.totals, self.program, below);
        // -M 1: after the line that says the test concluded.
        if let Some(usage) = &self.memory {
            let at =
                lines.iter().position(|l| l.starts_with("# Collective test concluded")).map_or(lines.len(), |i| i + 1);
            lines.insert(at, nt::memory_line(usage));
        }
        self.write_lines(&lines)?;
        if let Some(json) = self.json.as_mut() {
            // No NCCL error is left to report when the table ends (one
            // ends the job first): NCCL's last error is the empty text.
            let end = crate::report::time::local_now(nt::TIMESTAMP_FORMAT);
            json.finish(&self.totals, below, "", &end)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The collective a benchmark times, as the plan gives it.
    fn call(spec: &BenchSpec) -> Option<CollectiveCall> {
        crate::bench::registry::lookup(spec.name).unwrap().collective
    }
    use crate::cli::test_options;

    #[test]
    fn device_lines_travel_whole() {
        let text = device_text(384590, "h100-8way", 3, "0000:1b:00.0", "NVIDIA H100 80GB HBM3");
        let d = parse_device(5, &text);
        assert_eq!((d.rank, d.pid, d.host.as_str(), d.device), (5, 384590, "h100-8way", 3));
        assert_eq!((d.pci_domain, d.pci_bus, d.pci_device, d.name.as_str()), (0, 0x1b, 0, "NVIDIA H100 80GB HBM3"));
        let odd = parse_device(0, &device_text(1, "a\tb", 0, "junk", "x"));
        assert_eq!((odd.host.as_str(), odd.pci_bus), ("a b", 0));
    }

    fn row(size: usize, in_place: bool, time_us: f64, bw: (f64, f64), wrong: Option<u64>) -> Row {
        Row {
            size,
            avg_lat_us: Some(time_us),
            algbw_busbw: Some(bw),
            wrong_elements: wrong,
            in_place: Some(in_place),
            ..Row::default()
        }
    }

    /// An all-to-all on 8 ranks: OSU's size is one rank's block, nccl-tests'
    /// the whole buffer, and its count one rank's share (the H100 seed ran
    /// 8 one-rank processes, where the share is the whole); in place is
    /// unchecked.
    #[test]
    fn alltoall_rows_pair_up_and_the_footer_averages_every_cell() {
        let spec = &crate::bench::collective::alltoall::SPEC;
        let opts = test_options(
            spec,
            &["--backend", "nccl", "--format", "nccl-tests", "-m", "4194304:4194304", "-i", "20", "-x", "5"],
        );
        let devices =
            vec![parse_device(0, &device_text(384590, "h100-8way", 0, "0000:1b:00.0", "NVIDIA H100 80GB HBM3"))];
        let mut t = NcclTestsTable::new(Vec::new(), spec, call(spec), &opts, opts.max_size, 8, devices)
            .expect("alltoall has a program");
        t.preamble().unwrap();
        t.begin_datatype(Datatype::Float).unwrap();
        t.point(&[
            row(4194304, false, 38.80, (864.90, 756.79), Some(0)),
            row(4194304, true, 8.74, (3837.40, 3357.73), None),
        ])
        .unwrap();
        t.end_datatype().unwrap();
        t.finish().unwrap();
        let text = String::from_utf8(t.into_inner()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# Collective test starting: alltoall_perf");
        assert!(lines[1].starts_with("# nThread 1 nGpus 1 minBytes 33554432 maxBytes 33554432 step: 2(factor) "));
        assert!(lines[1].contains(" warmup iters: 5 iters: 20 agg iters: 1 validation: 1 "), "{}", lines[1]);
        assert_eq!(lines[3], "# Using devices");
        assert!(lines[4].contains("device  0 [0000:1b:00] NVIDIA H100 80GB HBM3"), "{}", lines[4]);
        let data = lines.iter().find(|l| !l.starts_with('#')).unwrap();
        assert_eq!(
            *data,
            "    33554432       1048576     float    none      -1    38.80  864.90  756.79       0     8.74  3837.4  \
             3357.7    N/A"
        );
        let avg = (756.79 + 3357.73) / 2.0;
        assert_eq!(lines[lines.len() - 5], format!("# Avg bus bandwidth    : {} ", nt::c_general(avg)));
        assert_eq!(lines[lines.len() - 6], "# Out of bounds values : 0 OK");
    }

    #[test]
    fn a_minimum_shows_in_the_footer() {
        let spec = &crate::bench::collective::allreduce::SPEC;
        let opts = test_options(spec, &["--backend", "nccl", "--format", "nccl-tests", "--min-busbw", "100"]);
        let mut t = NcclTestsTable::new(Vec::new(), spec, call(spec), &opts, opts.max_size, 2, Vec::new()).unwrap();
        t.point(&[row(1024, false, 10.0, (0.1, 0.1), Some(0)), row(1024, true, 10.0, (0.1, 0.1), Some(2))]).unwrap();
        t.finish().unwrap();
        let text = String::from_utf8(t.into_inner()).unwrap();
        assert!(text.contains("# Out of bounds values : 1 FAILED\n"), "{text}");
        assert!(text.contains("# Avg bus bandwidth    : 0.1 FAILED\n"), "{text}");
        assert!(text.contains("       256     float     sum      -1 "), "{text}");
    }

    #[test]
    fn an_in_place_row_needs_its_pair() {
        let spec = &crate::bench::collective::allreduce::SPEC;
        let opts = test_options(spec, &["--backend", "nccl", "--format", "nccl-tests"]);
        let mut t = NcclTestsTable::new(Vec::new(), spec, call(spec), &opts, opts.max_size, 2, Vec::new()).unwrap();
        assert!(t.point(&[row(8, true, 1.0, (1.0, 1.0), None)]).is_err());
    }

    /// The size and count columns of every NCCL collective at np 1, 2, 3 and 8,
    /// against nccl-tests' own rule: from the count its NCCL call takes
    /// (`c` elements of `e` bytes; one rank's share for allgather,
    /// reduce-scatter, alltoall, gather and scatter), `size` is the larger
    /// of one rank's send and receive buffers and `count` is `c`.
    #[test]
    fn size_and_count_columns_follow_nccl_tests_at_every_np() {
        use crate::options::Backend;
        let specs: Vec<_> = crate::bench::registry::BENCHMARKS
            .iter()
            .filter(|e| e.is_collective() && e.backends().contains(&Backend::Nccl))
            .map(|e| e.spec)
            .collect();
        assert_eq!(specs.len(), 8, "every NCCL collective");
        for spec in specs {
            for np in [1, 2, 3, 8] {
                for (dt, c) in [(Datatype::Float, 1usize), (Datatype::Float, 262144), (Datatype::Char, 48)] {
                    let e = dt.size();
                    let coll = call(spec).and_then(Collective::of_call).unwrap();
                    // (send, receive) elements of one rank, and the OSU
                    // message size that makes the NCCL call take `c`.
                    let (send, recv, osu_size) = match coll {
                        Collective::AllReduce | Collective::Broadcast | Collective::Reduce => (c, c, c * e),
                        Collective::AllGather | Collective::Gather => (c, c * np, c * e),
                        Collective::Scatter => (c * np, c, c * e),
                        Collective::AllToAll => (c * np, c * np, c * e),
                        Collective::ReduceScatter => (c * np, c, c * np * e),
                        Collective::SendRecv | Collective::HyperCube | Collective::AllToAllV => {
                            unreachable!("no OSU benchmark prints sendrecv_perf, hypercube_perf or alltoallv_perf")
                        }
                    };
                    let opts = test_options(spec, &["--backend", "nccl", "--format", "nccl-tests"]);
                    let mut t = NcclTestsTable::new(Vec::new(), spec, call(spec), &opts, opts.max_size, np, Vec::new())
                        .unwrap();
                    t.begin_datatype(dt).unwrap();
                    t.point(&[
                        row(osu_size, false, 10.0, (1.0, 1.0), Some(0)),
                        row(osu_size, true, 10.0, (1.0, 1.0), Some(0)),
                    ])
                    .unwrap();
                    let text = String::from_utf8(t.into_inner()).unwrap();
                    let cols: Vec<&str> = text.lines().last().unwrap().split_whitespace().collect();
                    let want = [(send.max(recv) * e).to_string(), c.to_string()];
                    assert_eq!(cols[..2], want, "{} at np {np}, {c} x {dt:?}", spec.name);
                }
            }
        }
    }

    /// Every collective's bandwidth bytes are the table's size column.
    #[test]
    fn the_size_column_is_each_benchmark_s_algbw_bytes() {
        use crate::bench::{
            collective::allgather, collective::allreduce, collective::alltoall, collective::bcast, collective::gather,
            collective::reduce, collective::reduce_scatter, collective::scatter,
        };
        fn bytes<C: crate::bench::collective::Collective>(size: usize, np: usize) -> usize {
            C::new(np).bandwidth(size, np).expect("bandwidth").0 as usize
        }
        for np in [1, 2, 3, 8] {
            for size in [4, 1024, 1 << 20] {
                let of = |spec: &BenchSpec| call(spec).and_then(Collective::of_call).unwrap().osu_bytes(size, np);
                assert_eq!(of(&allreduce::SPEC), bytes::<allreduce::Allreduce>(size, np));
                assert_eq!(of(&allgather::SPEC), bytes::<allgather::Allgather>(size, np));
                assert_eq!(of(&alltoall::SPEC), bytes::<alltoall::Alltoall>(size, np));
                assert_eq!(of(&reduce_scatter::SPEC), bytes::<reduce_scatter::ReduceScatter>(size, np));
                assert_eq!(of(&bcast::SPEC), bytes::<bcast::Bcast>(size, np));
                assert_eq!(of(&reduce::SPEC), bytes::<reduce::Reduce>(size, np));
                assert_eq!(of(&gather::SPEC), bytes::<gather::Gather>(size, np));
                assert_eq!(of(&scatter::SPEC), bytes::<scatter::Scatter>(size, np));
            }
        }
        for no in [
            &crate::bench::collective::barrier::SPEC,
            &crate::bench::collective::allgatherv::SPEC,
            &crate::bench::nonblocking::iallreduce::SPEC,
        ] {
            assert!(call(no).and_then(Collective::of_call).is_none(), "{}", no.name);
        }
    }
}
