//! What makes two runs the same series: the system (its hosts' names
//! sorted, or a label given with `--system`), the benchmark, backend,
//! memory, datatype, process count, placement policy, MPI library and
//! version, and the options that change the numbers. Options that only
//! change how long a run takes or where its files go (iterations,
//! warm-up, sizes, time limits, output formats) are not part of it: a run
//! with more iterations measures the same thing more often.

use serde_json::{Map, Value};

/// Options of a run record that change what one size measures, so runs
/// that differ in one are different series: the window (`-W`) and RMA
/// window kind (`-w`), `-b single|multiple`, `-V`, the stopping precision
/// (`--precision`: a run stopped at 1% is not one stopped at 5%), pairs,
/// in-place collectives, the root, synchronisation, the accelerator API
/// (`-d`), buffer locations, the neighbourhood topology, test calls of
/// non-blocking benchmarks, data validation (`-c`, which touches every
/// buffer between iterations), for `commbench pairs`, the pairing
/// scheme and its seed, and for nvbandwidth, the statistic of its samples
/// (median or mean) and whether host memory sat by the GPU's NUMA node.
pub(crate) const NUMBER_OPTIONS: &[&str] = &[
    "accel",
    "buffer_locations",
    "buffers",
    "in_place",
    "neighborhood",
    "numa_affinity",
    "pairs",
    "precision",
    "root",
    "scheme",
    "seed",
    "statistic",
    "sync",
    "test_calls",
    "validation",
    "vary_window",
    "win",
    "window",
];

/// The options object of a key: the [`NUMBER_OPTIONS`] a record has
/// (other than null), in name order, as compact JSON (`{}` without a
/// record).
pub(crate) fn options_text(options: Option<&Map<String, Value>>) -> String {
    let mut kept = Map::new();
    let mut names: Vec<&str> = NUMBER_OPTIONS.to_vec();
    names.sort_unstable();
    for name in names {
        // A null is an option not given: the same as none.
        if let Some(v) = options.and_then(|o| o.get(name)).filter(|v| !v.is_null()) {
            kept.insert(name.to_string(), v.clone());
        }
    }
    Value::Object(kept).to_string()
}

/// One series' key, as stored in the `runs` table.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct SeriesKey {
    pub system: String,
    pub benchmark: String,
    pub backend: String,
    /// `host`, `device`, `managed` or `unknown`.
    pub memory: String,
    pub datatype: String,
    /// 0 where no output said.
    pub np: u64,
    /// The record's `options.placement.policy`, `none` without one.
    pub placement: String,
    /// `Open MPI v4.1.4`; `unknown` without a record.
    pub mpi_library: String,
    /// See [`options_text`].
    pub options: String,
}

impl SeriesKey {
    /// The key as one string (the `series_key` column): its fields joined
    /// by `|`, the process count as `np=N`.
    pub fn text(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}|np={}|{}|{}|{}",
            self.system,
            self.benchmark,
            self.backend,
            self.memory,
            self.datatype,
            self.np,
            self.placement,
            self.mpi_library,
            self.options
        )
    }

    /// Reads the key's columns from `row` starting at column `at`, in the
    /// order system, benchmark, backend, memory, datatype, np, placement,
    /// mpi_library, options.
    pub(crate) fn from_row(row: &rusqlite::Row, at: usize) -> rusqlite::Result<SeriesKey> {
        Ok(SeriesKey {
            system: row.get(at)?,
            benchmark: row.get(at + 1)?,
            backend: row.get(at + 2)?,
            memory: row.get(at + 3)?,
            datatype: row.get(at + 4)?,
            np: row.get::<_, i64>(at + 5)?.max(0) as u64,
            placement: row.get(at + 6)?,
            mpi_library: row.get(at + 7)?,
            options: row.get(at + 8)?,
        })
    }

    /// A short description for a line: `osu_bw MPI_CHAR np=2 on n1,n2`.
    pub fn short(&self) -> String {
        format!("{} {} np={} on {}", self.benchmark, self.datatype, self.np, self.system)
    }
}

/// The system of a run: `label` when given, else its hosts' names sorted
/// and joined by commas, `unknown` where no record named them.
pub fn system(label: Option<&str>, hosts: &[String]) -> String {
    if let Some(l) = label {
        return l.to_string();
    }
    let mut h: Vec<&str> = hosts.iter().map(String::as_str).collect();
    h.sort_unstable();
    h.dedup();
    if h.is_empty() {
        "unknown".into()
    } else {
        h.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_that_change_the_numbers_are_kept_in_name_order() {
        let o = serde_json::json!({"window": 64, "iterations": 1000, "warmup": 10, "buffers": "multiple",
            "precision": null, "results": {"dir": "x"}, "min_size": 1});
        assert_eq!(options_text(o.as_object()), r#"{"buffers":"multiple","window":64}"#);
        let fewer = serde_json::json!({"window": 64, "iterations": 5, "buffers": "multiple"});
        assert_eq!(options_text(fewer.as_object()), options_text(o.as_object()), "iterations are not in the key");
        let other = serde_json::json!({"window": 32, "buffers": "multiple", "precision": null});
        assert_ne!(options_text(other.as_object()), options_text(o.as_object()));
        assert_eq!(options_text(None), "{}");
    }

    #[test]
    fn system_is_the_sorted_hosts_or_the_label() {
        let hosts = vec!["n2".to_string(), "n1".to_string(), "n2".to_string()];
        assert_eq!(system(None, &hosts), "n1,n2");
        assert_eq!(system(Some("cluster-a"), &hosts), "cluster-a");
        assert_eq!(system(None, &[]), "unknown");
    }
}
