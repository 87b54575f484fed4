//! What the compared runs measured besides their numbers: where the
//! buffers were, the datatypes, the process counts and the options. A
//! device-memory reference against a host-memory run (or the reverse) is a
//! mismatch the caller refuses unless told otherwise; the other differences
//! are warnings. Only what both sides say is compared: an output that does
//! not say is not taken to agree or to differ.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::model::Table;

/// Options of a commbench run record that do not change how one size is
/// measured (where results go, the watchdog, the size range: sizes only
/// one side has are already reported) or that other checks cover.
const OPTIONS_NOT_COMPARED: &[&str] =
    &["results", "timeout_s", "min_size", "max_size", "datatypes", "window_given", "memory"];

type Key = (String, String);

/// What one table says about a field, as text to compare and print.
type Field<'a> = &'a dyn Fn(&Table) -> Option<String>;

/// The (benchmark, datatype) groups in both the reference and the runs, in
/// reference order, with each side's tables: grouped once, in one pass
/// over each side.
fn shared<'a>(reference: &'a [Table], runs: &'a [Table]) -> Vec<(Key, Vec<&'a Table>, Vec<&'a Table>)> {
    let (keys, mut refs) = super::judge::grouped(reference);
    let (_, mut meas) = super::judge::grouped(runs);
    keys.into_iter()
        .filter_map(|k| {
            let m = meas.remove(&k)?;
            let r = refs.remove(&k).unwrap_or_default();
            Some((k, r, m))
        })
        .collect()
}

fn list<T: ToString>(values: impl IntoIterator<Item = T>) -> String {
    values.into_iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
}

/// The name OSU's congestion output is read under: its title is
/// osu_bw's and nothing in it says fan-in or fan-out.
pub(crate) const FAN_UNNAMED: &str = "osu_bw_fan";
const FAN_NAMED: [&str; 2] = [crate::bench::pt2pt::bw_fan_in::SPEC.name, crate::bench::pt2pt::bw_fan_out::SPEC.name];

/// Gives OSU's unnamed congestion tables (`osu_bw_fan`) the name the other
/// side uses when that side ran exactly one of osu_bw_fan_in and
/// osu_bw_fan_out (our CSV and run record always say which), so that the
/// two are compared; returns a note for each side renamed. With both or
/// neither on the other side the tables keep their name and are reported
/// as unmatched.
pub(crate) fn name_fan_tables(reference: &mut [Table], runs: &mut [Table]) -> Vec<String> {
    let named = |ts: &[Table]| -> Vec<&'static str> {
        FAN_NAMED.into_iter().filter(|n| ts.iter().any(|t| t.benchmark == *n)).collect()
    };
    let mut notes = Vec::new();
    let (in_ref, in_runs) = (named(reference), named(runs));
    for (side, tables, other) in [("reference's", reference, in_runs), ("runs'", runs, in_ref)] {
        let [name] = other[..] else { continue };
        let mut renamed = 0;
        for t in tables.iter_mut().filter(|t| t.benchmark == FAN_UNNAMED) {
            t.benchmark = name.to_string();
            renamed += 1;
        }
        if renamed > 0 {
            notes.push(format!(
                "the {side} OSU congestion output (which does not say fan-in or fan-out) is compared as {name}, \
                 the one the other side ran"
            ));
        }
    }
    notes
}

/// One line per compared (benchmark, datatype) whose reference and runs
/// were on different memory (host, device, managed), naming what says so.
pub(crate) fn memory_mismatches(reference: &[Table], runs: &[Table]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, refs, meas) in shared(reference, runs) {
        let Some(r) = refs.iter().find_map(|t| t.memory.as_ref().map(|m| (m, *t))) else { continue };
        let other = meas.iter().find_map(|t| t.memory.as_ref().filter(|m| m.memory != r.0.memory).map(|m| (m, *t)));
        if let Some((m, t)) = other {
            out.push(format!(
                "{} {}: the reference {} is on {} ({}) and the run {} on {} ({})",
                k.0,
                k.1,
                r.1.origin(),
                r.0.memory.name(),
                r.0.from,
                t.origin(),
                m.memory.name(),
                m.from
            ));
        }
    }
    out
}

/// Values that differ between the two sides, where both have some.
fn differ<T: Ord + Clone>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> bool {
    !a.is_empty() && !b.is_empty() && a != b
}

/// The warnings about differences that make the numbers less comparable:
/// datatypes per benchmark, process counts, pairs, window, iterations per
/// size, and the options of commbench run records.
pub fn warnings(reference: &[Table], runs: &[Table]) -> Vec<String> {
    let mut out = Vec::new();
    // Datatypes: per benchmark, where both name theirs.
    fn named(ts: &[Table]) -> (Vec<&str>, HashMap<&str, BTreeSet<String>>) {
        let mut order: Vec<&str> = Vec::new();
        let mut named: HashMap<&str, BTreeSet<String>> = HashMap::new();
        for t in ts {
            let set = named.entry(&t.benchmark).or_insert_with_key(|b| {
                order.push(b);
                BTreeSet::new()
            });
            set.extend(t.datatype.clone());
        }
        (order, named)
    }
    let ((benches, ref_named), (_, run_named)) = (named(reference), named(runs));
    for b in benches {
        let Some(m) = run_named.get(b) else { continue };
        let r = &ref_named[b];
        if differ(r, m) {
            out.push(format!("{b}: datatypes differ: the reference has {}, the runs {}", list(r), list(m)));
        }
    }
    for (k, refs, meas) in shared(reference, runs) {
        let name = format!("{} {}", k.0, k.1);
        let set = |ts: &[&Table], f: Field| -> BTreeSet<String> { ts.iter().filter_map(|t| f(t)).collect() };
        let fields: [(&str, Field); 4] = [
            ("process counts", &|t| t.np.map(|n| n.to_string())),
            ("pairs", &|t| t.pairs.map(|n| n.to_string())),
            ("window sizes", &|t| t.window.clone()),
            ("memory", &|t| t.memory.as_ref().map(|m| m.memory.name().to_string())),
        ];
        for (what, f) in fields {
            let (r, m) = (set(&refs, f), set(&meas, f));
            // A memory mismatch between the sides is refused or already
            // said; this catches runs that disagree among themselves.
            if what == "memory" {
                if m.len() > 1 {
                    out.push(format!("{name}: the runs were on different memory: {}", list(&m)));
                }
                continue;
            }
            if differ(&r, &m) {
                out.push(format!("{name}: {what} differ: the reference has {}, the runs {}", list(&r), list(&m)));
            }
        }
        let records = refs.iter().all(|t| options(t).is_some()) && meas.iter().all(|t| options(t).is_some());
        if records {
            out.extend(option_warnings(&name, &refs, &meas));
        } else if let Some(w) = iteration_warning(&name, &refs, &meas) {
            out.push(w);
        }
    }
    out
}

fn options(t: &Table) -> Option<&serde_json::Map<String, serde_json::Value>> {
    t.run.as_ref()?.options.as_ref()
}

/// One line per option of the run records whose values differ.
fn option_warnings(name: &str, refs: &[&Table], meas: &[&Table]) -> Vec<String> {
    let mut keys: Vec<&String> = Vec::new();
    let mut seen: HashSet<&String> = HashSet::new();
    for t in refs.iter().chain(meas) {
        for k in options(t).into_iter().flat_map(|o| o.keys()) {
            if !OPTIONS_NOT_COMPARED.contains(&k.as_str()) && seen.insert(k) {
                keys.push(k);
            }
        }
    }
    let mut out = Vec::new();
    for k in keys {
        let values = |ts: &[&Table]| -> BTreeSet<String> {
            ts.iter().filter_map(|t| options(t)?.get(k.as_str()).map(|v| v.to_string())).collect()
        };
        let (r, m) = (values(refs), values(meas));
        if differ(&r, &m) {
            out.push(format!("{name}: option '{k}' differs: the reference has {}, the runs {}", list(&r), list(&m)));
        }
    }
    out
}

/// Iterations at the sizes both sides printed them for (OSU's `-f`
/// column, the CSV's), as one line with the first size that differs.
fn iteration_warning(name: &str, refs: &[&Table], meas: &[&Table]) -> Option<String> {
    // Each side's iteration counts by size, in one pass over its points.
    let by_size = |ts: &[&Table]| -> BTreeMap<u64, BTreeSet<u64>> {
        let mut by: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
        for p in ts.iter().flat_map(|t| &t.points) {
            by.entry(p.size).or_default().extend(p.iterations);
        }
        by
    };
    let (r, m) = (by_size(refs), by_size(meas));
    let none = BTreeSet::new();
    let differing: Vec<(u64, &BTreeSet<u64>, &BTreeSet<u64>)> =
        r.iter().map(|(s, rs)| (*s, rs, m.get(s).unwrap_or(&none))).filter(|(_, r, m)| differ(r, m)).collect();
    let (size, r, m) = differing.first()?;
    Some(format!(
        "{name}: iterations differ at {} size{} (at {size} bytes the reference has {}, the runs {})",
        differing.len(),
        if differing.len() == 1 { "" } else { "s" },
        list(*r),
        list(*m)
    ))
}

/// The one line that refuses a comparison across memory kinds.
pub fn refusal(mismatches: &[String]) -> Option<String> {
    let first = mismatches.first()?;
    let more = match mismatches.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Some(format!(
        "{first}{more}: results on different memory are not compared; --allow-memory-mismatch compares them anyway"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::model::{Memory, MemoryInfo, RunInfo, SizeRow};

    fn table(path: &str, dt: Option<&str>, memory: Option<Memory>) -> Table {
        Table {
            benchmark: "osu_bw".into(),
            datatype: dt.map(String::from),
            sized: true,
            points: vec![SizeRow { size: 8, bw_mbps: Some(1.0), iterations: Some(100), ..SizeRow::default() }],
            path: path.into(),
            run_label: path.into(),
            memory: memory.map(|memory| MemoryInfo { memory, from: "test".into(), weak: false }),
            ..Table::default()
        }
    }

    #[test]
    fn device_against_host_is_a_mismatch_naming_both_sides() {
        let r = [table("ref.txt", None, Some(Memory::Device))];
        let m = [table("run.csv", Some("MPI_CHAR"), Some(Memory::Host))];
        let mm = memory_mismatches(&r, &m);
        assert_eq!(mm.len(), 1);
        assert!(mm[0].contains("ref.txt is on device memory") && mm[0].contains("run.csv on host memory"), "{}", mm[0]);
        assert!(refusal(&mm).unwrap().contains("--allow-memory-mismatch"));
        // Same memory, or a side that does not say: nothing.
        assert!(memory_mismatches(&r, &[table("d.csv", None, Some(Memory::Device))]).is_empty());
        assert!(memory_mismatches(&r, &[table("u.csv", None, None)]).is_empty());
        assert!(refusal(&[]).is_none());
    }

    #[test]
    fn warnings_only_where_both_sides_say() {
        let mut r = table("ref.csv", Some("MPI_CHAR"), Some(Memory::Host));
        let mut m = table("run.csv", Some("MPI_CHAR"), Some(Memory::Host));
        assert!(warnings(&[r.clone()], &[m.clone()]).is_empty());
        r.np = Some(4);
        assert!(warnings(&[r.clone()], &[m.clone()]).is_empty(), "the run does not say");
        m.np = Some(8);
        m.points[0].iterations = Some(1000);
        let w = warnings(&[r.clone()], &[m.clone()]);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("process counts differ: the reference has 4, the runs 8"), "{w:?}");
        assert!(w[1].contains("iterations differ at 1 size (at 8 bytes the reference has 100, the runs 1000)"));

        // Run records: options compared instead of the iteration column.
        let opts = |i: u64, w: u64| {
            let v = serde_json::json!({"iterations": i, "window": w, "results": {"dir": "x"}, "timeout_s": 5});
            Some(RunInfo { options: v.as_object().cloned(), ..RunInfo::default() })
        };
        r.run = opts(100, 64);
        m.run = opts(1000, 64);
        m.np = Some(4);
        let w = warnings(&[r.clone()], &[m.clone()]);
        assert_eq!(w, ["osu_bw MPI_CHAR: option 'iterations' differs: the reference has 100, the runs 1000"]);

        // Datatypes per benchmark.
        let w = warnings(&[r], &[table("run.csv", Some("MPI_INT"), None)]);
        assert_eq!(w, ["osu_bw: datatypes differ: the reference has MPI_CHAR, the runs MPI_INT"]);
    }

    #[test]
    fn unnamed_fan_output_takes_the_other_sides_name() {
        let named = |b: &str| Table { benchmark: b.into(), ..table("x", None, None) };
        let mut r = vec![named(FAN_UNNAMED)];
        let mut m = vec![named("osu_bw_fan_in"), named("osu_latency")];
        let notes = name_fan_tables(&mut r, &mut m);
        assert_eq!(r[0].benchmark, "osu_bw_fan_in");
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("compared as osu_bw_fan_in"), "{}", notes[0]);
        // Either side can be the unnamed one.
        let mut r = vec![named("osu_bw_fan_out")];
        let mut m = vec![named(FAN_UNNAMED), named(FAN_UNNAMED)];
        assert_eq!(name_fan_tables(&mut r, &mut m).len(), 1);
        assert!(m.iter().all(|t| t.benchmark == "osu_bw_fan_out"));
        // Both directions on the other side: which one is unknown, no guess.
        let mut r = vec![named(FAN_UNNAMED)];
        let mut m = vec![named("osu_bw_fan_in"), named("osu_bw_fan_out")];
        assert!(name_fan_tables(&mut r, &mut m).is_empty());
        assert_eq!(r[0].benchmark, FAN_UNNAMED);
        // Neither: nothing changes.
        let mut m = vec![named("osu_bw")];
        assert!(name_fan_tables(&mut r, &mut m).is_empty());
    }
}
