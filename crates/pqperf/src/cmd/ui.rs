//! How much pqperf prints: the global `-q/--quiet` and `-v/--verbose` flags set one
//! process-wide [`Level`]; the commands ask it before printing status lines, progress and
//! details. Results a caller reads (tables, lists, JSON, summaries of failures) and errors are
//! printed at every level. Child pqperf processes get the same level ([`child_args`]).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

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

/// How often a step that prints nothing says that it is still running, when stderr is not a
/// terminal (a log file, CI).
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(30);

/// Shows that a long step is alive while it runs: a spinner with the elapsed time on a
/// terminal, a line every [`HEARTBEAT_EVERY`] otherwise (`<what>: still running, 1 min 30 s`).
/// Silent at `--quiet`. Everything goes to stderr, never into a result on stdout. Stops when
/// dropped.
pub struct Heartbeat {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    spinner: Option<indicatif::ProgressBar>,
}

impl Heartbeat {
    /// Starts the heartbeat of the step `what`.
    pub fn start(what: &str) -> Heartbeat {
        Heartbeat::start_with(what, std::io::stderr().is_terminal(), HEARTBEAT_EVERY)
    }

    /// Starts it with an explicit terminal choice and line interval (tests).
    pub fn start_with(what: &str, terminal: bool, every: Duration) -> Heartbeat {
        let none = || Heartbeat {
            stop: None,
            thread: None,
            spinner: None,
        };
        if quiet() {
            return none();
        }
        if terminal {
            let sp = indicatif::ProgressBar::new_spinner();
            if let Ok(st) = indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]") {
                sp.set_style(st);
            }
            sp.set_message(what.to_string());
            sp.enable_steady_tick(Duration::from_millis(250));
            return Heartbeat {
                stop: None,
                thread: None,
                spinner: Some(sp),
            };
        }
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let what = what.to_string();
        let t0 = Instant::now();
        let thread = std::thread::spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                eprintln!("{what}: still running, {}", human(t0.elapsed()));
            }
        });
        Heartbeat {
            stop: Some(tx),
            thread: Some(thread),
            spinner: None,
        }
    }
}

impl Heartbeat {
    /// Whether a spinner is drawn (on a terminal): other output on stderr would break it.
    pub fn is_spinner(&self) -> bool {
        self.spinner.is_some()
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        if let Some(sp) = self.spinner.take() {
            sp.finish_and_clear();
        }
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

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
