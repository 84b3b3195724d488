//! What a campaign reports while it runs, as observers: an [`Observer`] receives the
//! timestamped log lines and the progress of long phases. [`LogFile`] appends the lines to
//! `campaign.log`, [`Terminal`] echoes them and draws the progress bar (on a terminal only),
//! [`Null`] ignores everything (tests). [`Logger`] stamps the lines and fans every event out.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::CampaignError;

type Res<T> = Result<T, CampaignError>;

/// Receiver of campaign events; every method does nothing unless implemented.
pub trait Observer: Send + Sync {
    /// One timestamped log line.
    fn line(&self, _line: &str) {}
    /// A long phase starts; `total` in estimated units (seconds, or items; 0: no estimate).
    fn progress_begin(&self, _label: &str, _total: f64) {}
    /// `amount` more units are done.
    fn progress_advance(&self, _amount: f64) {}
    /// The unit that starts now (`ml-dsa-44 ml-dsa-44 sign`), named while it runs.
    fn progress_item(&self, _what: &str) {}
    /// The phase's own estimate of the seconds left (the measure phase's `plan::Eta`), in
    /// place of the elapsed time per unit done.
    fn progress_left(&self, _seconds: f64) {}
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

/// Echoes the lines on stdout (when `echo`) and shows the progress of a long phase on stderr
/// (only when `echo`: a quiet campaign shows none): on a terminal a bar with the elapsed time
/// (redrawn every second, so a long unit is seen to run) and the running unit; elsewhere (a
/// log file, CI) a line every [`Terminal::EVERY`] naming the running unit and for how long.
/// Lines are printed above a visible bar.
pub struct Terminal {
    echo: bool,
    bar: Mutex<Option<ProgressBar>>,
    /// What the bar's "left" figure counts down from (see [`Countdown`]).
    countdown: std::sync::Arc<Mutex<Countdown>>,
    /// Periodic lines instead of a bar: the interval and where they go (stderr).
    lines: Option<(std::time::Duration, Sink)>,
    beat: Mutex<Option<Beat>>,
}

/// The time left that a bar shows: re-estimated when units finish (the elapsed time per
/// unit done so far times the units left) and counted down in between, so it does not rise
/// while a long unit runs (an interleaved phase finishes its units in bursts).
#[derive(Debug, Default, Clone, Copy)]
struct Countdown {
    /// When the estimate was made, and the seconds it said were left.
    at: Option<(std::time::Instant, f64)>,
}

impl Countdown {
    /// Re-estimate after `done` of `total` units in `elapsed`.
    fn update(&mut self, done: f64, total: f64, elapsed: std::time::Duration) {
        if done > 0.0 && total > 0.0 {
            let left = elapsed.as_secs_f64() * (total - done).max(0.0) / done;
            self.at = Some((std::time::Instant::now(), left));
        }
    }

    /// Seconds left now (`None` before the first unit finished).
    fn left(&self) -> Option<f64> {
        self.at
            .map(|(t, left)| (left - t.elapsed().as_secs_f64()).max(0.0))
    }

    /// `4 min 10 s`, `under 1 s`, `…` before the first estimate.
    fn text(&self) -> String {
        match self.left() {
            None => "…".into(),
            Some(s) if s < 1.0 => "under 1 s".into(),
            Some(s) => human(std::time::Duration::from_secs_f64(s)),
        }
    }
}

/// Where the periodic progress lines go.
pub type Sink = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// What the periodic lines report, shared with their thread.
#[derive(Default)]
struct BeatState {
    label: String,
    total: f64,
    done: f64,
    current: Option<(String, std::time::Instant)>,
    /// The phase's estimate of the seconds left, and when it was made.
    left: Option<(std::time::Instant, f64)>,
}

/// The thread that prints the periodic lines of one phase.
struct Beat {
    state: std::sync::Arc<Mutex<BeatState>>,
    started: std::time::Instant,
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

/// A duration as people write it: `42 s`, `5 min 45 s`, `1 h 03 min` (progress lines, the
/// CLI's estimates).
pub fn human(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

impl BeatState {
    /// `measure: 40 % of the estimate after 2 min 10 s; running ml-dsa-44 … sign for 1 min 05 s`.
    fn line(&self, elapsed: std::time::Duration) -> String {
        let mut l = format!("{}: ", self.label);
        if self.total > 0.0 {
            l.push_str(&format!(
                "{:.0} % of the estimate after {}",
                (100.0 * self.done / self.total).min(100.0),
                human(elapsed)
            ));
        } else {
            l.push_str(&format!("running for {}", human(elapsed)));
        }
        if let Some((at, left)) = self.left.filter(|(_, s)| s.is_finite()) {
            let now = (left - at.elapsed().as_secs_f64()).max(0.0);
            l.push_str(&format!(
                ", about {} left",
                human(std::time::Duration::from_secs_f64(now))
            ));
        }
        if let Some((what, since)) = &self.current {
            l.push_str(&format!("; running {what} for {}", human(since.elapsed())));
        }
        l
    }
}

impl Terminal {
    /// How often the periodic lines come when stderr is not a terminal.
    pub const EVERY: std::time::Duration = std::time::Duration::from_secs(30);

    /// A terminal observer; `echo` prints the log lines and the progress.
    pub fn new(echo: bool) -> Terminal {
        let lines: Option<(std::time::Duration, Sink)> =
            (!std::io::stderr().is_terminal()).then(|| {
                (
                    Self::EVERY,
                    std::sync::Arc::new(|l: &str| eprintln!("{l}")) as Sink,
                )
            });
        Terminal {
            echo,
            bar: Mutex::new(None),
            countdown: Default::default(),
            lines,
            beat: Mutex::new(None),
        }
    }

    /// An observer that reports progress as lines every `every` to `sink` (no bar).
    pub fn with_lines(echo: bool, every: std::time::Duration, sink: Sink) -> Terminal {
        Terminal {
            echo,
            bar: Mutex::new(None),
            countdown: Default::default(),
            lines: Some((every, sink)),
            beat: Mutex::new(None),
        }
    }

    fn bar(&self) -> Option<ProgressBar> {
        self.bar.lock().ok().and_then(|b| b.clone())
    }

    fn beat_state(&self) -> Option<std::sync::Arc<Mutex<BeatState>>> {
        self.beat
            .lock()
            .ok()
            .and_then(|b| b.as_ref().map(|b| b.state.clone()))
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
        if !self.echo {
            return;
        }
        if let Some((every, sink)) = &self.lines {
            let state = std::sync::Arc::new(Mutex::new(BeatState {
                label: label.to_string(),
                total,
                ..Default::default()
            }));
            let (stop, rx) = std::sync::mpsc::channel::<()>();
            let (every, sink, st) = (*every, sink.clone(), state.clone());
            let t0 = std::time::Instant::now();
            let thread = std::thread::spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    let line = st.lock().map(|s| s.line(t0.elapsed())).unwrap_or_default();
                    sink(&line);
                }
            });
            if let Ok(mut g) = self.beat.lock() {
                *g = Some(Beat {
                    state,
                    started: t0,
                    stop,
                    thread,
                });
            }
            return;
        }
        // No estimate (total 0): a spinner with the elapsed time. With one: the share of the
        // estimate done and the time left as [`Countdown`] says (indicatif's own ETA divides
        // by a rate that falls while a long unit runs, so it rose).
        if let Ok(mut c) = self.countdown.lock() {
            *c = Countdown::default();
        }
        let (len, template) = if total > 0.0 {
            (
                Some((total * 1000.0).max(1.0) as u64),
                "{prefix:10} [{elapsed_precise}] {wide_bar} {percent:>3}% left {left} {msg}",
            )
        } else {
            (None, "{prefix:10} [{elapsed_precise}] {spinner} {msg}")
        };
        let b = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
        let countdown = self.countdown.clone();
        b.set_style(
            ProgressStyle::with_template(template)
                .map(|st| {
                    st.with_key(
                        "left",
                        move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let t = countdown.lock().map(|c| c.text()).unwrap_or_default();
                            let _ = w.write_str(&t);
                        },
                    )
                })
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b.set_prefix(label.to_string());
        b.enable_steady_tick(std::time::Duration::from_secs(1));
        if let Ok(mut g) = self.bar.lock() {
            *g = Some(b);
        }
    }

    fn progress_advance(&self, amount: f64) {
        if let Some(b) = self.bar() {
            b.inc((amount * 1000.0) as u64);
            if let (Some(len), Ok(mut c)) = (b.length(), self.countdown.lock()) {
                c.update(b.position() as f64, len as f64, b.elapsed());
            }
        }
        if let Some(st) = self.beat_state()
            && let Ok(mut s) = st.lock()
        {
            s.done += amount;
            s.current = None;
        }
    }

    fn progress_left(&self, seconds: f64) {
        if let Ok(mut c) = self.countdown.lock()
            && seconds.is_finite()
        {
            c.at = Some((std::time::Instant::now(), seconds.max(0.0)));
        }
        if let Some(st) = self.beat_state()
            && let Ok(mut s) = st.lock()
        {
            s.left = Some((std::time::Instant::now(), seconds));
        }
    }

    fn progress_item(&self, what: &str) {
        if let Some(b) = self.bar() {
            b.set_message(what.to_string());
        }
        if let Some(st) = self.beat_state()
            && let Ok(mut s) = st.lock()
        {
            s.current = Some((what.to_string(), std::time::Instant::now()));
        }
    }

    fn progress_end(&self) {
        if let Ok(mut g) = self.bar.lock()
            && let Some(b) = g.take()
        {
            // The phase is done whatever the estimate said: the last frame shows 100 %.
            if let Some(len) = b.length() {
                b.set_position(len);
            }
            b.finish_and_clear();
        }
        let beat = self.beat.lock().ok().and_then(|mut g| g.take());
        if let Some(b) = beat {
            drop(b.stop);
            let _ = b.thread.join();
            // The last periodic line said some share of the estimate; say that it finished.
            if let (Some((_, sink)), Ok(st)) = (&self.lines, b.state.lock()) {
                sink(&format!(
                    "{}: done after {}",
                    st.label,
                    human(b.started.elapsed())
                ));
            }
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

    /// The phase's own estimate of the seconds left (after `progress_advance`).
    pub fn progress_left(&self, seconds: f64) {
        for o in &self.observers {
            o.progress_left(seconds);
        }
    }

    /// The unit that starts now (named by the progress while it runs).
    pub fn progress_item(&self, what: &str) {
        for o in &self.observers {
            o.progress_item(what);
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

/// How often a step that prints nothing says that it is still running, when stderr is not a
/// terminal (a log file, CI).
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(30);

/// Shows that a long step is alive while it runs: a spinner with the elapsed time on a
/// terminal, a line every [`HEARTBEAT_EVERY`] otherwise (`<what>: still running, 1 min 30 s`).
/// Silent when `quiet` (`--quiet`). Everything goes to stderr, never into a result on stdout. Stops when
/// dropped.
pub struct Heartbeat {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    spinner: Option<indicatif::ProgressBar>,
}

impl Heartbeat {
    /// Starts the heartbeat of the step `what`.
    pub fn start(what: &str, quiet: bool) -> Heartbeat {
        Heartbeat::start_with(
            what,
            quiet,
            std::io::stderr().is_terminal(),
            HEARTBEAT_EVERY,
        )
    }

    /// Starts it with an explicit terminal choice and line interval (tests).
    pub fn start_with(what: &str, quiet: bool, terminal: bool, every: Duration) -> Heartbeat {
        let none = || Heartbeat {
            stop: None,
            thread: None,
            spinner: None,
        };
        if quiet {
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

    #[test]
    fn a_long_unit_is_reported_while_it_runs_and_a_quiet_terminal_reports_nothing() {
        let seen = std::sync::Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = {
            let seen = seen.clone();
            std::sync::Arc::new(move |l: &str| seen.lock().unwrap().push(l.to_string())) as Sink
        };
        let every = std::time::Duration::from_millis(20);
        let t = Terminal::with_lines(true, every, sink.clone());
        t.progress_begin("measure", 4.0);
        t.progress_advance(1.0);
        t.progress_item("sphincs-shake-128f-simple sphincs-shake-128f-simple sign");
        // Wait for at least one line (no timing is asserted: only that one comes).
        let naming = |v: &[String]| v.iter().rev().find(|l| l.contains("; running ")).cloned();
        let t0 = std::time::Instant::now();
        while naming(&seen.lock().unwrap()).is_none() && t0.elapsed().as_secs() < 60 {
            std::thread::sleep(every);
        }
        t.progress_end();
        let got = seen.lock().unwrap().clone();
        let last = naming(&got).expect("a progress line naming the running unit");
        assert!(
            last.starts_with("measure: 25 % of the estimate after "),
            "{last}"
        );
        assert!(
            last.contains(
                "; running sphincs-shake-128f-simple sphincs-shake-128f-simple sign for "
            ),
            "{last}"
        );
        // The phase's end is said (the last periodic line named only a share).
        assert!(
            got.last().unwrap().starts_with("measure: done after "),
            "{got:?}"
        );
        // After the end nothing more comes.
        let n = got.len();
        std::thread::sleep(every * 3);
        assert_eq!(seen.lock().unwrap().len(), n);

        let quiet = Terminal::with_lines(false, every, sink);
        seen.lock().unwrap().clear();
        quiet.progress_begin("measure", 1.0);
        std::thread::sleep(every * 3);
        quiet.progress_end();
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn the_time_left_counts_down_between_units_and_never_rises() {
        let mut c = Countdown::default();
        assert_eq!(c.text(), "…");
        // 1 of 4 units in 10 s: 30 s left.
        c.update(1.0, 4.0, std::time::Duration::from_secs(10));
        let a = c.left().unwrap();
        assert!(a <= 30.0 && a > 29.0, "{a}");
        std::thread::sleep(std::time::Duration::from_millis(30));
        let b = c.left().unwrap();
        assert!(b < a, "{a} then {b}");
        // Everything done: nothing left.
        c.update(4.0, 4.0, std::time::Duration::from_secs(40));
        assert_eq!(c.left(), Some(0.0));
        assert_eq!(c.text(), "under 1 s");
    }

    #[test]
    fn a_bar_ends_at_its_length() {
        // A bar (not periodic lines), drawn nowhere visible in the test.
        let t = Terminal {
            echo: true,
            bar: Mutex::new(None),
            countdown: Default::default(),
            lines: None,
            beat: Mutex::new(None),
        };
        t.progress_begin("measure", 10.0);
        t.progress_advance(3.2);
        let b = t.bar().expect("a bar");
        assert_eq!(b.position(), 3200);
        assert!(t.countdown.lock().unwrap().left().is_some());
        t.progress_end();
        assert_eq!(b.position(), b.length().unwrap());
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(human(std::time::Duration::from_secs(345)), "5 min 45 s");
        assert_eq!(human(std::time::Duration::from_secs(59)), "59 s");
        assert_eq!(human(std::time::Duration::from_secs(7260)), "2 h 01 min");
    }
}
