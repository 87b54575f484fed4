use super::*;

/// Values nccl-tests 2.19.6's verifiable generator gives, one line per
/// type, operation, ranks, seed and index: the expected output, then
/// each rank's input, as hex bit patterns. Made by compiling its
/// generator's host path with CUDA's own half/bfloat16/fp8 conversions
/// (the wheels' headers) and printing; one change to it: an unsigned
/// division by zero (fp8 products over 8 ranks) gives all ones, as the
/// GPU's does, where the host would trap.
const REFERENCE: &str = include_str!("nccl_tests_2.19.6.txt");

fn datatype(name: &str) -> Datatype {
    match name {
        "int8" => Datatype::Char,
        "uint8" => Datatype::Uint8,
        "int32" => Datatype::Int,
        "uint32" => Datatype::Uint32,
        "int64" => Datatype::Int64,
        "uint64" => Datatype::Uint64,
        "half" => Datatype::Half,
        "float" => Datatype::Float,
        "double" => Datatype::Double,
        "bfloat16" => Datatype::Bfloat16,
        "f8e4m3" => Datatype::F8e4m3,
        "f8e5m2" => Datatype::F8e5m2,
        other => panic!("type {other}"),
    }
}

fn operation(name: &str) -> Reduction {
    match name {
        "sum" => Reduction::Sum,
        "prod" => Reduction::Prod,
        "max" => Reduction::Max,
        "min" => Reduction::Min,
        "avg" => Reduction::Avg,
        "mulsum" => Reduction::MulSum,
        other => panic!("op {other}"),
    }
}

fn field<'a>(word: &'a str, key: &str) -> &'a str {
    word.strip_prefix(key).unwrap_or_else(|| panic!("{word}: no {key}"))
}

#[test]
fn mixing_and_hashing_are_nccl_tests() {
    let first = REFERENCE.lines().next().expect("a line");
    let w: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(format!("{:x}", mix_bits(0x0123_4567_89ab_cdef)), w[1]);
    assert_eq!(format!("{:x}", hash_of(5, 77)), w[3]);
}

/// Every type, operation, 1 to 8 ranks, two seeds, indices past 2^32:
/// each rank's input exactly, and the output exactly but for a float
/// average, which may be off by its tolerance (the reference adds fp8 in
/// float on the host where the GPU adds in half).
#[test]
fn every_type_and_operation_gives_nccl_tests_values() {
    let mut lines = 0;
    for line in REFERENCE.lines().skip(1) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let (dt, op) = (datatype(w[0]), operation(w[1]));
        let rank_n: usize = field(w[2], "n=").parse().unwrap();
        let seed: u64 = field(w[3], "seed=").parse().unwrap();
        let index: u64 = field(w[4], "ix=").parse().unwrap();
        let want_out = u64::from_str_radix(field(w[5], "out="), 16).unwrap();
        let inputs: Vec<u64> = field(w[6], "in=")
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| u64::from_str_radix(s, 16).unwrap())
            .collect();
        assert_eq!(inputs.len(), rank_n, "{line}");
        for (r, &want) in inputs.iter().enumerate() {
            let got = input(dt, op, Stream { seed, rank_n, rank_me: r }, index);
            assert_eq!(format!("{got:x}"), format!("{want:x}"), "input of rank {r}: {line}");
        }
        let got = output(dt, op, rank_n, seed, index);
        assert!(got.abs_diff(want_out) <= tolerance(dt, op), "output {got:x}: {line}");
        lines += 1;
    }
    assert_eq!(lines, 12 * 6 * 4 * 2 * 3);
}

/// Beyond the reference's rank counts: every rank's inputs, combined in
/// rank order with the type's own rounding (as a GPU might, in any
/// order: the partial sums are exact), give the output, at rank counts
/// up to 521 (where an fp8 product's partitions divide by zero).
#[test]
fn inputs_reduce_to_the_output_at_any_rank_count() {
    let ops = [Reduction::Sum, Reduction::Prod, Reduction::Max, Reduction::Min, Reduction::Avg, Reduction::MulSum];
    for rank_n in [2, 5, 13, 64, 521] {
        for dt in Datatype::EVERY {
            for op in ops {
                for index in [0u64, 3, 99, 1 << 33] {
                    let seed = 0x5eed ^ rank_n as u64;
                    let x = |r: usize| input(dt, op, Stream { seed, rank_n, rank_me: r }, index);
                    let want = output(dt, op, rank_n, seed, index);
                    let got = if let Some(int) = Int::of(dt) {
                        let pre = |r: usize| {
                            if op == Reduction::MulSum {
                                x(r).wrapping_mul(Reduction::pre_mul_scalar(r)) & int.mask()
                            } else {
                                x(r)
                            }
                        };
                        let acc = (1..rank_n).fold(pre(0), |a, r| int.reduce(op, a, pre(r)));
                        if op == Reduction::Avg {
                            (int.wide(acc) / rank_n as i128) as u64 & int.mask()
                        } else {
                            acc
                        }
                    } else {
                        let v = |r: usize| value_of(dt, x(r));
                        let acc = match op {
                            Reduction::Sum => (0..rank_n).map(v).sum::<f64>(),
                            Reduction::MulSum => (0..rank_n).map(|r| v(r) * Reduction::pre_mul_scalar(r) as f64).sum(),
                            Reduction::Prod => (0..rank_n).map(v).product(),
                            Reduction::Max => (0..rank_n).map(v).fold(f64::MIN, f64::max),
                            Reduction::Min => (0..rank_n).map(v).fold(f64::MAX, f64::min),
                            Reduction::Avg => (0..rank_n).map(v).sum::<f64>() / rank_n as f64,
                        };
                        bits_of(dt, acc)
                    };
                    assert!(
                        got.abs_diff(want) <= tolerance(dt, op),
                        "{dt:?} {op:?} n {rank_n} index {index}: reduced {got:x}, output {want:x}"
                    );
                }
            }
        }
    }
}
