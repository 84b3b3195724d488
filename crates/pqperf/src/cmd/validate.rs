//! `pqperf validate`: semantic checks of a published dataset (method.md §15). Thin wrapper
//! over [`pqperf_validate`]; nothing is written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use pqperf_campaign::Exit;
use pqperf_model::layout::RunLayout;

/// Validate a published dataset: recompute every record's statistics from its raw trials
/// (relative 1e-9) and every profile's shares, check each KAT log against its sha256 in
/// build.json and the records, check library digests between records and build.json, reject
/// absolute machine paths (/home/, /root/, /Users/, /tmp/, /work/, or any /-rooted library,
/// kat_log or command value), stray files and malformed or truncated JSON/CSV, and compare
/// the harness pages present under the root with pages regenerated from the evidence.
///
/// Prints one line per problem as `path: field: message` (malformed files as
/// `path:line:col: …`), then a summary line. Exit status: 0 when no problem was found, 1
/// when there were problems, 2 on usage errors. Nothing is written.
const LONG_HELP: &str = "What is checked (read-only; nothing is written):
Recomputes every timing record's statistics from its raw trials (method.md §8, relative \
tolerance 1e-9) and every profile's share/hash_share from its calls; checks each KAT log's \
sha256 and RESULT status against build.json and the records, library digests between records \
and build.json, and the KAT manifests; rejects absolute machine paths (/home/, /root/, \
/Users/, /tmp/, /work/, or any /-rooted library, kat_log or command value), stray files and \
malformed or truncated JSON/CSV; regenerates the harness pages found under the root and \
compares them.

Prints one line per problem as `path: field: message` (malformed files as \
`path:line:col: field: message`), then a summary line. Exit status: 0 when no problem was \
found, 1 when there were problems, other non-zero values on usage errors.

Examples:
  pqperf validate \"$PQPERF_GOLDEN/harness\"
  pqperf validate runs/demo/dataset --system x86_1";

#[derive(clap::Args)]
#[command(
    after_long_help = LONG_HELP,
    after_help = "Examples:\n  pqperf validate \"$PQPERF_GOLDEN/harness\"\n  pqperf validate runs/demo/dataset --system x86_1"
)]
pub struct ValidateArgs {
    /// Dataset root in the published layout (holding performance/data/<system>/…, the side
    /// CSVs and <id>/kat.sha256), or a single system directory / run directory.
    #[arg(value_name = "DATASET_ROOT")]
    pub root: PathBuf,

    /// Check only this system (e.g. x86_1); side files are always checked.
    #[arg(long, value_name = "ID")]
    pub system: Option<String>,

    /// Do not regenerate the harness pages (`<id>/perf_<sys>.md`, …) found under the root and
    /// compare them with the evidence (done by default where such pages exist).
    #[arg(long)]
    pub no_pages: bool,
}

/// What a dataset root looks like (the one-line explanation of a refused path).
const EXPECTED: &str = "expected a dataset root (holding performance/data/<system>/campaign.json, as written by `pqperf campaign publish`), its performance/data folder, or a run directory (holding campaign.json)";

/// The layouts `validate` accepts.
#[derive(Debug, PartialEq)]
enum Layout {
    /// `performance/data/<system>/…` below the path.
    DatasetRoot,
    /// The `performance/data` folder of a dataset root (validated as that root).
    DataFolder(PathBuf),
    /// A run directory (or a single system directory): `campaign.json` at the top.
    RunDir,
}

impl Layout {
    fn name(&self) -> &'static str {
        match self {
            Layout::DatasetRoot => "dataset root",
            Layout::DataFolder(_) => "performance/data folder of a dataset root",
            Layout::RunDir => "run directory",
        }
    }
}

/// Which accepted layout `p` has, or `None`.
fn layout(p: &Path) -> Option<Layout> {
    let has_systems = |d: &Path| {
        std::fs::read_dir(d).ok().is_some_and(|rd| {
            rd.flatten()
                .any(|e| RunLayout::new(e.path()).campaign_json().is_file())
        })
    };
    if p.join("performance/data").is_dir() && has_systems(&p.join("performance/data")) {
        return Some(Layout::DatasetRoot);
    }
    if RunLayout::new(p).campaign_json().is_file() {
        return Some(Layout::RunDir);
    }
    let abs = p.canonicalize().ok()?;
    if abs.ends_with("performance/data") && has_systems(&abs) {
        let root = abs.parent()?.parent()?.to_path_buf();
        return Some(Layout::DataFolder(root));
    }
    None
}

pub fn run_validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    if !args.root.exists() {
        return super::refuse(format!(
            "{}: no such file or directory; {EXPECTED}",
            args.root.display()
        ));
    }
    if !args.root.is_dir() {
        return super::refuse(format!(
            "{}: not a directory; {EXPECTED}",
            args.root.display()
        ));
    }
    let Some(found) = layout(&args.root) else {
        eprintln!(
            "pqperf validate: {}: not a dataset: {EXPECTED}",
            args.root.display()
        );
        return Ok(Exit::Refused.into());
    };
    super::ui::note(format!(
        "validate: {}: {}",
        args.root.display(),
        found.name()
    ));
    let root = match &found {
        Layout::DataFolder(r) => r.clone(),
        _ => args.root.clone(),
    };
    let opts = pqperf_validate::Options {
        system: args.system.clone(),
        pages: !args.no_pages,
    };
    let report = pqperf_validate::validate_with(&root, &opts);
    // `--quiet` (global): only the summary line; the problems are still counted.
    if !super::ui::quiet() {
        for p in &report.problems {
            println!("{p}");
        }
    }
    if super::ui::verbose() {
        let systems = match &args.system {
            Some(s) => s.clone(),
            None => "every system".into(),
        };
        eprintln!(
            "validate: checked {systems} under {}{}",
            root.display(),
            if args.no_pages {
                " (pages not regenerated: --no-pages)"
            } else {
                " (harness pages found under the root regenerated and compared)"
            }
        );
    }
    println!("{}", report.summary());
    Ok(if report.ok() {
        Exit::Done.into()
    } else {
        Exit::Failed.into()
    })
}
