//! How much pqperf prints: the global `-q/--quiet` and `-v/--verbose` flags set one
//! process-wide [`Level`]; the commands ask it before printing status lines, progress and
//! details. Results a caller reads (tables, lists, JSON, summaries of failures) and errors are
//! printed at every level. Child pqperf processes get the same level ([`child_args`]).

use std::sync::atomic::{AtomicU8, Ordering};

/// How much a command prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `-q`: errors, warnings and the requested results only; no status lines, no progress.
    Quiet = 0,
    /// The default: status lines and progress of long phases.
    Normal = 1,
    /// `-v`: also the details (the commands a step runs, the options in force, every unit).
    Verbose = 2,
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Normal as u8);

/// Sets the process-wide level (from the command line, once).
pub fn set(level: Level) {
    LEVEL.store(level as u8, Ordering::SeqCst);
}

/// The process-wide level.
pub fn level() -> Level {
    match LEVEL.load(Ordering::SeqCst) {
        0 => Level::Quiet,
        1 => Level::Normal,
        _ => Level::Verbose,
    }
}

/// `-q` was given.
pub fn quiet() -> bool {
    level() == Level::Quiet
}

/// `-v` was given.
pub fn verbose() -> bool {
    level() == Level::Verbose
}

/// The level as flags for a child pqperf process (nothing at the default level).
pub fn child_args() -> Vec<String> {
    match level() {
        Level::Quiet => vec!["--quiet".into()],
        Level::Normal => Vec::new(),
        Level::Verbose => vec!["--verbose".into()],
    }
}

/// A status line on stdout (not at `--quiet`).
pub fn status(line: impl AsRef<str>) {
    if !quiet() {
        println!("{}", line.as_ref());
    }
}

/// A status line on stderr (not at `--quiet`): what a command is doing, beside its results.
pub fn note(line: impl AsRef<str>) {
    if !quiet() {
        eprintln!("{}", line.as_ref());
    }
}

/// A detail on stderr (only at `--verbose`).
pub fn detail(line: impl AsRef<str>) {
    if verbose() {
        eprintln!("{}", line.as_ref());
    }
}

/// A duration as people write it (`5 min 45 s`).
pub use pqperf_campaign::observe::human;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_processes_get_the_level() {
        set(Level::Quiet);
        assert_eq!(child_args(), ["--quiet"]);
        set(Level::Verbose);
        assert_eq!(child_args(), ["--verbose"]);
        set(Level::Normal);
        assert!(child_args().is_empty());
    }
}
