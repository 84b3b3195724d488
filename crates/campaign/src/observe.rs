//! The campaign log (`campaign.log`, timestamped lines, echoed on the terminal) and the
//! progress bar of long phases (drawn on a terminal only, log lines printed above it).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::CampaignError;

type Res<T> = Result<T, CampaignError>;

/// Timestamped log (`campaign.log`), also echoed to stdout.
pub struct Logger {
    file: Mutex<Option<std::fs::File>>,
    echo: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Logger {
    /// Appends to `path`.
    pub fn open(path: &Path, echo: bool) -> Res<Logger> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Logger {
            file: Mutex::new(Some(f)),
            echo,
            bar: Mutex::new(None),
        })
    }

    /// A logger that writes nowhere.
    pub fn null() -> Logger {
        Logger {
            file: Mutex::new(None),
            echo: false,
            bar: Mutex::new(None),
        }
    }

    /// Logs one line.
    pub fn log(&self, msg: impl AsRef<str>) {
        let line = format!("{} {}", local_stamp(), msg.as_ref());
        if let Ok(mut f) = self.file.lock()
            && let Some(f) = f.as_mut()
        {
            let _ = writeln!(f, "{line}");
        }
        if self.echo {
            let bar = self.bar.lock().ok().and_then(|b| b.clone());
            match bar {
                Some(b) if !b.is_hidden() => b.println(&line),
                _ => println!("{line}"),
            }
        }
    }

    pub(crate) fn set_bar(&self, b: Option<ProgressBar>) {
        if let Ok(mut g) = self.bar.lock() {
            *g = b;
        }
    }
}

fn local_stamp() -> String {
    let now = time::OffsetDateTime::now_utc();
    let f = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    now.format(&f).unwrap_or_default()
}

/// Progress bar on stderr when it is a terminal (hidden otherwise), in estimated seconds.
pub(crate) fn progress(total_s: f64, msg: &str) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let b = ProgressBar::with_draw_target(Some((total_s * 1000.0).max(1.0) as u64), target);
    b.set_style(
        ProgressStyle::with_template(
            "{msg:24} [{elapsed_precise}] {wide_bar} {percent:>3}% ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b.set_message(msg.to_string());
    b
}
