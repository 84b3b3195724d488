//! What a campaign reports while it runs, as observers: an [`Observer`] receives the
//! timestamped log lines and the progress of long phases. [`LogFile`] appends the lines to
//! `campaign.log`, [`Terminal`] echoes them and draws the progress bar (on a terminal only),
//! [`Null`] ignores everything (tests). [`Logger`] stamps the lines and fans every event out.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::CampaignError;

type Res<T> = Result<T, CampaignError>;

/// Receiver of campaign events; every method does nothing unless implemented.
pub trait Observer: Send + Sync {
    /// One timestamped log line.
    fn line(&self, _line: &str) {}
    /// A long phase starts; `total` in estimated units (seconds, or items).
    fn progress_begin(&self, _label: &str, _total: f64) {}
    /// `amount` more units are done.
    fn progress_advance(&self, _amount: f64) {}
    /// The long phase ended.
    fn progress_end(&self) {}
}

/// Appends every line to a log file (`campaign.log`).
pub struct LogFile(Mutex<std::fs::File>);

impl LogFile {
    /// Opens `path` for appending (creating its folder).
    pub fn open(path: &Path) -> Res<LogFile> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(LogFile(Mutex::new(f)))
    }
}

impl Observer for LogFile {
    fn line(&self, line: &str) {
        if let Ok(mut f) = self.0.lock() {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// Echoes the lines on stdout (when `echo`) and draws the progress bar on stderr when it is a
/// terminal (hidden otherwise); lines are printed above a visible bar.
pub struct Terminal {
    echo: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Terminal {
    /// A terminal observer; `echo` prints the log lines.
    pub fn new(echo: bool) -> Terminal {
        Terminal {
            echo,
            bar: Mutex::new(None),
        }
    }

    fn bar(&self) -> Option<ProgressBar> {
        self.bar.lock().ok().and_then(|b| b.clone())
    }
}

impl Observer for Terminal {
    fn line(&self, line: &str) {
        if self.echo {
            match self.bar() {
                Some(b) if !b.is_hidden() => b.println(line),
                _ => println!("{line}"),
            }
        }
    }

    fn progress_begin(&self, label: &str, total: f64) {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let b = ProgressBar::with_draw_target(Some((total * 1000.0).max(1.0) as u64), target);
        b.set_style(
            ProgressStyle::with_template(
                "{msg:24} [{elapsed_precise}] {wide_bar} {percent:>3}% ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b.set_message(label.to_string());
        if let Ok(mut g) = self.bar.lock() {
            *g = Some(b);
        }
    }

    fn progress_advance(&self, amount: f64) {
        if let Some(b) = self.bar() {
            b.inc((amount * 1000.0) as u64);
        }
    }

    fn progress_end(&self) {
        if let Ok(mut g) = self.bar.lock()
            && let Some(b) = g.take()
        {
            b.finish_and_clear();
        }
    }
}

/// Ignores every event.
pub struct Null;

impl Observer for Null {}

/// The campaign's log: stamps each line and hands every event to its observers.
pub struct Logger {
    observers: Vec<Box<dyn Observer>>,
}

impl Logger {
    /// `campaign.log` at `path` plus the terminal (lines echoed when `echo`).
    pub fn open(path: &Path, echo: bool) -> Res<Logger> {
        Ok(Logger::with(vec![
            Box::new(LogFile::open(path)?),
            Box::new(Terminal::new(echo)),
        ]))
    }

    /// A logger that reports nowhere.
    pub fn null() -> Logger {
        Logger::with(vec![Box::new(Null)])
    }

    /// A logger over the given observers.
    pub fn with(observers: Vec<Box<dyn Observer>>) -> Logger {
        Logger { observers }
    }

    /// Logs one line (prefixed with the UTC time).
    pub fn log(&self, msg: impl AsRef<str>) {
        let line = format!("{} {}", local_stamp(), msg.as_ref());
        for o in &self.observers {
            o.line(&line);
        }
    }

    /// A long phase starts (`total` estimated units).
    pub fn progress_begin(&self, label: &str, total: f64) {
        for o in &self.observers {
            o.progress_begin(label, total);
        }
    }

    /// `amount` more units are done.
    pub fn progress_advance(&self, amount: f64) {
        for o in &self.observers {
            o.progress_advance(amount);
        }
    }

    /// The long phase ended.
    pub fn progress_end(&self) {
        for o in &self.observers {
            o.progress_end();
        }
    }
}

fn local_stamp() -> String {
    let now = time::OffsetDateTime::now_utc();
    let f = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    now.format(&f).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what it observes.
    #[derive(Default)]
    struct Seen(Mutex<Vec<String>>);

    impl Observer for std::sync::Arc<Seen> {
        fn line(&self, line: &str) {
            self.0.lock().unwrap().push(line.to_string());
        }
        fn progress_begin(&self, label: &str, total: f64) {
            self.0
                .lock()
                .unwrap()
                .push(format!("begin {label} {total}"));
        }
        fn progress_end(&self) {
            self.0.lock().unwrap().push("end".into());
        }
    }

    #[test]
    fn logger_stamps_lines_and_fans_out_to_every_observer() {
        let d = tempfile::tempdir().unwrap();
        let seen = std::sync::Arc::new(Seen::default());
        let log = Logger::with(vec![
            Box::new(LogFile::open(&d.path().join("c.log")).unwrap()),
            Box::new(seen.clone()),
            Box::new(Null),
        ]);
        log.progress_begin("measure", 2.0);
        let msg = "measure x y keygen: complete";
        log.log(msg);
        log.progress_end();
        let got = seen.0.lock().unwrap().clone();
        assert_eq!(got[0], "begin measure 2");
        assert!(got[1].ends_with(&format!(" {msg}")), "{got:?}");
        assert_eq!(got[1].len(), "2026-01-01 00:00:00 ".len() + msg.len());
        assert_eq!(got[2], "end");
        let file = std::fs::read_to_string(d.path().join("c.log")).unwrap();
        assert_eq!(file, format!("{}\n", got[1]));
    }
}
