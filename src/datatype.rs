//! The element types a benchmark can move (OSU's `-T`, and the exact types
//! of nccl-tests' `-d` beyond them): their size, the MPI name printed in
//! `# Datatype:` lines, and how `-T` words select them; and the operation a
//! reduction applies to them ([`Reduction`]).

use serde::{Deserialize, Serialize};

pub mod narrow;
pub mod verifiable;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Datatype {
    #[serde(rename = "MPI_CHAR")]
    Char,
    #[serde(rename = "MPI_INT")]
    Int,
    #[serde(rename = "MPI_FLOAT")]
    Float,
    // nccl-tests' other exact types (`-d uint8` ...); OSU's `-T` has none
    // of them.
    #[serde(rename = "MPI_UINT8_T")]
    Uint8,
    #[serde(rename = "MPI_UINT32_T")]
    Uint32,
    #[serde(rename = "MPI_INT64_T")]
    Int64,
    #[serde(rename = "MPI_UINT64_T")]
    Uint64,
    #[serde(rename = "MPI_DOUBLE")]
    Double,
    // NCCL's narrow floating-point types (MPI has none, so their names are
    // NCCL's): IEEE half, bfloat16 and the two 8-bit formats of NCCL 2.24.
    #[serde(rename = "ncclFloat16")]
    Half,
    #[serde(rename = "ncclBfloat16")]
    Bfloat16,
    #[serde(rename = "ncclFloat8e4m3")]
    F8e4m3,
    #[serde(rename = "ncclFloat8e5m2")]
    F8e5m2,
}

impl Datatype {
    /// OSU's `-T all`: its three types.
    pub const ALL: [Datatype; 3] = [Datatype::Char, Datatype::Int, Datatype::Float];

    /// Every type, OSU's first, then those MPI has (the order of MPI's
    /// handles for them), then the narrow floats only NCCL moves.
    pub const EVERY: [Datatype; 12] = [
        Datatype::Char,
        Datatype::Int,
        Datatype::Float,
        Datatype::Uint8,
        Datatype::Uint32,
        Datatype::Int64,
        Datatype::Uint64,
        Datatype::Double,
        Datatype::Half,
        Datatype::Bfloat16,
        Datatype::F8e4m3,
        Datatype::F8e5m2,
    ];

    /// The type with code `code` ([`Datatype::code`]), if any.
    pub fn from_code(code: u8) -> Option<Datatype> {
        Datatype::EVERY.get(usize::from(code).checked_sub(1)?).copied()
    }

    /// A small number for the type, never 0 (0 is "no type" where it
    /// travels as a byte: the watchdog's positions).
    pub fn code(self) -> u8 {
        self as u8 + 1
    }

    /// Bytes per element (C `char`, `int`, `float`, and the sized types).
    pub fn size(self) -> usize {
        match self {
            Datatype::Char | Datatype::Uint8 | Datatype::F8e4m3 | Datatype::F8e5m2 => 1,
            Datatype::Half | Datatype::Bfloat16 => 2,
            Datatype::Int | Datatype::Float | Datatype::Uint32 => 4,
            Datatype::Int64 | Datatype::Uint64 | Datatype::Double => 8,
        }
    }

    /// Whether its values are floating point.
    pub fn is_float(self) -> bool {
        self.narrow().is_some() || matches!(self, Datatype::Float | Datatype::Double)
    }

    /// The layout of a narrow floating-point type (under 32 bits), which
    /// Rust has no type for.
    pub fn narrow(self) -> Option<narrow::Format> {
        match self {
            Datatype::Half => Some(narrow::HALF),
            Datatype::Bfloat16 => Some(narrow::BFLOAT16),
            Datatype::F8e4m3 => Some(narrow::E4M3),
            Datatype::F8e5m2 => Some(narrow::E5M2),
            _ => None,
        }
    }

    /// Whether MPI has a type for it (every type but the narrow floats).
    pub fn in_mpi(self) -> bool {
        self.narrow().is_none()
    }

    /// The name MPI reports for the type, as printed after `# Datatype:`.
    pub(crate) fn mpi_name(self) -> &'static str {
        match self {
            Datatype::Char => "MPI_CHAR",
            Datatype::Int => "MPI_INT",
            Datatype::Float => "MPI_FLOAT",
            Datatype::Uint8 => "MPI_UINT8_T",
            Datatype::Uint32 => "MPI_UINT32_T",
            Datatype::Int64 => "MPI_INT64_T",
            Datatype::Uint64 => "MPI_UINT64_T",
            Datatype::Double => "MPI_DOUBLE",
            Datatype::Half => "ncclFloat16",
            Datatype::Bfloat16 => "ncclBfloat16",
            Datatype::F8e4m3 => "ncclFloat8e4m3",
            Datatype::F8e5m2 => "ncclFloat8e5m2",
        }
    }

    /// Its name in nccl-tests' `-d` and `type` column.
    pub fn nccl_name(self) -> &'static str {
        match self {
            Datatype::Char => "int8",
            Datatype::Int => "int32",
            Datatype::Float => "float",
            Datatype::Uint8 => "uint8",
            Datatype::Uint32 => "uint32",
            Datatype::Int64 => "int64",
            Datatype::Uint64 => "uint64",
            Datatype::Double => "double",
            Datatype::Half => "half",
            Datatype::Bfloat16 => "bfloat16",
            Datatype::F8e4m3 => "f8e4m3",
            Datatype::F8e5m2 => "f8e5m2",
        }
    }

    /// Parses one `-T` word. Case-insensitive; `mpi_char`, `mpi_int`,
    /// `mpi_float` (also without the `mpi_` prefix) or `all`.
    pub(crate) fn parse_list(word: &str) -> Option<Vec<Datatype>> {
        let w = word.to_ascii_lowercase();
        let w = w.strip_prefix("mpi_").unwrap_or(&w);
        match w {
            "char" => Some(vec![Datatype::Char]),
            "int" => Some(vec![Datatype::Int]),
            "float" => Some(vec![Datatype::Float]),
            "all" if !word.to_ascii_lowercase().starts_with("mpi_") => Some(Datatype::ALL.to_vec()),
            _ => None,
        }
    }
}

/// The operation a reducing collective (allreduce, reduce, reduce-scatter)
/// applies element by element across ranks: OSU's benchmarks always sum;
/// nccl-tests' `-o` picks one. `avg` and `mulsum` are NCCL's own (MPI has
/// neither): the sum divided by the ranks, in the element type; and the
/// sum of each rank's input first multiplied by a scalar of its own, which
/// nccl-tests makes 1 on even ranks and 2 on odd ones
/// ([`Reduction::pre_mul_scalar`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reduction {
    #[default]
    Sum,
    Prod,
    Max,
    Min,
    Avg,
    MulSum,
}

impl Reduction {
    /// Its name as nccl-tests prints it in the `redop` column.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Prod => "prod",
            Reduction::Max => "max",
            Reduction::Min => "min",
            Reduction::Avg => "avg",
            Reduction::MulSum => "mulsum",
        }
    }

    /// The scalar rank `rank` multiplies its input by in a `mulsum`, as
    /// nccl-tests chooses it: 1 on even ranks, 2 on odd ones.
    pub fn pre_mul_scalar(rank: usize) -> u64 {
        1 + (rank % 2) as u64
    }

    /// `mulsum`'s scalars summed over ranks `0..np`: each even rank's 1 and
    /// each odd rank's 2.
    pub fn pre_mul_total(np: usize) -> u64 {
        (np + np / 2) as u64
    }

    /// Whether it is the sum (what a run record leaves unsaid).
    pub fn is_sum(&self) -> bool {
        *self == Reduction::Sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MPI's handles are looked up in EVERY's order by discriminant; OSU's
    /// `-T all` stays its three.
    #[test]
    fn every_type_in_discriminant_order() {
        for (i, dt) in Datatype::EVERY.into_iter().enumerate() {
            assert_eq!(dt as usize, i, "{dt:?}");
        }
        let sizes = Datatype::EVERY.map(Datatype::size);
        assert_eq!(sizes, [1, 4, 4, 1, 4, 8, 8, 8, 2, 2, 1, 1]);
        assert_eq!(Datatype::parse_list("all"), Some(Datatype::ALL.to_vec()));
        assert_eq!(Datatype::parse_list("double"), None, "OSU's -T has no double");
        assert_eq!(Datatype::EVERY.iter().filter(|d| d.is_float()).count(), 6);
        assert_eq!(Datatype::EVERY.iter().filter(|d| d.in_mpi()).count(), 8);
        for dt in Datatype::EVERY {
            assert_eq!(Datatype::from_code(dt.code()), Some(dt));
            let name = serde_json::to_string(&dt).unwrap();
            assert_eq!(name, format!("\"{}\"", dt.mpi_name()), "the record's name is the CSV's");
        }
        assert_eq!(Datatype::from_code(0), None);
        assert_eq!(Datatype::from_code(13), None);
    }

    #[test]
    fn parse_words() {
        assert_eq!(Datatype::parse_list("MPI_CHAR"), Some(vec![Datatype::Char]));
        assert_eq!(Datatype::parse_list("mpi_int"), Some(vec![Datatype::Int]));
        assert_eq!(Datatype::parse_list("Float"), Some(vec![Datatype::Float]));
        assert_eq!(Datatype::parse_list("all"), Some(Datatype::ALL.to_vec()));
        assert_eq!(Datatype::parse_list("ALL"), Some(Datatype::ALL.to_vec()));
        assert_eq!(Datatype::parse_list("mpi_all"), None);
        assert_eq!(Datatype::parse_list("mpi_double"), None);
        assert_eq!(Datatype::parse_list(""), None);
    }

    #[test]
    fn sizes_and_names() {
        assert_eq!(Datatype::Int.size(), 4);
        assert_eq!(Datatype::Char.mpi_name(), "MPI_CHAR");
    }
}
