//! The outputs of one benchmark run, built from its layout
//! ([`super::RunLayout`]): the table `--format` puts on stdout (OSU's,
//! nccl-tests' or JSON Lines, [`super::stdout_sink`]) always, the CSV file
//! when results are written, and any sink pushed after (the efficiency
//! curve). A new stdout format is one more [`Sink`] file and its arm in
//! `stdout_sink`; nothing here changes.
//!
//! An output can be optional: results in the default place that nobody
//! asked for. When it fails, one warning line says which results are
//! missing and the run goes on with the others; the OSU table is never
//! lost to a file.

use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::rc::Rc;

use thiserror::Error;

use super::csv::CsvSink;
use super::nccl_tests::Device;
use super::safe_file::RowFile;
use super::{RunContext, Sink};

#[derive(Debug, Error)]
pub(crate) enum SinkError {
    #[error("cannot write to stdout: {0}")]
    Stdout(io::Error),
    #[error("cannot write {}: {source}", path.display())]
    File { path: PathBuf, source: io::Error },
}

/// Every output of a run, in the order rows reach them.
pub struct Sinks {
    list: Vec<Output>,
    /// Set when an optional output was dropped: what is missing and why.
    lost: Rc<RefCell<Option<String>>>,
}

struct Output {
    sink: Box<dyn Sink>,
    /// Set for an optional output: the warning's prefix when it fails
    /// (`osu_bw: warning: the CSV results/x.csv`).
    optional: Option<String>,
    /// What a required output's error names (`stdout`, `the CSV x.csv`).
    label: Option<String>,
}

impl Sinks {
    /// These outputs, in this order, each required.
    pub fn new(list: Vec<Box<dyn Sink>>) -> Sinks {
        Sinks {
            list: list.into_iter().map(|sink| Output { sink, optional: None, label: None }).collect(),
            lost: Rc::default(),
        }
    }

    /// The outputs rank 0 writes for the run laid out as `run`; `csv` is the results
    /// file (None: no files); `devices` every rank's GPU for nccl-tests'
    /// table. Each output has written its preamble (CSV header, title
    /// lines) on return.
    pub(crate) fn for_run(
        run: &super::RunLayout,
        ctx: RunContext,
        csv: Option<(File, PathBuf)>,
        devices: Vec<Device>,
    ) -> Result<Sinks, SinkError> {
        let (spec, opts) = (run.spec, run.opts);
        let mut list: Vec<Output> = Vec::new();
        let optional = !opts.results_chosen;
        let stdout_ctx = ctx.clone();
        if let Some((file, path)) = csv {
            match RowFile::new(file).and_then(|f| CsvSink::new(f, ctx)) {
                Ok(sink) => list.push(Output {
                    sink: Box::new(sink),
                    optional: optional.then(|| format!("{}: warning: the CSV {}", spec.name, path.display())),
                    label: Some(format!("the CSV {}", path.display())),
                }),
                Err(source) if optional => {
                    // An empty CSV would read as a run with no rows.
                    let _ = std::fs::remove_file(&path);
                    crate::say!(
                        "{}: warning: no CSV for this run: cannot write {}: {source} (the OSU table goes on)",
                        spec.name,
                        path.display()
                    )
                }
                Err(source) => return Err(SinkError::File { path, source }),
            }
        }
        let stdout = super::stdout_sink(run, stdout_ctx, devices).map_err(SinkError::Stdout)?;
        // stdout first, as people see it.
        list.insert(0, Output { sink: stdout, optional: None, label: Some("stdout".into()) });
        Ok(Sinks { list, lost: Rc::default() })
    }

    /// One more required output after the others.
    pub fn push(&mut self, sink: Box<dyn Sink>) {
        self.list.push(Output { sink, optional: None, label: None });
    }

    /// What an optional output that was dropped is missing (None while
    /// every output is whole); shared, so it can be read while rows flow.
    pub fn lost(&self) -> Rc<RefCell<Option<String>>> {
        self.lost.clone()
    }

    /// Sends something to every output in turn. A required output's error
    /// is returned; an optional output that fails is dropped with one
    /// warning line, and the others go on.
    pub fn each(&mut self, mut f: impl FnMut(&mut dyn Sink) -> io::Result<()>) -> io::Result<()> {
        let mut i = 0;
        while i < self.list.len() {
            let out = &mut self.list[i];
            match (f(out.sink.as_mut()), &out.optional) {
                (Ok(()), _) => i += 1,
                (Err(e), None) => {
                    return Err(match &out.label {
                        Some(label) => io::Error::new(e.kind(), format!("cannot write {label}: {e}")),
                        None => e,
                    })
                }
                (Err(e), Some(what)) => {
                    crate::say!("{what} is incomplete: {e}; the OSU table goes on");
                    self.lost.borrow_mut().get_or_insert_with(|| e.to_string());
                    self.list.remove(i);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Row;
    use std::cell::Cell;
    use std::rc::Rc;

    /// Counts rows; fails from row `fail_from` on.
    struct Flaky {
        rows: Rc<Cell<usize>>,
        fail_from: usize,
    }

    impl Sink for Flaky {
        fn point(&mut self, _rows: &[Row]) -> io::Result<()> {
            if self.rows.get() + 1 >= self.fail_from {
                return Err(io::Error::other("No space left on device"));
            }
            self.rows.set(self.rows.get() + 1);
            Ok(())
        }
    }

    fn flaky(fail_from: usize) -> (Box<dyn Sink>, Rc<Cell<usize>>) {
        let rows = Rc::new(Cell::new(0));
        (Box::new(Flaky { rows: rows.clone(), fail_from }), rows)
    }

    fn send_rows(sinks: &mut Sinks, n: usize) -> io::Result<()> {
        let row = Row::default();
        (0..n).try_for_each(|_| sinks.each(|s| s.row(&row)))
    }

    #[test]
    fn an_optional_output_that_fails_is_dropped_and_the_rest_go_on() {
        let (table, table_rows) = flaky(usize::MAX);
        let (csv, csv_rows) = flaky(3);
        let mut sinks = Sinks {
            lost: Rc::default(),
            list: vec![
                Output { sink: table, optional: None, label: None },
                Output { sink: csv, optional: Some("osu_bw: warning: the CSV x.csv".into()), label: None },
            ],
        };
        send_rows(&mut sinks, 5).expect("the table goes on");
        assert_eq!((table_rows.get(), csv_rows.get(), sinks.list.len()), (5, 2, 1));
        assert_eq!(sinks.lost().borrow().as_deref(), Some("No space left on device"));
    }

    #[test]
    fn a_required_output_that_fails_ends_the_run() {
        let (table, _) = flaky(usize::MAX);
        let (csv, csv_rows) = flaky(2);
        let mut sinks = Sinks::new(vec![table, csv]);
        let err = send_rows(&mut sinks, 5).unwrap_err();
        assert_eq!((err.to_string().as_str(), csv_rows.get()), ("No space left on device", 1));
    }
}
