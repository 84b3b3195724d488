//! `pqperf import`, `pqperf build`, `pqperf kat` (and the hidden `kat-child`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use pqperf_campaign::Exit;
use pqperf_model::layout::RunLayout;

#[derive(clap::Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    what: ImportWhat,
    /// How candidate code is contained.
    #[command(flatten)]
    pub contain: super::sandbox::Containment,
}

#[derive(clap::Subcommand)]
enum ImportWhat {
    /// The PQClean corpus vendored in the pinned crate pqcrypto-mldsa =0.1.2 (located
    /// through cargo): every implementation with a META.yml that this CPU can run.
    Pqclean {
        /// Use this PQClean tree instead of locating the pinned crate through cargo.
        #[arg(long)]
        tree: Option<PathBuf>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// An ICCS-API submission (folder or .zip): Reference_Implementation/<instance>/ with
    /// SIG_/KEM_/KEX_AlgorithmInstance.h or CryptHash_AlgorithmInstance.h, KAT files and an
    /// optional kat.sha256. Nothing of the submission is executed.
    Iccs {
        /// Submission folder or .zip archive.
        submission: PathBuf,
        /// Candidate id: sign-NN, kem-NN, kex-NN or hash-NN.
        #[arg(long)]
        id: String,
        /// Algorithm name (default: derived from the instance names).
        #[arg(long)]
        algorithm: Option<String>,
        /// Submission page URL.
        #[arg(long)]
        page: Option<String>,
        /// Preprocessor definition NAME or NAME=VALUE for every instance (repeatable): written
        /// to the catalog `defines` and used to evaluate the instance headers (parameter sets).
        #[arg(long = "define", short = 'D', value_name = "NAME[=VALUE]")]
        defines: Vec<String>,
        /// Several parameter sets at once: one instance per value, each built with
        /// -DNAME=VALUE (repeatable: every combination). Labels come from the evaluated
        /// ALGORITHM_INSTANCE; sets imported before from the same submission are kept.
        #[arg(long = "sets", value_name = "NAME=V1,V2,...")]
        sets: Vec<String>,
        /// Leave files matching GLOB (basename or path, case-insensitive) out of every
        /// instance's library (repeatable; catalog `exclude`).
        #[arg(long = "exclude", value_name = "GLOB")]
        exclude: Vec<String>,
        /// Keep files matching GLOB that the default name rules would leave out
        /// (repeatable; catalog `include`). Files defining `main` are still left out.
        #[arg(long = "include", value_name = "GLOB")]
        include: Vec<String>,
        #[command(flatten)]
        run: RunArgs,
    },
}

/// pqperf's version and the git commit it was built from (`unknown` when not known).
pub fn tool_version() -> (String, String) {
    (
        env!("CARGO_PKG_VERSION").to_string(),
        env!("PQPERF_GIT_COMMIT").to_string(),
    )
}

/// The command line as the evidence shows it: `pqperf` and every flag and define, without
/// `--run-dir`/`--catalog` (where, not what), paths by their file name.
pub fn shown_command() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    shown_args(&args)
}

fn shown_args(args: &[String]) -> String {
    let short = |a: &str| -> String {
        let (prefix, path) = match a.split_once(':') {
            Some((p, rest)) if p == "official" => (format!("{p}:"), rest),
            _ => match a.split_once('=') {
                Some((o, rest)) if o.starts_with("--") => (format!("{o}="), rest),
                _ => (String::new(), a),
            },
        };
        let p = std::path::Path::new(path);
        // An absolute path is never shown (it names this machine), even when it does not
        // exist yet (`--publish-to /…/new`).
        if p.is_absolute() && !p.exists() {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.to_string());
            return format!("{prefix}{name}");
        }
        if (path.contains('/') || p.is_absolute()) && p.exists() {
            let name = p
                .canonicalize()
                .ok()
                .and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| path.to_string());
            format!("{prefix}{name}")
        } else {
            a.to_string()
        }
    };
    let mut out = vec!["pqperf".to_string()];
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a == "--run-dir" || a == "--catalog" {
            skip = true;
            continue;
        }
        if a.starts_with("--run-dir=") || a.starts_with("--catalog=") {
            continue;
        }
        out.push(pqperf_build::flags::shell_quote(&short(a)));
    }
    out.join(" ")
}

/// Note a command in campaign.json with pqperf's version and commit.
fn note(run_dir: &std::path::Path, command: &str) -> anyhow::Result<()> {
    pqperf_campaign::note_command(run_dir, command)?;
    let (_, commit) = tool_version();
    pqperf_campaign::update_campaign(run_dir, |c| {
        if let Some(pq) = c.pqperf.as_mut() {
            pq.commit = Some(commit.to_string());
        }
    })?;
    Ok(())
}

#[derive(clap::Args, Clone)]
struct RunArgs {
    /// Run directory.
    #[arg(long, default_value = pqperf_build::DEFAULT_RUN_DIR)]
    run_dir: PathBuf,
    /// Catalog file (default: <run-dir>/catalog.toml).
    #[arg(long)]
    catalog: Option<PathBuf>,
}

pub fn run_import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let run_dir = match &args.what {
        ImportWhat::Pqclean { run, .. } | ImportWhat::Iccs { run, .. } => run.run_dir.clone(),
    };
    // A missing input is refused before the run directory is created.
    match &args.what {
        ImportWhat::Iccs { submission, .. } => super::existing_input(submission)?,
        ImportWhat::Pqclean {
            tree: Some(tree), ..
        } => super::existing_input(tree)?,
        ImportWhat::Pqclean { tree: None, .. } => {}
    }
    // What this import creates and must take back when it is refused or fails: the run
    // directory itself, or the submission's extracted sources in an existing one.
    let run_existed = run_dir.exists();
    let sources = match &args.what {
        ImportWhat::Iccs { id, .. } => Some(RunLayout::new(&run_dir).sources(id)),
        ImportWhat::Pqclean { .. } => None,
    }
    .filter(|s| !s.exists());
    std::fs::create_dir_all(&run_dir).with_context(|| format!("creating {}", run_dir.display()))?;
    let lock = pqperf_campaign::lock_run_dir(&run_dir, false)?;
    let command = shown_command();
    let (version, commit) = tool_version();
    let take_back = || {
        if !run_existed {
            let _ = std::fs::remove_dir_all(&run_dir);
        } else if let Some(s) = &sources {
            let _ = std::fs::remove_dir_all(s);
        }
    };
    let imported = import_what(args.what, &command, &version, &commit);
    let summary = match imported {
        Ok(s) => s,
        Err(e) => {
            drop(lock);
            take_back();
            return match e {
                pqperf_build::BuildError::Input(m) => super::refuse(format!(
                    "import: {m}{}",
                    if run_existed {
                        ""
                    } else {
                        " (nothing was created)"
                    }
                )),
                e => Err(e.into()),
            };
        }
    };
    for n in &summary.notes {
        super::ui::note(format!("import: {n}"));
    }
    note(&run_dir, &command)?;
    super::ui::status(format!(
        "imported {} candidate(s), {} instance(s) into {}",
        summary.candidates.len(),
        summary.instances,
        summary.catalog.display()
    ));
    Ok(Exit::Done.into())
}

fn import_what(
    what: ImportWhat,
    command: &str,
    version: &str,
    commit: &str,
) -> Result<pqperf_build::ImportSummary, pqperf_build::BuildError> {
    Ok(match what {
        ImportWhat::Pqclean { tree, run } => {
            pqperf_build::import_pqclean(&pqperf_build::PqcleanImportOptions {
                run_dir: run.run_dir,
                catalog: run.catalog,
                tree,
            })?
        }
        ImportWhat::Iccs {
            submission,
            id,
            algorithm,
            page,
            defines,
            sets,
            exclude,
            include,
            run,
        } => pqperf_build::import_iccs(&pqperf_build::IccsImportOptions {
            run_dir: run.run_dir,
            catalog: run.catalog,
            submission,
            id,
            algorithm,
            page,
            defines,
            sets,
            exclude,
            include,
            command: command.to_string(),
            tool: format!("pqperf {version} (commit {commit})"),
        })?,
    })
}

#[derive(clap::Args)]
pub struct BuildArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Only instances whose <id>/<label> matches this regex (searched).
    #[arg(long)]
    only: Option<String>,
    /// Instances built concurrently.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Print the instances `--only` selects (<id>/<label>) and do nothing else.
    #[arg(long)]
    list: bool,
    /// ICCS helpers the candidates link: `pqperf` (pqperf's own library) or `official:DIR`
    /// (the official auxfunc.c/drng.c/auxfunc.h/drng.h in DIR, compiled with the reference
    /// flags and checked bit-exact against pqperf's vectors first). Default: the catalog's
    /// `iccs_provider`, else this run's previous choice, else pqperf. Remembered for the run.
    #[arg(long, value_name = "pqperf|official:DIR")]
    iccs_provider: Option<String>,
    /// C compiler (its `g++` sibling for C++ sources). Default: `$PQPERF_CC`, else `gcc` when
    /// it builds for this pqperf's architecture, else `<arch>-linux-gnu-gcc` (an emulated
    /// pqperf). Remembered for the run; build.json records it with its version.
    #[arg(long, value_name = "CC")]
    cc: Option<String>,
    /// How candidate code is contained.
    #[command(flatten)]
    pub contain: super::sandbox::Containment,
}

pub fn run_build(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let run_dir = args.run.run_dir.clone();
    let cwd = std::env::current_dir().context("current directory")?;
    let iccs_provider = args
        .iccs_provider
        .as_deref()
        .map(|s| pqperf_build::ProviderChoice::parse(s, &cwd))
        .transpose()?;
    let opts = pqperf_build::BuildOptions {
        run_dir: args.run.run_dir,
        catalog: args.run.catalog,
        select: super::only(args.only.as_deref())?,
        jobs: args.jobs,
        progress: !super::ui::quiet(),
        on_progress: None,
        iccs_provider,
        cc: args.cc,
    };
    let cat = pqperf_build::catalog_path(&opts.run_dir, opts.catalog.as_deref());
    if !cat.is_file() && opts.catalog.is_none() {
        super::existing_run_dir(&opts.run_dir)?;
    }
    if !cat.is_file() {
        return super::refuse(format!(
            "build: no catalog {}: import candidates first (`pqperf import pqclean|iccs … --run-dir {}`)",
            cat.display(),
            opts.run_dir.display()
        ));
    }
    if args.list {
        let c = pqperf_model::catalog::Catalog::load(&cat)?;
        let keys: Vec<String> = c
            .instances()
            .filter(|(c, i)| opts.select.selects(&c.id, &i.label))
            .map(|(c, i)| i.key(c))
            .collect();
        return list(&keys);
    }
    std::fs::create_dir_all(&opts.run_dir)
        .with_context(|| format!("creating {}", opts.run_dir.display()))?;
    let _lock = pqperf_campaign::lock_run_dir(&opts.run_dir, false)?;
    let s = pqperf_build::build(&opts).context("build")?;
    if s.built.is_empty() && s.failed.is_empty() {
        return super::refuse(match opts.select.only_pattern() {
            Some(o) => format!(
                "build: --only {o:?} selects no instance of {} (it is searched in <id>/<label>)",
                cat.display()
            ),
            None => format!("build: {} lists no instance", cat.display()),
        });
    }
    for k in &s.built {
        super::ui::detail(format!("built {k}"));
    }
    super::ui::status(format!(
        "built {} librar{}, {} BUILDFAIL, in {:.1} s; {}",
        s.built.len(),
        if s.built.len() == 1 { "y" } else { "ies" },
        s.failed.len(),
        s.seconds,
        s.build_json.display()
    ));
    for line in provider_lines(&s) {
        super::ui::status(line);
    }
    for f in &s.failed {
        println!("BUILDFAIL {f}");
        for line in buildfail_lines(&run_dir, f) {
            println!("  {line}");
        }
    }
    note(&run_dir, &shown_command())?;
    if !s.failed.is_empty() {
        eprintln!(
            "build: {} of {} instance(s) failed to build",
            s.failed.len(),
            s.failed.len() + s.built.len()
        );
        return Ok(Exit::Failed.into());
    }
    Ok(Exit::Done.into())
}

#[derive(clap::Args)]
pub struct KatArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Only instances whose <id>/<label> matches this regex (searched).
    #[arg(long)]
    only: Option<String>,
    /// Per-instance timeout of the KAT child, seconds.
    #[arg(long, default_value_t = 900.0)]
    timeout: f64,
    /// KAT children run concurrently.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Print the instances `--only` selects (<id>/<label>) and do nothing else.
    #[arg(long)]
    list: bool,
    /// Do not rebuild non-passing instances with the harness-default flags.
    #[arg(long)]
    no_fallback: bool,
    /// Hash candidates: also generate KAT_Loop (1,000,000 chained hashes).
    #[arg(long, visible_alias = "loop")]
    hash_loop: bool,
    /// Hash candidates: also KAT_2_33 (1 GiB message) and KAT_Loop.
    #[arg(long, visible_alias = "full")]
    hash_full: bool,
    /// How candidate code is contained.
    #[command(flatten)]
    pub contain: super::sandbox::Containment,
}

pub fn run_kat(args: KatArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.timeout > 0.0, "--timeout must be positive");
    let run_dir = args.run.run_dir.clone();
    let mut opts = pqperf_kat::KatOptions::new(args.run.run_dir);
    opts.catalog = args.run.catalog;
    opts.select = super::only(args.only.as_deref())?;
    opts.timeout = std::time::Duration::from_secs_f64(args.timeout);
    opts.jobs = args.jobs;
    opts.fallback = !args.no_fallback;
    opts.hash_loop = args.hash_loop;
    opts.hash_full = args.hash_full;
    opts.progress = !super::ui::quiet();
    super::ui::detail(format!(
        "kat: timeout {} s per instance, {} job(s), harness-default fallback {}",
        args.timeout,
        opts.jobs,
        if opts.fallback { "on" } else { "off" }
    ));
    super::existing_run_dir(&opts.run_dir)?;
    let bj = RunLayout::new(&opts.run_dir).build_json();
    if !bj.is_file() {
        return super::refuse(format!(
            "kat: {} does not exist: run `pqperf build --run-dir {}` first",
            bj.display(),
            opts.run_dir.display()
        ));
    }
    if args.list {
        let b = pqperf_campaign::load_build(&opts.run_dir)?;
        let keys: Vec<String> = b
            .instances
            .iter()
            .filter(|(_, e)| opts.select.selects(&e.candidate, &e.label))
            .map(|(k, _)| k.clone())
            .collect();
        return list(&keys);
    }
    let _lock = pqperf_campaign::lock_run_dir(&opts.run_dir, false)?;
    let s = match pqperf_kat::run(&opts) {
        Err(pqperf_kat::KatError::Stale(m)) => return super::refuse(m),
        r => r.context("kat")?,
    };
    if s.instances.is_empty() {
        return super::refuse(match opts.select.only_pattern() {
            Some(o) => format!(
                "kat: --only {o:?} selects no instance of {} (it is searched in <id>/<label>)",
                bj.display()
            ),
            None => format!("kat: {} lists no instance of the catalog", bj.display()),
        });
    }
    // `--quiet`: only the verdicts that are not PASS, and the summary.
    for i in s
        .instances
        .iter()
        .filter(|i| !super::ui::quiet() || i.status != "PASS")
    {
        println!("{}", i.result_line);
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    for i in &s.instances {
        match counts.iter_mut().find(|c| c.0 == i.status) {
            Some(c) => c.1 += 1,
            None => counts.push((i.status.clone(), 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    println!(
        "kat: {} instance(s) in {:.1} s: {}",
        s.instances.len(),
        s.seconds,
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    );
    for i in &s.instances {
        for line in fallback_and_manifest_lines(&run_dir, i) {
            println!("{line}");
        }
    }
    pqperf_campaign::note_command(&run_dir, "pqperf kat")?;
    let not_pass = s.instances.iter().filter(|i| i.status != "PASS").count();
    if not_pass > 0 {
        eprintln!(
            "kat: {not_pass} of {} instance(s) did not PASS",
            s.instances.len()
        );
        return Ok(Exit::Failed.into());
    }
    Ok(Exit::Done.into())
}

/// `--list`: the selected instance keys, one a line; a selection of none is refused.
fn list(keys: &[String]) -> anyhow::Result<ExitCode> {
    if keys.is_empty() {
        return super::refuse("--only selects no instance");
    }
    for k in keys {
        println!("{k}");
    }
    Ok(Exit::Done.into())
}

/// Hidden: one KAT child process (pqperf re-executes itself per instance).
#[derive(clap::Args)]
pub struct KatChildArgs {
    /// Job file written by the parent.
    job: PathBuf,
}

pub fn run_kat_child(args: KatChildArgs) -> anyhow::Result<ExitCode> {
    let code = pqperf_kat::child_main(&args.job);
    Ok(super::code(code))
}

/// The `ICCS provider: …` lines after a build, from what build.json records each built ICCS
/// instance linked (its own helpers first when the submission has them): one line when all
/// linked the same, else one per provider naming how many instances (up to three by key).
/// With no ICCS instance built, the run's provider as before.
fn provider_lines(s: &pqperf_build::BuildSummary) -> Vec<String> {
    let bj = pqperf_model::pyjson::read::<pqperf_model::BuildJson>(
        &s.build_json,
        std::path::Path::new("build.json"),
    )
    .ok();
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for k in &s.built {
        let Some(v) = bj
            .as_ref()
            .and_then(|b| b.instances.get(k))
            .and_then(|e| e.extra.get("iccs_provider"))
        else {
            continue;
        };
        let d = pqperf_model::iccsprovider::describe(v);
        match groups.iter_mut().find(|(g, _)| *g == d) {
            Some((_, keys)) => keys.push(k.clone()),
            None => groups.push((d, vec![k.clone()])),
        }
    }
    match groups.len() {
        0 => vec![format!("ICCS provider: {}", s.iccs_provider.describe())],
        1 => vec![format!("ICCS provider: {}", groups[0].0)],
        _ => groups
            .into_iter()
            .map(|(d, keys)| {
                let shown: Vec<&str> = keys.iter().take(3).map(String::as_str).collect();
                let more = if keys.len() > 3 {
                    format!(", … ({} more)", keys.len() - 3)
                } else {
                    String::new()
                };
                format!(
                    "ICCS provider of {} instance(s) ({}{more}): {d}",
                    keys.len(),
                    shown.join(", ")
                )
            })
            .collect(),
    }
}

/// What a submitter needs to hear after the KAT of one instance: that it was rebuilt with
/// the harness-default flags (the reference flags did not pass), and for NOKAT / MISMATCH the
/// manifest lines that would check the vectors its code generated: `<sha256> <mode>
/// <label>/<file>`, the digest computed here by the parent over the canonical form of each
/// generated `KAT_*.txt` (never read from the child's log).
fn fallback_and_manifest_lines(
    run_dir: &std::path::Path,
    i: &pqperf_kat::InstanceKat,
) -> Vec<String> {
    use pqperf_kat::compare::{auto_mode, canonical_sha256, mode_word};
    let mut out = Vec::new();
    if let Some(g) = &i.guide_result
        && i.flags == pqperf_build::flags::FlagSet::HarnessDefault.name()
    {
        out.push(format!(
            "kat {}: {g} with the reference flags; rebuilt with the harness-default flags and tested again: {} (build.json and its pages say so)",
            i.key, i.status
        ));
    }
    if !matches!(i.status.as_str(), "NOKAT" | "MISMATCH") {
        return out;
    }
    let Some((id, label)) = i.key.split_once('/') else {
        return out;
    };
    let rel = RunLayout::kat_out_rel(id, label);
    let dir = run_dir.join(&rel);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with("KAT_") && n.ends_with(".txt")
        })
        .collect();
    files.sort();
    let mut lines = Vec::new();
    for f in &files {
        let name = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Ok(text) = pqperf_model::limits::read_text(f, std::path::Path::new(&name)) else {
            continue;
        };
        let mode = auto_mode(&text);
        lines.push(format!(
            "  {} {} {label}/{name}",
            canonical_sha256(&text, mode, None),
            mode_word(mode, None)
        ));
    }
    if lines.is_empty() {
        return out;
    }
    let what = if i.status == "NOKAT" {
        "no kat.sha256 entry and no reference file checks these vectors"
    } else {
        "the generated vectors differ from the manifest (or reference file)"
    };
    out.push(format!(
        "kat {}: {what}. If the files its code generated ({rel}/) are the submission's reference vectors, these are the kat.sha256 lines that check them (digest over the canonical form, not `sha256sum` of the file; docs/guide.md, \"Your first KAT\"); put them in kat.sha256 at the top of the submission, then import, build and kat again:",
        i.key
    ));
    out.extend(lines);
    out
}

/// Under a BUILDFAIL line: the first compiler error of the instance's last build attempt
/// (escaped, cut to 300 characters), a hint when it is an undeclared identifier (a parameter
/// set chosen by a macro the import did not define), and the log's path.
fn buildfail_lines(run_dir: &std::path::Path, key: &str) -> Vec<String> {
    let Some((id, _)) = key.split_once('/') else {
        return Vec::new();
    };
    let log = RunLayout::new(run_dir).build_log(id);
    let mut out = Vec::new();
    let text = pqperf_model::limits::read_text(&log, std::path::Path::new("build.log"))
        .unwrap_or_default();
    // The log's sections start `# <id>/<label> (<variant>, flags <set>)`; the last one of
    // this key is its last attempt.
    let mut section: Vec<&str> = Vec::new();
    let mut mine = false;
    for l in text.lines() {
        if l.starts_with(&format!("# {id}/")) && l.contains(", flags ") && l.ends_with(')') {
            mine = l.starts_with(&format!("# {key} ("));
            if mine {
                section.clear();
            }
            continue;
        }
        if mine {
            section.push(l);
        }
    }
    let first_error = section
        .iter()
        .find(|l| l.contains(": error:") || l.contains(": fatal error:"))
        .or_else(|| section.iter().find(|l| l.starts_with("# BUILDFAIL:")));
    if let Some(l) = first_error {
        let shown: String = pqperf_model::captured::escape_captured(l.trim())
            .chars()
            .take(300)
            .collect();
        out.push(format!("first error: {shown}"));
        if l.contains("undeclared") || l.contains("unknown type name") {
            let ident = l
                .split(['\'', '‘', '’'])
                .nth(1)
                .filter(|w| {
                    !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
                .map(|w| format!(" ({w})"))
                .unwrap_or_default();
            let tested = instance_dir(run_dir, key)
                .map(|d| pqperf_build::iccs_import::selector_hint(&d))
                .unwrap_or_default();
            out.push(format!(
                "hint: an identifier{ident} the sources expect is not defined; a parameter set chosen by a macro needs `pqperf import iccs … --define NAME`{tested}"
            ));
        }
    }
    out.push(format!("log: {}", log.display()));
    out
}

/// The source folder of catalog instance `key` (`<id>/<label>`) of the run's catalog.
fn instance_dir(run_dir: &std::path::Path, key: &str) -> Option<std::path::PathBuf> {
    let (id, label) = key.split_once('/')?;
    let path = pqperf_build::catalog_path(run_dir, None);
    let cat = pqperf_model::catalog::Catalog::load(&path).ok()?;
    let cand = cat.candidate(id)?;
    let inst = cand.instances.iter().find(|i| i.label == label)?;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    Some(cand.root_path(dir).join(&inst.source_dir))
}
