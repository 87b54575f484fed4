//! The buffers one side of a windowed transfer uses, of any transport's
//! buffer type: allocated, filled, patterned and checked through the
//! transport (host or device memory alike).

use crate::backend::{Buffer, Memory, Transport};
use crate::buffer::{check_pattern, fill_pattern, fill_zero, AllocError, Mismatch};
use crate::datatype::Datatype;

/// The buffers one side of a windowed transfer uses: one shared buffer
/// (`-b single`) or one per message in flight (`-b multiple`), of any
/// transport's buffer type.
pub struct BufferSet<B> {
    bufs: Vec<B>,
    slots: usize,
    multiple: bool,
}

impl<B: Buffer> BufferSet<B> {
    /// `slots` messages of up to `bytes` each.
    pub fn new<T: Transport<Buf = B>>(
        t: &T,
        bytes: usize,
        slots: usize,
        multiple: bool,
    ) -> Result<BufferSet<B>, AllocError> {
        let n = if multiple { slots.max(1) } else { 1 };
        let bufs = (0..n).map(|_| t.memory().alloc(bytes)).collect::<Result<Vec<_>, _>>()?;
        Ok(BufferSet { bufs, slots: slots.max(1), multiple })
    }

    /// Number of messages this set serves.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Number of distinct buffers (1 for `-b single`).
    pub fn distinct(&self) -> usize {
        self.bufs.len()
    }

    /// The buffer message slot `j` uses.
    #[inline(always)]
    pub(crate) fn slot(&self, j: usize) -> &B {
        &self.bufs[if self.bufs.len() == 1 { 0 } else { j }]
    }

    /// The buffer message slot `j` uses, writable.
    #[inline(always)]
    pub(crate) fn slot_mut(&mut self, j: usize) -> &mut B {
        let n = self.bufs.len();
        &mut self.bufs[if n == 1 { 0 } else { j }]
    }

    /// Distinct buffer `k`.
    pub fn buf(&self, k: usize) -> &B {
        &self.bufs[k]
    }

    /// Sets the first `bytes` of every buffer to `byte`.
    pub fn fill<T: Transport<Buf = B>>(&mut self, t: &T, bytes: usize, byte: u8) {
        for b in &mut self.bufs {
            t.memory().write_host(b, bytes, |s| s.fill(byte));
        }
    }

    /// Makes the set serve `slots` messages of `bytes` each: a shared buffer
    /// keeps its (large enough) allocation, a per-message set is rebuilt
    /// when the window or the size changes.
    pub(crate) fn reshape<T: Transport<Buf = B>>(
        &mut self,
        t: &T,
        bytes: usize,
        slots: usize,
    ) -> Result<(), AllocError> {
        if self.multiple {
            if self.bufs.len() != slots.max(1) || self.bufs[0].len() != bytes {
                // Free the old set before allocating the new one.
                self.bufs.clear();
                *self = BufferSet::new(t, bytes, slots, true)?;
            }
        } else {
            if self.bufs[0].len() < bytes {
                self.bufs[0] = t.memory().alloc(bytes)?;
            }
            self.slots = slots.max(1);
        }
        Ok(())
    }

    /// Writes the validation pattern: message slot j of iteration i carries
    /// the pattern of iteration i + j (with one shared buffer, i).
    pub(crate) fn fill_patterns<T: Transport<Buf = B>>(
        &mut self,
        t: &T,
        dt: Datatype,
        count: usize,
        size: usize,
        i: usize,
    ) {
        for (k, b) in self.bufs.iter_mut().enumerate() {
            t.memory().write_host(b, count * dt.size(), |s| fill_pattern(s, dt, count, size, i + k));
        }
    }

    /// Clears `count` elements of every buffer.
    pub fn zero<T: Transport<Buf = B>>(&mut self, t: &T, dt: Datatype, count: usize) {
        for b in &mut self.bufs {
            t.memory().write_host(b, count * dt.size(), |s| fill_zero(s, dt, count));
        }
    }

    /// Checks every buffer against `fill_patterns`' pattern.
    pub(crate) fn check_patterns<T: Transport<Buf = B>>(
        &self,
        t: &T,
        dt: Datatype,
        count: usize,
        size: usize,
        i: usize,
    ) -> Option<Mismatch> {
        self.bufs
            .iter()
            .enumerate()
            .find_map(|(k, b)| t.memory().read_host(b, count * dt.size(), |s| check_pattern(s, dt, count, size, i + k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` with the one rank of a mock job (host buffers).
    fn with_transport(f: impl Fn(&crate::backend::mock::MockTransport) + Sync) {
        crate::backend::mock::run(1, crate::backend::mock::Model::default(), f);
    }

    #[test]
    fn buffer_set_slots() {
        with_transport(|t| {
            let mut s = BufferSet::new(t, 8, 4, false).unwrap();
            assert_eq!(s.distinct(), 1);
            assert_eq!(s.slot(0).as_ptr(), s.slot(3).as_ptr());
            let m = BufferSet::new(t, 8, 4, true).unwrap();
            assert_eq!(m.distinct(), 4);
            assert_ne!(m.slot(0).as_ptr(), m.slot(3).as_ptr());
            s.fill(t, 8, b'a');
            assert_eq!(s.buf(0).as_slice(), b"aaaaaaaa");
        });
    }

    #[test]
    fn reshape_keeps_or_rebuilds() {
        with_transport(|t| {
            let mut s = BufferSet::new(t, 64, 4, false).unwrap();
            let p = s.slot(0).as_ptr();
            s.reshape(t, 32, 8).unwrap();
            assert_eq!((s.slots(), s.distinct(), s.slot(7).as_ptr()), (8, 1, p));
            s.reshape(t, 128, 2).unwrap();
            assert_eq!(s.buf(0).len(), 128);
            let mut m = BufferSet::new(t, 64, 4, true).unwrap();
            m.reshape(t, 16, 2).unwrap();
            assert_eq!((m.slots(), m.distinct(), m.buf(1).len()), (2, 2, 16));
        });
    }

    #[test]
    fn slot_patterns_follow_iteration_plus_slot() {
        with_transport(|t| {
            let mut m = BufferSet::new(t, 8, 3, true).unwrap();
            m.fill_patterns(t, Datatype::Char, 8, 8, 5);
            assert!(m.check_patterns(t, Datatype::Char, 8, 8, 5).is_none());
            assert_eq!(m.buf(2).as_slice(), {
                let mut b = vec![0u8; 8];
                fill_pattern(&mut b, Datatype::Char, 8, 8, 7);
                b
            });
            m.zero(t, Datatype::Char, 8);
            assert!(m.check_patterns(t, Datatype::Char, 8, 8, 5).is_some());
        });
    }
}
