//! How the point-to-point kernels post their messages: [`Direct`], the
//! calls OSU's standard programs make (MPI_Send, MPI_Recv, MPI_Isend and
//! MPI_Irecv windows), or [`Bound`], requests bound once per size
//! (MPI_Send_init, MPI_Recv_init) and started each iteration
//! (MPI_Startall), what osu_latency_persistent, osu_bw_persistent and
//! osu_bibw_persistent time. A kernel is generic over its posting, so the
//! persistent programs are the standard kernels with `Bound` and a spec.
//!
//! With `Bound` the binding is the kernel's `prepare` (after the size's
//! buffers are in place) and the freeing its `end_size`: neither is timed,
//! as in OSU.

use crate::backend::buffer_set::BufferSet;
use crate::backend::{Envelope, PersistentPointToPoint, Transport};

/// A way of posting messages over transport `T`.
pub(crate) trait Posting<T: Transport> {
    /// Binds a send of `env` from `buf` as request `reqs[slot]` (nothing
    /// for [`Direct`]). The kernel keeps the buffer in place and unwritten
    /// while a request is active, and frees it ([`Posting::unbind`]) before
    /// the buffer moves or goes.
    fn bind_send(_t: &T, _buf: &T::Buf, _env: Envelope, _reqs: &mut T::Requests, _slot: usize) {}

    /// Binds a receive, as [`Posting::bind_send`] binds a send.
    fn bind_recv(_t: &T, _buf: &mut T::Buf, _env: Envelope, _reqs: &mut T::Requests, _slot: usize) {}

    /// Binds a send from each of the first `n` slots of `bufs` into
    /// `reqs[offset..offset + n]`.
    fn bind_sends(t: &T, bufs: &BufferSet<T::Buf>, env: Envelope, reqs: &mut T::Requests, offset: usize, n: usize) {
        for j in 0..n {
            Self::bind_send(t, bufs.slot(j), env, reqs, offset + j);
        }
    }

    /// Binds a receive into each of the first `n` slots of `bufs`.
    fn bind_recvs(t: &T, bufs: &mut BufferSet<T::Buf>, env: Envelope, reqs: &mut T::Requests, offset: usize, n: usize) {
        for j in 0..n {
            Self::bind_recv(t, bufs.slot_mut(j), env, reqs, offset + j);
        }
    }

    /// Frees what the binds of a size left in `reqs[offset..offset + n]`.
    fn unbind(_t: &T, _reqs: &mut T::Requests, _offset: usize, _n: usize) {}

    /// Posts the sends of a window into `reqs[offset..offset + n]`.
    fn send_window(t: &T, bufs: &BufferSet<T::Buf>, env: Envelope, reqs: &mut T::Requests, offset: usize, n: usize);

    /// Posts the receives of a window into `reqs[offset..offset + n]`.
    fn recv_window(t: &T, bufs: &mut BufferSet<T::Buf>, env: Envelope, reqs: &mut T::Requests, offset: usize, n: usize);

    /// Posts a window of receives (`reqs[0..w]`) and one of sends
    /// (`reqs[w..2w]`) at once ([`Transport::exchange_windows`]).
    fn exchange_windows(
        t: &T,
        recv: &mut BufferSet<T::Buf>,
        inn: Envelope,
        send: &BufferSet<T::Buf>,
        out: Envelope,
        reqs: &mut T::Requests,
        w: usize,
    );

    /// One send, complete on return; `slot` is its bound request.
    fn send(t: &T, buf: &T::Buf, env: Envelope, reqs: &mut T::Requests, slot: usize);

    /// One receive, complete on return; `slot` is its bound request.
    fn recv(t: &T, buf: &mut T::Buf, env: Envelope, reqs: &mut T::Requests, slot: usize);
}

/// The calls of OSU's standard programs, on every transport.
pub(crate) struct Direct;

impl<T: Transport> Posting<T> for Direct {
    #[inline(always)]
    fn send_window(t: &T, bufs: &BufferSet<T::Buf>, env: Envelope, reqs: &mut T::Requests, offset: usize, _n: usize) {
        t.isend_window(bufs, env, reqs, offset);
    }

    #[inline(always)]
    fn recv_window(
        t: &T,
        bufs: &mut BufferSet<T::Buf>,
        env: Envelope,
        reqs: &mut T::Requests,
        offset: usize,
        _n: usize,
    ) {
        t.irecv_window(bufs, env, reqs, offset);
    }

    #[inline(always)]
    fn exchange_windows(
        t: &T,
        recv: &mut BufferSet<T::Buf>,
        inn: Envelope,
        send: &BufferSet<T::Buf>,
        out: Envelope,
        reqs: &mut T::Requests,
        _w: usize,
    ) {
        t.exchange_windows(recv, inn, send, out, reqs);
    }

    #[inline(always)]
    fn send(t: &T, buf: &T::Buf, env: Envelope, _reqs: &mut T::Requests, _slot: usize) {
        t.send(buf, env);
    }

    #[inline(always)]
    fn recv(t: &T, buf: &mut T::Buf, env: Envelope, _reqs: &mut T::Requests, _slot: usize) {
        t.recv(buf, env);
    }
}

/// Requests bound once per size and started each time (MPI only).
pub struct Bound;

impl<T: PersistentPointToPoint> Posting<T> for Bound {
    fn bind_send(t: &T, buf: &T::Buf, env: Envelope, reqs: &mut T::Requests, slot: usize) {
        // SAFETY: the kernel keeps the buffer in place and unwritten while
        // the request is active, and unbinds before it moves (above).
        unsafe { t.bind_send(buf, env, reqs, slot) };
    }

    fn bind_recv(t: &T, buf: &mut T::Buf, env: Envelope, reqs: &mut T::Requests, slot: usize) {
        // SAFETY: as in bind_send.
        unsafe { t.bind_recv(buf, env, reqs, slot) };
    }

    fn unbind(t: &T, reqs: &mut T::Requests, offset: usize, n: usize) {
        t.free_requests(reqs, offset, n);
    }

    #[inline(always)]
    fn send_window(t: &T, _bufs: &BufferSet<T::Buf>, _env: Envelope, reqs: &mut T::Requests, offset: usize, n: usize) {
        t.startall(reqs, offset, n);
    }

    #[inline(always)]
    fn recv_window(
        t: &T,
        _bufs: &mut BufferSet<T::Buf>,
        _env: Envelope,
        reqs: &mut T::Requests,
        offset: usize,
        n: usize,
    ) {
        t.startall(reqs, offset, n);
    }

    /// The receives' requests, then the sends' (MPI_Startall each).
    #[inline(always)]
    fn exchange_windows(
        t: &T,
        _recv: &mut BufferSet<T::Buf>,
        _inn: Envelope,
        _send: &BufferSet<T::Buf>,
        _out: Envelope,
        reqs: &mut T::Requests,
        w: usize,
    ) {
        t.startall(reqs, 0, w);
        t.startall(reqs, w, w);
    }

    #[inline(always)]
    fn send(t: &T, _buf: &T::Buf, _env: Envelope, reqs: &mut T::Requests, slot: usize) {
        t.startall(reqs, slot, 1);
        t.waitall(reqs, slot, 1);
    }

    #[inline(always)]
    fn recv(t: &T, _buf: &mut T::Buf, _env: Envelope, reqs: &mut T::Requests, slot: usize) {
        t.startall(reqs, slot, 1);
        t.waitall(reqs, slot, 1);
    }
}

/// Makes `$bench` (in a file with `SPEC`) a persistent point-to-point
/// benchmark whose kernel is `$kernel<T, Bound>`, built by `$kernel::new`
/// over every transport with [`PersistentPointToPoint`] (MPI).
macro_rules! persistent_point_to_point_bench {
    ($bench:ident, $kernel:ident :: $new:ident) => {
        pub struct $bench;

        impl $crate::bench::Bench for $bench {
            const SPEC: &'static $crate::spec::BenchSpec = &SPEC;
            type Needs = $crate::bench::needs::PersistentPointToPoint;
        }

        impl<T: $crate::backend::PersistentPointToPoint> $crate::bench::BenchOn<T> for $bench {
            type Kernel = $kernel<T, $crate::bench::pt2pt::posting::Bound>;

            fn kernel(s: &$crate::bench::Setup<T>) -> Result<Self::Kernel, $crate::buffer::AllocError> {
                $kernel::$new(s)
            }
        }
    };
}
pub(crate) use persistent_point_to_point_bench;
