//! The mock itself: its clock follows the model, bytes really move, and
//! faults reach the rank they name.

use super::*;
use crate::backend::Memory;

fn env(count: usize, peer: usize) -> Envelope {
    Envelope { count, datatype: Datatype::Char, peer, tag: 1 }
}

#[test]
fn ping_pong_time_follows_the_model() {
    let m = Model::default();
    let rtts = run(2, m, |t| {
        let me = t.world().rank();
        let mut b = t.memory().alloc(100).unwrap();
        t.memory().write_host(&mut b, crate::backend::WHOLE, |s| s.fill(me as u8 + 1));
        t.world().barrier();
        let t0 = t.now();
        if me == 0 {
            t.send(&b, env(100, 1));
            t.recv(&mut b, env(100, 1));
        } else {
            t.recv(&mut b, env(100, 0));
            t.send(&b, env(100, 0));
        }
        (t.now() - t0, t.memory().read_host(&b, crate::backend::WHOLE, |s| s[0]))
    });
    let want = 2.0 * m.one_way(100);
    assert!((rtts[0].0 - want).abs() < 1e-15, "{} vs {want}", rtts[0].0);
    // rank 1 echoed rank 0's bytes back
    assert_eq!((rtts[0].1, rtts[1].1), (1, 1));
}

#[test]
fn a_window_shares_the_link() {
    let m = Model { latency_s: 0.0, overhead_s: 0.0, bytes_per_s: 1e9, jitter_s: 0.0, modes: None };
    let took = run(2, m, |t| {
        let me = t.world().rank();
        let mut set = BufferSet::new(t, 1000, 4, false).unwrap();
        let mut reqs = t.requests(4);
        let t0 = t.now();
        if me == 0 {
            t.isend_window(&set, env(1000, 1), &mut reqs, 0);
            t.waitall(&mut reqs, 0, 4);
        } else {
            t.irecv_window(&mut set, env(1000, 0), &mut reqs, 0);
            while !t.testall(&mut reqs, 0, 4) {}
        }
        t.now() - t0
    });
    // four 1000-byte messages one after the other at 1 GB/s
    assert!((took[1] - 4e-6).abs() < 1e-15, "{}", took[1]);
}

#[test]
fn collectives_move_real_data() {
    let out = run(3, Model::default(), |t| {
        let me = t.world().rank();
        let mut send = t.memory().alloc(12).unwrap();
        let mut recv = t.memory().alloc(12).unwrap();
        t.memory().write_host(&mut send, crate::backend::WHOLE, |s| s.copy_from_slice(&[me as u8 + 1; 12]));
        t.allreduce(Operands::Apart { send: &send, recv: &mut recv }, 3, Datatype::Int, Reduction::Sum);
        let sum =
            t.memory().read_host(&recv, crate::backend::WHOLE, |s| i32::from_ne_bytes(s[..4].try_into().unwrap()));
        t.allgather(Operands::Apart { send: &send, recv: &mut recv }, 4, Datatype::Char);
        let gathered = t.memory().read_host(&recv, crate::backend::WHOLE, |s| s.to_vec());
        (sum, gathered, t.now())
    });
    let one = i32::from_ne_bytes([1; 4]);
    assert_eq!(out[0].0, one + 2 * one + 3 * one);
    assert_eq!(out[2].1, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    // every rank leaves a collective at the same virtual time
    assert!(out.iter().all(|o| o.2 == out[0].2));
}

#[test]
fn control_plane_reductions_and_gathers() {
    let out = run(4, Model::default(), |t| {
        let w = t.world();
        let r = w.rank() as f64;
        (
            w.reduce_f64(r, ReduceOp::Sum),
            w.reduce_f64_slice(&[r, -r], ReduceOp::Max),
            w.gather_f64(r),
            w.allreduce_sum_u64(1),
            w.bcast_u64(w.rank() as u64 + 7),
            w.gather_bytes(&vec![1u8; w.rank()]).iter().map(Vec::len).collect::<Vec<_>>(),
        )
    });
    assert_eq!(out[0].0, 6.0);
    assert_eq!(out[0].1, vec![3.0, 0.0]);
    assert_eq!(out[0].2, vec![0.0, 1.0, 2.0, 3.0]);
    assert!(out[1].2.is_empty());
    assert!(out.iter().all(|o| o.3 == 4 && o.4 == 7));
    assert_eq!(out[0].5, vec![0, 1, 2, 3]);
}

#[test]
fn a_fault_corrupts_what_one_rank_receives() {
    let got = run_with(2, Model::default(), Some(Fault::CorruptTo { to: 1 }), |t| {
        let mut b = t.memory().alloc(4).unwrap();
        if t.world().rank() == 0 {
            t.send(&b, env(4, 1));
        } else {
            t.recv(&mut b, env(4, 0));
        }
        t.memory().read_host(&b, crate::backend::WHOLE, |s| s[0])
    });
    assert_eq!(got, vec![0, 0xff]);
}
