//! The outputs of one benchmark run, built from its options: OSU's table
//! on stdout always, the CSV file when results are written. A new output
//! format is one more [`Sink`] file and one more line here.

use std::fs::File;
use std::io;
use std::path::PathBuf;

use thiserror::Error;

use super::csv::CsvSink;
use super::osu::{OsuTable, TableLayout};
use super::{RunContext, Sink};
use crate::bench::spec::BenchSpec;
use crate::cli::Options;

#[derive(Debug, Error)]
pub enum SinkError {
    #[error("cannot write to stdout: {0}")]
    Stdout(io::Error),
    #[error("cannot write {}: {source}", path.display())]
    File { path: PathBuf, source: io::Error },
}

/// Every output of a run, in the order rows reach them.
pub struct Sinks {
    list: Vec<Box<dyn Sink>>,
}

impl Sinks {
    /// These outputs, in this order.
    pub fn new(list: Vec<Box<dyn Sink>>) -> Sinks {
        Sinks { list }
    }

    /// The outputs rank 0 writes for `spec` run with `opts` over `pairs`
    /// pairs; `csv` is the results file (None: no files). Each output has
    /// written its preamble (CSV header, OSU title lines) on return.
    pub fn for_run(
        spec: &'static BenchSpec,
        opts: &Options,
        pairs: usize,
        ctx: RunContext,
        csv: Option<(File, PathBuf)>,
    ) -> Result<Sinks, SinkError> {
        let mut list: Vec<Box<dyn Sink>> = Vec::new();
        if let Some((file, path)) = csv {
            let sink = CsvSink::new(file, ctx).map_err(|source| SinkError::File { path, source })?;
            list.push(Box::new(sink));
        }
        let layout = TableLayout {
            validation: opts.validation.is_some(),
            tails: opts.tails.clone().unwrap_or_default(),
            print_rate: opts.print_rate,
            vary_window: opts.vary_window,
            window: opts.window,
            pairs,
            full: opts.full,
        };
        let mut table = OsuTable::new(io::stdout(), spec, layout);
        table.preamble().map_err(SinkError::Stdout)?;
        // stdout first, as people see it.
        list.insert(0, Box::new(table));
        Ok(Sinks { list })
    }

    /// Sends something to every output in turn.
    pub fn each(&mut self, mut f: impl FnMut(&mut dyn Sink) -> io::Result<()>) -> io::Result<()> {
        for s in &mut self.list {
            f(s.as_mut())?;
        }
        Ok(())
    }
}
