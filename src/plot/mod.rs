//! `commbench plot RUN...`: SVG charts of results against message size.
pub fn main(_args: &[String]) -> i32 {
    2
}
