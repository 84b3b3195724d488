//! `pqperf completions <shell>` and `pqperf man`: the shell completion scripts and the manual
//! pages, generated from the same command definitions as `--help` (clap_complete,
//! clap_mangen), so they cannot drift from the real options.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use pqperf_campaign::Exit;

/// `pqperf completions <shell>`.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  pqperf completions bash > ~/.local/share/bash-completion/completions/pqperf\n  pqperf completions zsh > \"${fpath[1]}/_pqperf\"\n  pqperf completions fish > ~/.config/fish/completions/pqperf.fish"
)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    shell: clap_complete::Shell,
}

/// clap keeps command names as `&'static str`: this process prints one script or page set and
/// ends, so the few names it copies are leaked.
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// `cmd` without its hidden subcommands (the internal children `kat-child`, `hashprof`), at
/// every level: the generators would offer them otherwise.
fn without_hidden(cmd: &clap::Command) -> clap::Command {
    let subs: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(without_hidden)
        .collect();
    let mut c = clap::Command::new(leak(cmd.get_name()))
        .args(cmd.get_arguments().cloned())
        .subcommands(subs);
    if let Some(about) = cmd.get_about() {
        c = c.about(about.clone());
    }
    if let Some(v) = cmd.get_version() {
        c = c.version(leak(v));
    }
    c
}

/// Prints the completion script of `cmd` for the shell.
pub fn run_completions(a: CompletionsArgs, cmd: clap::Command) -> anyhow::Result<ExitCode> {
    let mut cmd = without_hidden(&cmd);
    let mut out = std::io::stdout().lock();
    clap_complete::generate(a.shell, &mut cmd, "pqperf", &mut out);
    out.flush().context("writing the completion script")?;
    Ok(Exit::Done.into())
}

/// `pqperf man`.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  pqperf man | man -l -\n  pqperf man --out target/man   # pqperf.1, pqperf-campaign.1, …"
)]
pub struct ManArgs {
    /// Write pqperf.1 and one page per command (pqperf-<command>.1, pqperf-<command>-<sub>.1)
    /// into this folder instead of printing pqperf.1.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// The manual page of one (built) command as roff.
fn render(cmd: &clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut buf)
        .context("rendering the manual page")?;
    Ok(buf)
}

/// Every visible command below `cmd` (depth first) with its page name `pqperf-a-b`.
fn pages(cmd: &clap::Command, prefix: &str, out: &mut Vec<(String, clap::Command)>) {
    // clap's generated `help` commands get no page: `pqperf help X` is `pqperf X --help`.
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = format!("{prefix}-{}", sub.get_name());
        // The page's NAME is `pqperf-campaign`; its synopsis keeps `pqperf campaign`.
        out.push((name.clone(), sub.clone().name(leak(&name))));
        pages(sub, &name, out);
    }
}

/// Prints pqperf(1), or writes every page into `--out` (each file written atomically).
pub fn run_man(a: ManArgs, cmd: clap::Command) -> anyhow::Result<ExitCode> {
    let mut cmd = cmd;
    cmd.build();
    let Some(dir) = a.out else {
        let mut out = std::io::stdout().lock();
        out.write_all(&render(&cmd)?)
            .and_then(|()| out.flush())
            .context("writing the manual page")?;
        return Ok(Exit::Done.into());
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut all = vec![("pqperf".to_string(), cmd.clone())];
    pages(&cmd, "pqperf", &mut all);
    for (name, c) in &all {
        write_page(&dir, name, &render(c)?)?;
    }
    super::ui::status(format!(
        "man: {} pages in {} (pqperf.1 and one per command)",
        all.len(),
        dir.display()
    ));
    Ok(Exit::Done.into())
}

fn write_page(dir: &Path, name: &str, roff: &[u8]) -> anyhow::Result<()> {
    let p = dir.join(format!("{name}.1"));
    // The error names the operation and the path.
    Ok(pqperf_model::fsutil::write_atomic(&p, roff)?)
}
