//! The one-sided kernel in the shared measurement loop on mock ranks
//! (backend/mock/one_sided.rs says how the mock times each call): every
//! synchronisation's value is the model's, exactly, and both ranks end
//! every size together.

use super::{RmaBench, RmaKernel};
use crate::backend::mock::{self, Fault, Model};
use crate::bench::engine::measure::{run, Plan};
use crate::bench::{
    rma::acc_latency, rma::cas_latency, rma::fop_latency, rma::get_acc_latency, rma::get_bw, rma::get_latency,
    rma::get_mbw, rma::put_bibw, rma::put_bw, rma::put_latency, Setup,
};
use crate::cli::test_options;
use crate::job::watchdog::Progress;
use crate::job::Ending;
use crate::report::sinks::Sinks;
use crate::report::{Row, Sink};
use std::cell::RefCell;
use std::rc::Rc;

struct Rows(Rc<RefCell<Vec<Row>>>);

impl Sink for Rows {
    fn point(&mut self, rows: &[Row]) -> std::io::Result<()> {
        self.0.borrow_mut().extend_from_slice(rows);
        Ok(())
    }
}

/// Rank 0's rows of benchmark `B` with `args` on two mock ranks.
fn rows<B: RmaBench>(args: &[&str], m: Model) -> Vec<Row> {
    rows_on::<B>(2, args, m)
}

/// Rank 0's rows of benchmark `B` with `args` on `np` mock ranks.
fn rows_on<B: RmaBench>(np: usize, args: &[&str], m: Model) -> Vec<Row> {
    let (ending, rows) = run_on_mock::<B>(np, args, m, None);
    assert_eq!(ending, Ending::Complete);
    rows
}

/// How a run of `B` with `args` ended on `np` mock ranks (with `fault`),
/// and rank 0's rows.
fn run_on_mock<B: RmaBench>(np: usize, args: &[&str], m: Model, fault: Option<Fault>) -> (Ending, Vec<Row>) {
    let out = mock::run_with(np, m, fault, |t| {
        let opts = test_options(B::SPEC, args);
        let plan = Plan::for_test(B::SPEC, &opts, np);
        let setup = Setup::new(t, &plan);
        let mut k = RmaKernel::new::<B>(&setup).expect("buffers");
        let seen = Rc::new(RefCell::new(Vec::new()));
        let mut sinks = Sinks::new(vec![Box::new(Rows(seen.clone()))]);
        let root = crate::backend::Control::rank(crate::backend::Transport::world(t)) == 0;
        let ending = run(t, &mut k, &plan, plan.spec.name, root.then_some(&mut sinks), &Progress::default(), || {})
            .expect("outputs");
        let rows = seen.borrow().clone();
        (ending, rows)
    });
    out.into_iter().next().expect("rank 0")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

const SHORT: [&str; 6] = ["-m", "1:4096", "-i", "20", "-x", "3"];

/// Latency in microseconds of each size under each synchronisation, from
/// the model: o the call's overhead, S/B the transfer, L the latency.
#[test]
fn put_and_get_latency_follow_the_model_for_every_sync() {
    let m = Model::default();
    let (o, l) = (m.overhead_s, m.latency_s);
    let wire = |s: usize| s as f64 / m.bytes_per_s;
    type Want = fn(f64, f64, f64) -> f64;
    let cases: [(&str, Want); 6] = [
        // put, then wait for the acknowledgement
        ("flush", |o, l, w| o + w + 2.0 * l),
        // put, done once it has left
        ("flush_local", |o, _, w| o + w),
        // lock, put, unlock (remote completion, then the call)
        ("lock", |o, l, w| 3.0 * o + w + 2.0 * l),
        ("lock_all", |o, l, w| 3.0 * o + w + 2.0 * l),
        // three fences (a barrier each) and a put each way, halved
        ("fence", |o, l, w| (3.0 * (o + l) + 2.0 * (o + w + 2.0 * l)) / 2.0),
        // each way: the post's call, the put's call and its data, the
        // complete's call and its latency (the post's latency overlaps the
        // complete's); halved
        ("pscw", |o, l, w| 3.0 * o + w + l),
    ];
    for (sync, want) in cases {
        let mut args = vec!["-s", sync];
        args.extend(SHORT);
        let got = rows::<put_latency::PutLatency>(&args, m);
        assert_eq!(got.len(), 13, "{sync}: sizes 1 to 4096");
        for r in &got {
            let w = want(o, l, wire(r.size)) * 1e6;
            assert!(close(r.avg_lat_us.unwrap(), w), "put -s {sync} at {}: {:?} vs {w}", r.size, r.avg_lat_us);
            assert_eq!((r.iterations, r.warmup), (20, 3));
        }
    }
    // A get's data come back on the target's link: a latency each way and
    // the transfer, whichever completion is asked for.
    for sync in ["flush", "flush_local"] {
        for r in rows::<get_latency::GetLatency>(&["-s", sync, "-m", "1:4096", "-i", "20", "-x", "3"], m) {
            let w = (o + wire(r.size) + 2.0 * l) * 1e6;
            assert!(close(r.avg_lat_us.unwrap(), w), "get -s {sync} at {}: {:?} vs {w}", r.size, r.avg_lat_us);
        }
    }
}

/// A window of puts or gets (-W) per epoch, completed once: the link is
/// busy for all of them; the bidirectional test moves twice the bytes.
#[test]
fn bandwidth_is_the_window_over_its_epoch() {
    let m = Model::default();
    let (o, l) = (m.overhead_s, m.latency_s);
    // Sizes where the transfer outlasts a call, so the link sets the pace.
    let args = ["-m", "2048:8192", "-i", "10", "-x", "2", "-W", "16", "-s", "flush"];
    for get in [false, true] {
        let got = if get { rows::<get_bw::GetBw>(&args, m) } else { rows::<put_bw::PutBw>(&args, m) };
        assert_eq!(got.iter().map(|r| r.size).collect::<Vec<_>>(), [2048, 4096, 8192]);
        for r in got {
            let bytes = 16.0 * r.size as f64;
            let epoch = o + bytes / m.bytes_per_s + 2.0 * l;
            let want = bytes / epoch / 1e6;
            assert!(close(r.bw_mbps.unwrap(), want), "get {get} at {}: {:?} vs {want}", r.size, r.bw_mbps);
            assert_eq!(r.window, Some(16));
        }
    }
    let fence = ["-m", "4096:4096", "-i", "10", "-x", "2", "-W", "8", "-s", "fence"];
    let r = &rows::<put_bibw::PutBibw>(&fence, m)[0];
    let bytes = 8.0 * 4096.0;
    let epoch = 2.0 * (o + l) + o + bytes / m.bytes_per_s + 2.0 * l;
    let want = 2.0 * bytes / epoch / 1e6;
    assert!(close(r.bw_mbps.unwrap(), want), "bibw fence: {:?} vs {want}", r.bw_mbps);
}

/// osu_get_mbw: at np 2 it is osu_get_bw, exactly, under every
/// synchronisation; at np 4 and 6 each pair gets from its own target on
/// its own link, so each origin's bandwidth is the one pair's and the row
/// their sum, 2 and 3 times it (targets add nothing). A fence spans every
/// rank: its two barriers per epoch take more rounds, which each pair's
/// epoch pays.
#[test]
fn get_mbw_sums_the_pairs() {
    let m = Model::default();
    for sync in ["flush", "flush_local", "lock", "lock_all", "fence", "pscw"] {
        let args = ["-m", "2048:8192", "-i", "10", "-x", "2", "-W", "16", "-s", sync];
        let one = rows::<get_bw::GetBw>(&args, m);
        assert_eq!(one.len(), 3, "{sync}");
        let bw = |rs: &[Row]| rs.iter().map(|r| (r.size, r.bw_mbps)).collect::<Vec<_>>();
        assert_eq!(bw(&rows::<get_mbw::GetMbw>(&args, m)), bw(&one), "{sync}: np 2 is osu_get_bw");
        for np in [4, 6] {
            let got = rows_on::<get_mbw::GetMbw>(np, &args, m);
            assert_eq!(got.iter().map(|r| r.size).collect::<Vec<_>>(), [2048, 4096, 8192], "{sync} np {np}");
            let rounds = Model::steps(np) - Model::steps(2);
            let barriers = if sync == "fence" { 2.0 * rounds * (m.overhead_s + m.latency_s) } else { 0.0 };
            for (r, o) in got.iter().zip(&one) {
                let bytes = 16.0 * r.size as f64;
                let epoch = bytes / (o.bw_mbps.unwrap() * 1e6) + barriers;
                let want = (np / 2) as f64 * bytes / epoch / 1e6;
                assert!(close(r.bw_mbps.unwrap(), want), "{sync} np {np} at {}: {:?} vs {want}", r.size, r.bw_mbps);
            }
        }
    }
}

/// The atomics under flush: an accumulate is timed as a put; the fetching
/// ones carry their operands out and the old value back (compare and
/// swap: two elements out, one back). fop and cas: one row per type, the
/// element's size.
#[test]
fn atomics_follow_the_model() {
    let m = Model::default();
    let (o, l, b) = (m.overhead_s, m.latency_s, m.bytes_per_s);
    let args = ["-s", "flush", "-m", "1:64", "-i", "20", "-x", "3"];
    for r in rows::<acc_latency::AccLatency>(&args, m) {
        let w = (o + r.size as f64 / b + 2.0 * l) * 1e6;
        assert!(close(r.avg_lat_us.unwrap(), w), "acc at {}: {:?} vs {w}", r.size, r.avg_lat_us);
    }
    for r in rows::<get_acc_latency::GetAccLatency>(&["-s", "flush", "-m", "1:64", "-i", "20", "-x", "3"], m) {
        let w = (o + 2.0 * r.size as f64 / b + 2.0 * l) * 1e6;
        assert!(close(r.avg_lat_us.unwrap(), w), "get_acc at {}: {:?} vs {w}", r.size, r.avg_lat_us);
    }
    let typed = ["-s", "flush", "-T", "all", "-i", "20", "-x", "3"];
    let fop = rows::<fop_latency::FopLatency>(&typed, m);
    assert_eq!(fop.iter().map(|r| r.size).collect::<Vec<_>>(), [1, 4, 4]);
    for r in fop {
        let w = (o + 2.0 * r.size as f64 / b + 2.0 * l) * 1e6;
        assert!(close(r.avg_lat_us.unwrap(), w), "fop at {}: {:?} vs {w}", r.size, r.avg_lat_us);
    }
    for r in rows::<cas_latency::CasLatency>(&typed, m) {
        let w = (o + 3.0 * r.size as f64 / b + 2.0 * l) * 1e6;
        assert!(close(r.avg_lat_us.unwrap(), w), "cas at {}: {:?} vs {w}", r.size, r.avg_lat_us);
    }
}

/// `-c` on the atomics: under every synchronisation, the mock's atomics
/// (which really add, fetch and swap) pass every check, each type's rows
/// saying so; a corrupted update of the target's window, or a corrupted
/// value fetched back to the origin, fails the first size.
#[test]
fn atomics_validate_under_every_sync() {
    let m = Model::default();
    for sync in ["flush", "flush_local", "lock", "lock_all", "fence", "pscw"] {
        let args = ["-c", "-s", sync, "-T", "all", "-m", "1:16", "-i", "9", "-x", "2"];
        let acc = rows::<acc_latency::AccLatency>(&args, m);
        let fop = rows::<fop_latency::FopLatency>(&args, m);
        let cas = rows::<cas_latency::CasLatency>(&args, m);
        assert_eq!((acc.len(), fop.len(), cas.len()), (5 + 3 + 3, 3, 3), "{sync}");
        for r in acc.iter().chain(&fop).chain(&cas) {
            assert_eq!(r.validation, Some(true), "{sync} size {} {:?}", r.size, r.datatype);
        }
    }
    let args = ["-c", "-s", "flush", "-m", "1:16", "-i", "9", "-x", "2"];
    let (ending, rows) = run_on_mock::<acc_latency::AccLatency>(2, &args, m, Some(Fault::CorruptTo { to: 1 }));
    assert_eq!(ending, Ending::ValidationFailed { size: 1 });
    assert_eq!(rows.iter().map(|r| r.validation).collect::<Vec<_>>(), [Some(false)]);
    // The target's window is right; what came back to the origin is not.
    let (ending, _) = run_on_mock::<fop_latency::FopLatency>(2, &args, m, Some(Fault::CorruptTo { to: 0 }));
    assert_eq!(ending, Ending::ValidationFailed { size: 1 });
    for sync in ["flush", "fence"] {
        let args = ["-c", "-s", sync, "-i", "9", "-x", "2"];
        let (ending, _) = run_on_mock::<cas_latency::CasLatency>(2, &args, m, Some(Fault::CorruptTo { to: 1 }));
        assert_eq!(ending, Ending::ValidationFailed { size: 1 }, "{sync}");
    }
}
