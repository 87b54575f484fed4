//! The start-up benchmarks: osu_init and osu_hello.

pub mod hello;
pub mod init;
