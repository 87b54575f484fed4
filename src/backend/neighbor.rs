//! The neighbourhood collectives' part of the seam: a rank's neighbours
//! ([`Adjacency`]), the process topology built over them once, outside the
//! timed region ([`NeighborGraph`]: over MPI a distributed-graph
//! communicator), and the capability trait of the blocking calls
//! ([`NeighborCollectives`]; the non-blocking starts are in
//! [`super::NonBlockingCollectives`], completed by its wait). MPI and the
//! mock have it; NCCL and UCX do not.

use mpi::ffi;

use super::{Blocks, Collectives};
use crate::datatype::Datatype;

/// One rank's neighbours, in the order of the blocks of a neighbourhood
/// call: block k of the receive buffer comes from `sources[k]`, block k of
/// an all-to-all's send buffer goes to `destinations[k]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Adjacency {
    pub sources: Vec<usize>,
    pub destinations: Vec<usize>,
}

/// The layout of a neighbourhood all-to-all-w: counts, and displacements
/// in bytes as MPI takes them (MPI_Aint).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByteBlocks {
    pub counts: Vec<i32>,
    pub displs: Vec<ffi::MPI_Aint>,
    /// Bytes from the start of the buffer to the end of the last block.
    pub extent: usize,
}

impl ByteBlocks {
    /// `count` elements of `dt` for each of `n` neighbours, end to end.
    pub(crate) fn end_to_end(n: usize, count: usize, dt: Datatype) -> ByteBlocks {
        let bytes = count * dt.size();
        let displs = (0..n).map(|k| (k * bytes) as ffi::MPI_Aint).collect();
        ByteBlocks { counts: vec![count as i32; n], displs, extent: n * bytes }
    }

    /// Byte offset of block `k`.
    pub fn offset(&self, k: usize) -> usize {
        self.displs[k].max(0) as usize
    }
}

/// A process topology the neighbourhood calls run over: its adjacency and,
/// over MPI, the communicator MPI_Dist_graph_create_adjacent made (freed
/// with the graph, unless MPI has already been finalised).
pub struct NeighborGraph {
    adjacency: Adjacency,
    comm: ffi::MPI_Comm,
}

impl NeighborGraph {
    /// A graph with no communicator (the mock's).
    pub fn detached(adjacency: Adjacency) -> NeighborGraph {
        // SAFETY: reads a constant of the MPI library.
        NeighborGraph { adjacency, comm: unsafe { ffi::RSMPI_COMM_NULL } }
    }

    /// A graph over MPI communicator `comm`, which it now owns.
    pub(super) fn over(adjacency: Adjacency, comm: ffi::MPI_Comm) -> NeighborGraph {
        NeighborGraph { adjacency, comm }
    }

    pub fn adjacency(&self) -> &Adjacency {
        &self.adjacency
    }

    /// The MPI communicator (MPI_COMM_NULL for a detached graph).
    #[inline(always)]
    pub(super) fn comm(&self) -> ffi::MPI_Comm {
        self.comm
    }
}

impl Drop for NeighborGraph {
    fn drop(&mut self) {
        // SAFETY: reads a constant; the query may be made at any time; the
        // communicator is ours and every rank frees its own at the same
        // point of the run.
        unsafe {
            if self.comm == ffi::RSMPI_COMM_NULL {
                return;
            }
            let mut done = 0;
            ffi::MPI_Finalized(&mut done);
            if done == 0 {
                ffi::MPI_Comm_free(&mut self.comm);
            }
        }
    }
}

/// MPI's neighbourhood collectives: each rank exchanges with its
/// neighbours in a process topology only. The buffers hold one block per
/// neighbour, end to end in the adjacency's order (the layouts `sl` and
/// `rl` of the v and w forms say where); MPI has no in-place form of them.
pub trait NeighborCollectives: Collectives {
    /// The topology over `adjacency`, made on every rank at once (a
    /// collective call, untimed).
    fn neighbor_graph(&self, adjacency: Adjacency) -> NeighborGraph;
    /// `count` elements from this rank to each destination, one block per
    /// source received (MPI_Neighbor_allgather).
    fn neighbor_allgather(&self, g: &NeighborGraph, send: &Self::Buf, recv: &mut Self::Buf, count: usize, dt: Datatype);
    /// As [`NeighborCollectives::neighbor_allgather`], the received blocks
    /// where `rl` lays them out (MPI_Neighbor_allgatherv).
    fn neighbor_allgatherv(
        &self,
        g: &NeighborGraph,
        send: &Self::Buf,
        recv: &mut Self::Buf,
        count: usize,
        rl: &Blocks,
        dt: Datatype,
    );
    /// Block k of `count` elements to destination k, block k from source k
    /// (MPI_Neighbor_alltoall).
    fn neighbor_alltoall(&self, g: &NeighborGraph, send: &Self::Buf, recv: &mut Self::Buf, count: usize, dt: Datatype);
    /// As [`NeighborCollectives::neighbor_alltoall`] with layouts
    /// (MPI_Neighbor_alltoallv).
    fn neighbor_alltoallv(
        &self,
        g: &NeighborGraph,
        send: &Self::Buf,
        recv: &mut Self::Buf,
        sl: &Blocks,
        rl: &Blocks,
        dt: Datatype,
    );
    /// The same with byte displacements and a type per neighbour, every
    /// one `dt` (MPI_Neighbor_alltoallw).
    fn neighbor_alltoallw(
        &self,
        g: &NeighborGraph,
        send: &Self::Buf,
        recv: &mut Self::Buf,
        sl: &ByteBlocks,
        rl: &ByteBlocks,
        dt: Datatype,
    );
}
