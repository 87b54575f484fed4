//! How a run ends from deep inside, when a failure cannot travel back up as
//! an error: a transport call that fails mid-run (NCCL, CUDA) on one rank
//! while the others wait inside the library, or a GPU staging copy that
//! fails inside a fill. One line on stderr, the run record ended `error`
//! by whichever rank saw it ([`set_record_end`], set by the job once the
//! record exists), then MPI_Abort (see `World::fail`).
//!
//! Code that cannot reach the world (a buffer's fill) raises a [`Fatal`]
//! panic instead; the panic hook recognises it and ends the job the same
//! way, without calling it an internal error.

use std::sync::Mutex;

static PROGRAM: Mutex<Option<&'static str>> = Mutex::new(None);

/// Names the program the lines of [`crate::backend::world::World::fail`],
/// the panic hook, the watchdog and the signal thread start with: set by
/// the job, and again for each benchmark of a shared launch (`commbench
/// suite --one-launch`).
pub(crate) fn set_program(name: &'static str) {
    if let Ok(mut p) = PROGRAM.lock() {
        *p = Some(name);
    }
}

/// The program's name for a failure line (`commbench` before it is set).
pub fn program() -> &'static str {
    PROGRAM.lock().ok().and_then(|p| *p).unwrap_or("commbench")
}

/// What ends the run record after such a failure: the line and the exit
/// status.
pub(crate) type RecordEnd = Box<dyn Fn(&str, i32) + Send>;

static RECORD_END: Mutex<Option<RecordEnd>> = Mutex::new(None);

/// Says how this rank ends the run record when a failure ends the job
/// (replaces the previous one).
pub(crate) fn set_record_end(f: RecordEnd) {
    if let Ok(mut slot) = RECORD_END.lock() {
        *slot = Some(f);
    }
}

/// Forgets how to end the run record: the record it ended is finished
/// (the next benchmark of a shared launch has none yet).
pub(crate) fn clear_record_end() {
    if let Ok(mut slot) = RECORD_END.lock() {
        *slot = None;
    }
}

/// Ends the run record with `line`, if this rank was told how. Never
/// blocks: a failure while the record is being ended elsewhere leaves it.
pub(crate) fn end_record(line: &str, code: i32) {
    if let Ok(slot) = RECORD_END.try_lock() {
        if let Some(f) = slot.as_ref() {
            f(line, code);
        }
    }
}

/// A failure the run cannot go on after, raised as a panic payload where
/// no error can be returned; its text is the whole line to print.
#[derive(Debug)]
pub(crate) struct Fatal(pub String);

/// Raises `line` as a [`Fatal`] panic.
#[cold]
pub fn raise(line: String) -> ! {
    std::panic::panic_any(Fatal(line))
}
