//! The topology arithmetic of the neighbourhood collectives: grid shapes,
//! neighbours, graph files, the job-size rule and OSU's line; pure.

use super::*;
use std::path::PathBuf;

fn cart(dims: usize, radius: usize) -> Neighborhood {
    Neighborhood::Cart { dims, radius }
}

#[test]
fn grid_shapes_are_the_most_balanced_factors_largest_first() {
    assert_eq!(dims_create(4, 1), [4]);
    assert_eq!(dims_create(3, 2), [3, 1]);
    assert_eq!(dims_create(12, 2), [4, 3]);
    assert_eq!(dims_create(12, 3), [3, 2, 2]);
    assert_eq!(dims_create(16, 2), [4, 4]);
    assert_eq!(dims_create(7, 3), [7, 1, 1]);
    // Greedy prime assignment would give 12x6; MPI_Dims_create 9x8.
    assert_eq!(dims_create(72, 2), [9, 8]);
    assert_eq!(dims_create(1, 2), [1, 1]);
}

#[test]
fn a_ring_has_the_two_ranks_beside_each_rank() {
    let n = cart(1, 1);
    let a = adjacency(&n, 0, 4);
    assert_eq!(a.sources, [3, 1]);
    assert_eq!(a.sources, a.destinations);
    assert_eq!(adjacency(&n, 2, 5).sources, [1, 3]);
    // radius 2 on 5 ranks: displacements -2, -1, +1, +2
    assert_eq!(adjacency(&cart(1, 2), 0, 5).sources, [3, 4, 1, 2]);
}

#[test]
fn a_grid_rank_has_its_surrounding_cells_in_displacement_order() {
    // 3x3, row-major: rank 4 is the centre, rank 0 a corner that wraps.
    let n = cart(2, 1);
    assert_eq!(adjacency(&n, 4, 9).destinations, [0, 1, 2, 3, 5, 6, 7, 8]);
    assert_eq!(adjacency(&n, 0, 9).sources, [8, 6, 7, 2, 1, 5, 3, 4]);
    // (2R+1)^D - 1 neighbours, none of them the rank itself, none twice
    let a = adjacency(&cart(3, 1), 13, 27);
    let mut d = a.destinations.clone();
    d.sort();
    d.dedup();
    assert_eq!((a.destinations.len(), d.len()), (26, 26));
    assert!(!d.contains(&13));
}

#[test]
fn the_radius_must_leave_every_neighbour_distinct() {
    assert!(fits(&cart(1, 1), 3).is_ok());
    let e = fits(&cart(1, 1), 2).unwrap_err();
    assert!(matches!(e, JobShapeError::NeighborhoodRadius { max: 0, .. }), "{e:?}");
    let text = fits(&cart(2, 1), 3).unwrap_err().to_string();
    assert!(text.starts_with("Neighborhood radius too large [-N cart:2:1]") && text.contains("3x1"), "{text}");
    assert!(fits(&cart(2, 1), 9).is_ok());
    assert!(fits(&cart(1, 2), 4).is_err() && fits(&cart(1, 2), 5).is_ok());
}

#[test]
fn graph_files_give_sources_and_destinations_in_file_order() {
    let edges = parse_edges("# from,to\n0,1\n\n2, 0\n0,2\n1,1\n").unwrap();
    assert_eq!(edges, [(0, 1), (2, 0), (0, 2), (1, 1)]);
    let n = Neighborhood::Graph { path: PathBuf::from("g"), edges };
    let a = adjacency(&n, 0, 3);
    assert_eq!((a.sources.as_slice(), a.destinations.as_slice()), (&[2][..], &[1, 2][..]));
    let a = adjacency(&n, 1, 3);
    assert_eq!((a.sources.as_slice(), a.destinations.as_slice()), (&[0, 1][..], &[1][..]));
    assert!(fits(&n, 3).is_ok());
    let e = fits(&n, 2).unwrap_err().to_string();
    assert!(e.starts_with("Number of processes is less than graph nodes [-N graph:g]") && e.contains("rank 2"), "{e}");
}

#[test]
fn bad_graph_lines_are_refused() {
    let pattern = |text: &str| match parse_edges(text) {
        Err(EdgesError::Pattern(e)) => e,
        other => panic!("{text:?}: {other:?}"),
    };
    assert!(pattern("0 1\n").contains("line 1"));
    pattern("0,x\n");
    pattern("0,-1\n");
    assert_eq!(pattern("# a\n0,1\n1,0\n0,1\n"), "line 4 lists the edge 0,1 again");
    assert_eq!(parse_edges("# nothing\n").unwrap(), []);
}

/// Past the limit, the first edge too many is refused by its line
/// (comments and blank lines counted); up to it, every edge is read.
/// tests/it/neighborhood.rs reads a million edges (the limit) at once.
#[test]
fn edges_beyond_the_limit_are_refused_by_line() {
    let text = "# three\n0,1\n1,2\n\n2,0\n";
    assert_eq!(parse_edges_within(text, 3).unwrap(), [(0, 1), (1, 2), (2, 0)]);
    assert_eq!(parse_edges_within(&format!("{text}# one more\n0,2\n"), 3), Err(EdgesError::TooMany { line: 7 }));
    assert_eq!(MAX_GRAPH_EDGES, 1_000_000);
}

#[test]
fn the_shape_line_is_osus() {
    assert_eq!(shape_line(&cart(1, 1), 3).unwrap(), "Dimensions size = 3 ");
    assert_eq!(shape_line(&cart(2, 1), 3).unwrap(), "Dimensions size = 3 1 ");
    assert_eq!(shape_line(&Neighborhood::Graph { path: PathBuf::new(), edges: vec![] }, 3), None);
}

#[test]
fn buffers_hold_a_block_per_rank_or_neighbour() {
    use crate::bench::neighborhood::NeighborOp;
    use crate::bench::{
        neighborhood::neighbor_allgather::NeighborAllgather, neighborhood::neighbor_alltoall::NeighborAlltoall,
    };
    assert_eq!(NeighborAllgather::OP, Op::NeighborAllgather);
    assert_eq!(Nbr::<NeighborAllgather>::new(4).buffer_bytes(8, 4), (8, 32));
    assert_eq!(Nbr::<NeighborAlltoall>::new(4).buffer_bytes(8, 4), (32, 32));
    let many = Adjacency { sources: vec![0, 1, 2], destinations: vec![0, 1, 2] };
    let g = NeighborGraph::detached(many);
    assert_eq!(Nbr::<NeighborAlltoall>::over(g, 2).buffer_bytes(8, 2), (24, 24));
}
