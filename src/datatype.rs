//! The element types a benchmark can move (OSU's `-T`): their size, the MPI
//! name printed in `# Datatype:` lines, and how `-T` words select them; and
//! the operation a reduction applies to them ([`Reduction`]).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Datatype {
    #[serde(rename = "MPI_CHAR")]
    Char,
    #[serde(rename = "MPI_INT")]
    Int,
    #[serde(rename = "MPI_FLOAT")]
    Float,
}

impl Datatype {
    pub const ALL: [Datatype; 3] = [Datatype::Char, Datatype::Int, Datatype::Float];

    /// Bytes per element (C `char`, `int`, `float`).
    pub fn size(self) -> usize {
        match self {
            Datatype::Char => 1,
            Datatype::Int => 4,
            Datatype::Float => 4,
        }
    }

    /// The name MPI reports for the type, as printed after `# Datatype:`.
    pub(crate) fn mpi_name(self) -> &'static str {
        match self {
            Datatype::Char => "MPI_CHAR",
            Datatype::Int => "MPI_INT",
            Datatype::Float => "MPI_FLOAT",
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
/// nccl-tests' `-o` picks one. `avg` is NCCL's own (the sum divided by the
/// ranks, in the element type; MPI has none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reduction {
    #[default]
    Sum,
    Prod,
    Max,
    Min,
    Avg,
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
        }
    }

    /// Whether it is the sum (what a run record leaves unsaid).
    pub fn is_sum(&self) -> bool {
        *self == Reduction::Sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
