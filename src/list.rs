//! `commbench list`: the benchmarks this build has, from the registry
//! (bench/registry.rs), in the suite's order.

use crate::bench::registry;
use crate::job::say;
use crate::spec::ProcRule;
use crate::text::aligned_columns;

/// `commbench list`: every benchmark's name, one per line (what scripts
/// loop over); `--long` adds what it measures, on how many ranks;
/// `--default` lists the suite's default set only.
pub fn list_main(args: &[String]) -> i32 {
    let (mut long, mut default) = (false, false);
    for a in args {
        match a.as_str() {
            "--long" | "-l" => long = true,
            "--default" => default = true,
            "-h" | "--help" => {
                print!(
                    "usage: commbench list [--long] [--default]\n\nThe benchmarks this build has, in the suite's \
                     order.\n  --long     what each measures, on how many ranks\n  --default  only the eight the \
                     suite runs by default\n"
                );
                return 0;
            }
            _ => {
                say(&format!("commbench list: unexpected argument '{a}' (use --long or --default)"));
                return 2;
            }
        }
    }
    let rows: Vec<[String; 3]> = registry::BENCHMARKS
        .iter()
        .filter(|e| !default || registry::DEFAULT_SET.contains(&e.name()))
        .map(|e| {
            let ranks = match e.spec.procs {
                ProcRule::ExactlyTwo => "2 ranks",
                ProcRule::Pairs => "pairs of ranks",
                ProcRule::AtLeastTwo => "2 or more ranks",
                ProcRule::Any => "any number of ranks",
                ProcRule::Nodes => "2 or more nodes, same ranks per node",
            };
            [e.name().to_string(), ranks.to_string(), e.spec.title.to_string()]
        })
        .collect();
    let lines = if long { aligned_columns(&rows) } else { rows.into_iter().map(|[n, ..]| n).collect() };
    let mut text = lines.join("\n");
    text.push('\n');
    print!("{text}");
    0
}
