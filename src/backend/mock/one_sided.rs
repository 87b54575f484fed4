//! One-sided operations on the mock ranks, so that the one-sided kernel
//! (bench/rma/mod.rs) runs in unit tests as the others do.
//!
//! Every rank's window memory is shared with the others (one `Arc` per
//! rank), so puts and gets really move bytes. Time follows the mock's
//! model, with one assumption per call:
//!
//! - a put pays the call's overhead and leaves on the link to its target
//!   (one message at a time, as sends do); it is complete locally once it
//!   has left and remotely one latency later, plus a latency for the
//!   acknowledgement to come back;
//! - a get sends a request (one latency) and the data come back on the
//!   target's link to this rank; it is complete, locally and remotely,
//!   when the data have arrived;
//! - an accumulate is a put whose bytes are added (MPI_SUM) to the
//!   target's; get_accumulate, fetch_and_op and compare_and_swap carry
//!   their operands out as a put does and the old value back as a get
//!   does, complete when it has arrived;
//! - an exclusive lock costs what a shared one does (one origin here);
//! - flush waits for remote completion of everything issued, flush_local
//!   for local completion; unlock and unlock_all flush, then pay an
//!   overhead, as lock and lock_all do;
//! - fence completes everything, then all ranks meet as at a barrier;
//! - post and complete send an empty message to the peer on its link
//!   (behind the data, so a complete arrives after them); start and wait
//!   take it, so an access epoch opens only once the target exposed.

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use super::{lock, reduce_elements, Fault, MockTransport};
use crate::backend::rma::{OneSided, WinKind};
use crate::backend::Envelope;
use crate::buffer::{AlignedBuf, AllocError};
use crate::datatype::Datatype;

/// Tags of the post and complete notices, apart from any benchmark's.
const POST_TAG: i32 = -7001;
const COMPLETE_TAG: i32 = -7002;

/// One rank's window memory, shared with the other ranks' threads.
pub(super) type WinMemory = Arc<Mutex<Vec<u8>>>;

/// A window of the mock: every rank's memory, this rank's included.
pub(crate) struct MockWin {
    mem: Vec<WinMemory>,
    me: usize,
    peer: usize,
}

/// One rank's one-sided bookkeeping.
#[derive(Default)]
pub(super) struct RmaClock {
    /// Windows made so far: every rank makes them in the same order, so
    /// the count names a window alike on every rank.
    made: Cell<u64>,
    /// When everything issued has left this rank (local completion).
    local_done: Cell<f64>,
    /// When everything issued is complete at its target and this rank
    /// knows it.
    remote_done: Cell<f64>,
}

fn later(c: &Cell<f64>, t: f64) {
    c.set(c.get().max(t));
}

impl MockTransport {
    /// The call's overhead on this rank's clock; the time after it.
    fn rma_call(&self) -> f64 {
        self.world.advance(self.model().overhead_s);
        self.world.jitter();
        self.world.clock()
    }

    fn notice(&self, peer: usize, tag: i32) {
        self.post(&[], Envelope { count: 0, datatype: Datatype::Char, peer, tag });
    }

    fn await_notice(&self, peer: usize, tag: i32) {
        let p = self.take(peer, tag);
        self.world.at_least(p.arrival);
    }

    /// A put's timing: `bytes` out to `target`.
    fn one_way(&self, target: usize, bytes: usize) {
        let now = self.rma_call();
        let left = self.carry(self.world.rank, target, now, bytes);
        let latency = self.model().latency_s;
        later(&self.rma.local_done, left);
        later(&self.rma.remote_done, left + 2.0 * latency);
    }

    /// A fetching call's timing: `out` bytes to `target`, `back` bytes
    /// from it once they are there.
    fn round_trip(&self, target: usize, out: usize, back: usize) {
        let now = self.rma_call();
        let me = self.world.rank;
        let latency = self.model().latency_s;
        let there = self.carry(me, target, now, out) + latency;
        let arrived = self.carry(target, me, there, back) + latency;
        later(&self.rma.local_done, arrived);
        later(&self.rma.remote_done, arrived);
    }

    fn complete_remote(&self) {
        self.world.at_least(self.rma.remote_done.get());
    }

    /// The injected fault, if it hits rank `to`: the first byte of
    /// `bytes` flipped.
    fn corrupt(&self, to: usize, bytes: &mut [u8]) {
        if let (Some(Fault::CorruptTo { to: hit }), Some(b)) = (self.world.shared.fault, bytes.first_mut()) {
            if hit == to {
                *b ^= 0xff;
            }
        }
    }

    /// An update of `target`'s window at `at` (the fault may hit it).
    fn landed(&self, win: &MockWin, target: usize, at: usize) {
        if let Some(cell) = lock(&win.mem[target]).get_mut(at..) {
            self.corrupt(target, cell);
        }
    }
}

/// Adds `count` elements of `dt` in `operand` to `mem[at..]` (MPI_SUM);
/// the previous contents.
fn add_into(mem: &WinMemory, operand: &[u8], at: usize, count: usize, dt: Datatype) -> Vec<u8> {
    let mut mem = lock(mem);
    let bytes = count * dt.size();
    let old = mem[at..at + bytes].to_vec();
    let summed = reduce_elements(&[old.clone(), operand.to_vec()], count, dt, 0, crate::datatype::Reduction::Sum);
    mem[at..at + bytes].copy_from_slice(&summed);
    old
}

impl OneSided for MockTransport {
    type Win = MockWin;

    /// Every kind of window is plain memory here; `kind` changes nothing.
    fn win_new(&self, _kind: WinKind, bytes: usize, peer: usize) -> Result<MockWin, AllocError> {
        let me = self.world.rank;
        let id = self.rma.made.get();
        self.rma.made.set(id + 1);
        let mine = Arc::new(Mutex::new(vec![b'a'; bytes]));
        let sh = &*self.world.shared;
        lock(&sh.windows).insert((id, me), mine);
        // Everyone has put theirs in; everyone takes all; then each rank
        // removes its own entry once no rank still needs the table.
        self.world.exchange(Vec::new());
        let mem = {
            let w = lock(&sh.windows);
            (0..sh.np).map(|r| w.get(&(id, r)).cloned().expect("every rank's window")).collect()
        };
        self.world.exchange(Vec::new());
        lock(&sh.windows).remove(&(id, me));
        Ok(MockWin { mem, me, peer })
    }

    fn win_read<R>(&self, win: &MockWin, read: impl FnOnce(&[u8]) -> R) -> R {
        read(&lock(&win.mem[win.me]))
    }

    fn win_write(&self, win: &mut MockWin, write: impl FnOnce(&mut [u8])) {
        write(&mut lock(&win.mem[win.me]))
    }

    fn put(&self, win: &MockWin, origin: &AlignedBuf, at: usize, bytes: usize, target: usize) {
        lock(&win.mem[target])[at..at + bytes].copy_from_slice(&origin.as_slice()[at..at + bytes]);
        self.landed(win, target, at);
        self.one_way(target, bytes);
    }

    fn get(&self, win: &MockWin, origin: &mut AlignedBuf, at: usize, bytes: usize, target: usize) {
        origin.as_mut_slice()[at..at + bytes].copy_from_slice(&lock(&win.mem[target])[at..at + bytes]);
        self.corrupt(self.world.rank, &mut origin.as_mut_slice()[at..at + bytes]);
        self.round_trip(target, 0, bytes);
    }

    fn accumulate(&self, win: &MockWin, origin: &AlignedBuf, at: usize, count: usize, dt: Datatype, target: usize) {
        let bytes = count * dt.size();
        add_into(&win.mem[target], &origin.as_slice()[at..at + bytes], at, count, dt);
        self.landed(win, target, at);
        self.one_way(target, bytes);
    }

    fn get_accumulate(
        &self,
        win: &MockWin,
        origin: &AlignedBuf,
        result: &mut AlignedBuf,
        at: usize,
        count: usize,
        dt: Datatype,
        target: usize,
    ) {
        let bytes = count * dt.size();
        let old = add_into(&win.mem[target], &origin.as_slice()[at..at + bytes], at, count, dt);
        self.landed(win, target, at);
        result.as_mut_slice()[at..at + bytes].copy_from_slice(&old);
        self.corrupt(self.world.rank, &mut result.as_mut_slice()[at..at + bytes]);
        self.round_trip(target, bytes, bytes);
    }

    fn fetch_and_op(&self, win: &MockWin, origin: &AlignedBuf, result: &mut AlignedBuf, dt: Datatype, target: usize) {
        let w = dt.size();
        let old = add_into(&win.mem[target], &origin.as_slice()[..w], 0, 1, dt);
        self.landed(win, target, 0);
        result.as_mut_slice()[..w].copy_from_slice(&old);
        self.corrupt(self.world.rank, &mut result.as_mut_slice()[..w]);
        self.round_trip(target, w, w);
    }

    fn compare_and_swap(
        &self,
        win: &MockWin,
        origin: &AlignedBuf,
        compare: &AlignedBuf,
        result: &mut AlignedBuf,
        dt: Datatype,
        target: usize,
    ) {
        let w = dt.size();
        {
            let mut mem = lock(&win.mem[target]);
            result.as_mut_slice()[..w].copy_from_slice(&mem[..w]);
            if mem[..w] == compare.as_slice()[..w] {
                mem[..w].copy_from_slice(&origin.as_slice()[..w]);
                self.corrupt(target, &mut mem[..w]);
            }
        }
        self.corrupt(self.world.rank, &mut result.as_mut_slice()[..w]);
        self.round_trip(target, 2 * w, w);
    }

    fn lock_shared(&self, _win: &MockWin, _target: usize) {
        self.rma_call();
    }

    fn lock_exclusive(&self, _win: &MockWin, _target: usize) {
        self.rma_call();
    }

    fn unlock(&self, _win: &MockWin, _target: usize) {
        self.complete_remote();
        self.rma_call();
    }

    fn lock_all(&self, _win: &MockWin) {
        self.rma_call();
    }

    fn unlock_all(&self, _win: &MockWin) {
        self.complete_remote();
        self.rma_call();
    }

    fn flush(&self, _win: &MockWin, _target: usize) {
        self.complete_remote();
    }

    fn flush_local(&self, _win: &MockWin, _target: usize) {
        self.world.at_least(self.rma.local_done.get());
    }

    fn fence(&self, _win: &MockWin) {
        self.complete_remote();
        crate::backend::Control::barrier(&self.world);
    }

    fn win_start(&self, win: &MockWin) {
        self.await_notice(win.peer, POST_TAG);
    }

    fn win_complete(&self, win: &MockWin) {
        self.world.at_least(self.rma.local_done.get());
        self.notice(win.peer, COMPLETE_TAG);
    }

    fn win_post(&self, win: &MockWin) {
        self.notice(win.peer, POST_TAG);
    }

    fn win_wait(&self, win: &MockWin) {
        self.await_notice(win.peer, COMPLETE_TAG);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{run, Model};
    use crate::backend::rma::{OneSided, WinKind};
    use crate::backend::{Control, Memory, Transport};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 + 1e-9 * b.abs()
    }

    /// Puts land in the target's window and gets read it; flush after one
    /// put costs the call, the transfer and a latency each way.
    #[test]
    fn puts_and_gets_move_bytes_in_modelled_time() {
        let m = Model::default();
        let out = run(2, m, |t| {
            let me = t.world().rank();
            let peer = 1 - me;
            let mut win = t.win_new(WinKind::Dynamic, 8, peer).unwrap();
            t.win_write(&mut win, |b| b.fill(b'0' + me as u8));
            t.fence(&win);
            let mut origin = t.memory().alloc(8).unwrap();
            let mut took = 0.0;
            if me == 0 {
                origin.as_mut_slice().copy_from_slice(b"putputpu");
                t.lock_shared(&win, peer);
                let t0 = t.now();
                t.put(&win, &origin, 2, 4, peer);
                t.flush(&win, peer);
                took = t.now() - t0;
                t.get(&win, &mut origin, 0, 2, peer);
                t.unlock(&win, peer);
            }
            t.fence(&win);
            (t.win_read(&win, |b| b.to_vec()), origin.as_slice().to_vec(), took)
        });
        assert_eq!(out[1].0, b"11tput11", "rank 1's window holds the put");
        assert_eq!(&out[0].1[..2], b"11", "rank 0's get read rank 1's window");
        assert_eq!(out[0].0, b"00000000", "rank 0's own window untouched");
        let want = m.overhead_s + 4.0 / m.bytes_per_s + 2.0 * m.latency_s;
        assert!(close(out[0].2, want), "{} vs {want}", out[0].2);
    }

    /// The atomics add, fetch and swap in the target's window.
    #[test]
    fn atomics_change_the_targets_window() {
        use crate::datatype::Datatype;
        let out = run(2, Model::default(), |t| {
            let me = t.world().rank();
            let mut win = t.win_new(WinKind::Allocate, 8, 1 - me).unwrap();
            t.win_write(&mut win, |b| b.copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]));
            t.fence(&win);
            let mut got = Vec::new();
            if me == 0 {
                let mut origin = t.memory().alloc(8).unwrap();
                origin.as_mut_slice().copy_from_slice(&[10; 8]);
                let mut result = t.memory().alloc(8).unwrap();
                t.lock_exclusive(&win, 1);
                t.accumulate(&win, &origin, 0, 2, Datatype::Char, 1); // [11, 12, ..]
                t.fetch_and_op(&win, &origin, &mut result, Datatype::Char, 1); // 11 back, 21
                got.push(result.as_slice()[0]);
                t.get_accumulate(&win, &origin, &mut result, 4, 2, Datatype::Char, 1); // 5, 6 back
                got.extend_from_slice(&result.as_slice()[4..6]);
                let mut compare = t.memory().alloc(8).unwrap();
                compare.as_mut_slice()[0] = 21;
                t.compare_and_swap(&win, &origin, &compare, &mut result, Datatype::Char, 1); // 21 -> 10
                got.push(result.as_slice()[0]);
                compare.as_mut_slice()[0] = 99;
                t.compare_and_swap(&win, &compare, &compare, &mut result, Datatype::Char, 1); // no match
                got.push(result.as_slice()[0]);
                t.unlock(&win, 1);
            }
            t.fence(&win);
            (t.win_read(&win, |b| b.to_vec()), got)
        });
        assert_eq!(out[0].1, [11, 5, 6, 21, 10]);
        assert_eq!(out[1].0, [10, 12, 3, 4, 15, 16, 7, 8]);
    }

    /// Start waits for the target's post and wait for the origin's
    /// complete, which arrives behind the data.
    #[test]
    fn pscw_orders_the_epochs() {
        let m = Model::default();
        let out = run(2, m, |t| {
            let me = t.world().rank();
            let win = t.win_new(WinKind::Create, 1000, 1 - me).unwrap();
            let origin = t.memory().alloc(1000).unwrap();
            if me == 0 {
                t.win_start(&win);
                t.put(&win, &origin, 0, 1000, 1);
                t.win_complete(&win);
            } else {
                t.win_post(&win);
                t.win_wait(&win);
            }
            t.now()
        });
        // Rank 1: post (overhead), then the notice of rank 0's complete.
        // Rank 0 started when the post arrived, paid the put's call and
        // sent 1000 bytes; the complete follows them on the link.
        let post_arrives = m.one_way(0);
        let data_left = post_arrives + m.overhead_s + 1000.0 / m.bytes_per_s;
        assert!(close(out[0], data_left + m.overhead_s), "{} vs {}", out[0], data_left + m.overhead_s);
        assert!(close(out[1], data_left + m.overhead_s + m.latency_s), "{} vs {}", out[1], data_left);
    }
}
