//! `publish` (method §12.1): the run's evidence copied into the dataset layout
//! (`performance/data/<system>/…`) and the side tables the pages read, written through the
//! one side-table writer (`pqperf_model::sidecsv::write_csv`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pqperf_model::fsutil::{
    exchange, io_err, staging_dir, swap_dir, sync_tree, write_atomic, write_staged,
};
use pqperf_model::pyjson::read_value;
use pqperf_model::sidecsv::write_csv;

use crate::rundir::{load_build, load_catalog, walk_files};
use crate::{CampaignError, CampaignOptions, Exit, systems};

type Res<T> = Result<T, CampaignError>;

/// What `publish` does around the copy besides the swap: validate the new system tree
/// before it may replace an old one, and refresh the dataset's pages once it is in place.
/// `campaign publish` does both ([`After::ALL`]); a test of the copy alone does neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct After {
    /// Validate the new system tree ([`crate::stages::pages::check`]): a tree with problems
    /// never replaces one without.
    pub validate: bool,
    /// Regenerate the pages on disk it changes and merge the survey
    /// ([`crate::stages::pages::after_publish`]); when false, or when that fails, publish
    /// names the system's pages as stale.
    pub pages: bool,
}

impl After {
    /// Validate and refresh the pages: what `campaign publish` does.
    pub const ALL: After = After {
        validate: true,
        pages: true,
    };
    /// The copy and swap alone.
    pub const NOTHING: After = After {
        validate: false,
        pages: false,
    };
}

/// `publish` (§12.1): copy the run's evidence into `<dest>/performance/data/<ID>/`, write the
/// side CSVs the pages read (`performance/systems.csv`, `performance/security_targets.csv`,
/// `downloads.csv`) and refuse absolute machine paths. Captured candidate output is redacted
/// instead of refused, a symbolic link anywhere in the run directory is never followed (left
/// out with a message), and a refused file leaves the others published (exit code 2). The
/// system tree is staged and swapped in whole (a crash leaves the old tree or the new one);
/// validate decides whether the new tree may replace the old one; once it is in place, the
/// dataset's pages on disk that the new evidence changes are regenerated (publish says which,
/// and which are left stale). Returns the exit status.
pub fn publish(opts: &CampaignOptions) -> Res<Exit> {
    publish_with(opts, After::ALL)
}

/// [`publish`] doing only what `after` asks around the copy.
pub fn publish_with(opts: &CampaignOptions, after: After) -> Res<Exit> {
    let run = &opts.run_dir;
    let layout = opts.layout();
    let camp = read_value(&layout.campaign_json());
    let Some(id) = camp
        .as_ref()
        .and_then(|c| c["system_id"].as_str())
        .map(str::to_string)
    else {
        eprintln!("publish: campaign.json has no system_id");
        return Ok(Exit::Refused);
    };
    let dest_root = opts
        .publish_to
        .clone()
        .unwrap_or_else(|| layout.default_dataset());
    let dest = dest_root.join("performance/data").join(&id);
    // Count files made before the records they cross-check (a count, then a measure) get
    // their timing check brought up to date first (no valgrind needed), so the order of the
    // phases never blocks a publish.
    if let Ok(insts) = crate::measurable(opts) {
        match pqperf_count::refresh_timing_checks(run, &insts, &[]) {
            Ok(r) if !r.is_empty() && opts.echo => eprintln!(
                "publish: the timing cross-check of {} count file(s) brought up to date",
                r.len()
            ),
            Ok(_) => {}
            // A count file it cannot read is validate's to report, naming the file.
            Err(e) => eprintln!("publish: timing cross-check of the counts: {e}"),
        }
    }
    let mut files: Vec<PathBuf> = vec![layout.campaign_json(), layout.build_json()];
    let excluded = |p: &Path| -> bool {
        if opts.select.defer_pattern().is_none() {
            return false;
        }
        let cand = p
            .parent()
            .and_then(|d| d.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = p
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let label = name.split("__").next().unwrap_or("");
        opts.select.defers(&format!("{cand}/{label}"))
    };
    // A symbolic link anywhere is listed, whatever its name, to be named and left out.
    let is_link = |f: &Path| {
        f.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    };
    for (dir, profiles) in [(layout.records_dir(), false), (layout.profile_dir(), true)] {
        for f in walk_files(&dir) {
            if is_link(&f) {
                files.push(f);
                continue;
            }
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') || !name.ends_with(".json") || excluded(&f) {
                continue;
            }
            if profiles && (name.contains("RELINK") || !name.contains("__")) {
                continue;
            }
            files.push(f);
        }
    }
    // Constant-time evidence (`ct/<id>/<label>.json`, pqperf-ct) and instruction counts
    // (`count/<id>/<label>__<op>.json`, pqperf-count).
    for dir in [layout.ct_dir(), layout.count_dir()] {
        files.extend(walk_files(&dir).into_iter().filter(|f| {
            let name = f.file_name().unwrap().to_string_lossy();
            is_link(f) || (name.ends_with(".json") && !name.starts_with('.'))
        }));
    }
    // KAT logs are `kat/<id>/<label>.log` and `katcheck/<name>.log`: nothing deeper (the KAT
    // child's output folder `kat/<id>/<label>/` is the candidate's to write).
    for (root, depth) in [(layout.kat_dir(), 2), (layout.katcheck_dir(), 1)] {
        files.extend(walk_files(&root).into_iter().filter(|f| {
            is_link(f)
                || (f.extension().is_some_and(|e| e == "log")
                    && f.strip_prefix(&root)
                        .is_ok_and(|r| r.components().count() == depth))
        }));
    }
    let mut staged = Vec::new();
    let mut refused = 0;
    let mut said = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(run).unwrap_or(f).to_path_buf();
        match stage_file(run, &rel) {
            Staged::Copy(bytes) => staged.push((rel, bytes)),
            Staged::Absent => {}
            Staged::Skipped(why) => {
                if said.insert(why.clone()) {
                    eprintln!("{why}; not published");
                }
            }
            Staged::Refused(why) => {
                eprintln!("{}: {why}; not published", rel.display());
                refused += 1;
            }
        }
    }
    // The new system tree is built beside the old one (`performance/.<sys>.staging-…`, which
    // no reader looks at) and swapped in with renames once it is complete.
    let holder = dest_root.join("performance");
    let stage = staging_dir(&holder, &dest)?;
    let written = (|| -> std::io::Result<()> {
        for (rel, bytes) in &staged {
            write_staged(&stage.join(rel), bytes)?;
        }
        sync_tree(&stage)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&stage);
        return Err(e.into());
    }
    // Side CSVs of the dataset root.
    let perf = dest_root.join("performance");
    let rows = systems::load(&opts.systems_csv)?;
    let mut sys: Vec<Vec<String>> = Vec::new();
    let existing = systems::load(&perf.join("systems.csv"))?;
    let mut seen = BTreeSet::new();
    for r in existing.iter().chain(rows.iter()) {
        if seen.insert(r.id.clone()) && (r.id == id || existing.iter().any(|e| e.id == r.id)) {
            sys.push(vec![
                r.id.clone(),
                r.arch.clone(),
                r.hostname.clone(),
                r.description.clone(),
            ]);
        }
    }
    let sys = write_csv(&["ID", "Arch", "Hostname", "Description"], &sys);
    write_atomic(&perf.join("systems.csv"), sys.as_bytes())?;
    let build = load_build(run)?;
    let catalog = load_catalog(run)?;
    // The target an instance claims: a NIST-API (PQClean) scheme's from its claimed NIST
    // level (catalog, from META.yml); an ICCS-API (NGCC) instance's the one its label states
    // exactly once (`BiT-128`, `DARTS512`; `sidecsv::target_bits_from_label`), except for hash
    // instances, whose label digits are digest lengths. Anything else stays empty (unknown)
    // for curation.
    let claimed: BTreeMap<(String, String), u32> = catalog
        .iter()
        .flat_map(|cat| cat.instances())
        .filter_map(|(c, i)| {
            use pqperf_model::catalog::ApiKind;
            use pqperf_model::vocab::Category;
            let bits = match i.api {
                ApiKind::Nist => i.nist.as_ref()?.target_bits()?,
                // PQClean labels name parameters (ml-kem-512), never read as targets.
                ApiKind::Iccs if c.kind != Category::Hash => {
                    pqperf_model::sidecsv::target_bits_from_label(&i.label)
                        .and_then(|b| u32::try_from(b).ok())?
                }
                _ => return None,
            };
            Some(((c.id.clone(), i.label.clone()), bits))
        })
        .collect();
    let st_path = perf.join("security_targets.csv");
    let mut st_rows: BTreeSet<(String, String)> = BTreeSet::new();
    let mut st_text: Vec<Vec<String>> = Vec::new();
    if st_path.exists() {
        let bad = |e: pqperf_model::ModelError| CampaignError::msg(e.to_string());
        let old = pqperf_model::sidecsv::CsvTable::read(&st_path, &st_path)
            .and_then(|t| t.security_targets())
            .map_err(bad)?;
        for r in old {
            let key = (r.id.clone(), r.instance.clone());
            let bits = r
                .target_bits
                .or_else(|| claimed.get(&key).map(|&b| u64::from(b)));
            if st_rows.insert(key) {
                st_text.push(vec![
                    r.id.clone(),
                    r.instance.clone(),
                    bits.map(|b| b.to_string()).unwrap_or_default(),
                ]);
            }
        }
    }
    for e in build.instances.values() {
        let key = (e.candidate.clone(), e.label.clone());
        let bits = claimed.get(&key).map(|b| b.to_string()).unwrap_or_default();
        if e.candidate != "iccs" && st_rows.insert(key) {
            st_text.push(vec![e.candidate.clone(), e.label.clone(), bits]);
        }
    }
    let st_text = write_csv(&["ID", "Instance", "TargetBits"], &st_text);
    write_atomic(&st_path, st_text.as_bytes())?;
    if let Some(cat) = &catalog {
        let dl = dest_root.join("downloads.csv");
        let mut text: Vec<Vec<String>> = Vec::new();
        let mut ids = BTreeSet::new();
        if dl.exists() {
            let old = pqperf_model::sidecsv::CsvTable::read(&dl, &dl)
                .and_then(|t| t.downloads())
                .map_err(|e| CampaignError::msg(e.to_string()))?;
            for d in old {
                if ids.insert(d.id.clone()) {
                    text.push(vec![d.id.clone(), d.algorithm.clone(), d.page_url.clone()]);
                }
            }
        }
        for c in &cat.candidates {
            if ids.insert(c.id.clone()) {
                text.push(vec![
                    c.id.clone(),
                    c.algorithm.clone(),
                    c.page.clone().unwrap_or_default(),
                ]);
            }
        }
        let text = write_csv(&["ID", "Algorithm", "PageURL"], &text);
        write_atomic(&dl, text.as_bytes())?;
    }
    let code = swap_in(&stage, &dest, &dest_root, &id, after.validate)?;
    if code == Exit::Done {
        refresh_pages(opts, &dest_root, &id, after.pages);
    }
    // A quiet campaign (`echo` off) says nothing when all went well.
    if code == Exit::Done && opts.echo {
        println!(
            "publish: {} files for system {id} -> {}",
            staged.len(),
            dest.display()
        );
    }
    if code == Exit::Done && refused > 0 {
        eprintln!("publish: {refused} file(s) refused (named above); the others are published");
        return Ok(Exit::Refused);
    }
    Ok(code)
}

/// After system `id`'s tree is in place: the pages it feeds regenerated when `pages`
/// (naming each) or, when not or not possible, named as stale; and the site, which only
/// `pqperf site` rebuilds.
fn refresh_pages(opts: &CampaignOptions, root: &Path, id: &str, pages: bool) {
    let shown = |v: &[String]| -> String {
        let mut s: Vec<String> = v.iter().take(12).cloned().collect();
        if v.len() > 12 {
            s.push(format!("… ({} more)", v.len() - 12));
        }
        s.join(", ")
    };
    let stale_all = |why: &str| {
        eprintln!(
            "publish: {why}: the pages of {} that read system {id} (its candidate pages, summary, method, survey) are stale; regenerate them with `pqperf report {} --system {id}`",
            root.display(),
            root.display()
        );
    };
    let refreshed = pages.then(|| crate::stages::pages::after_publish(opts, root, id));
    match refreshed {
        None => stale_all("pages not regenerated"),
        Some(Err(e)) => stale_all(&format!("regenerating the pages failed ({})", chain(&e))),
        Some(Ok(r)) => {
            if !opts.echo {
                // `-q`: only the warning below.
            } else if r.regenerated.is_empty() {
                println!("publish: no page on disk changes with system {id}'s new evidence");
            } else {
                println!(
                    "publish: regenerated {} page(s) that system {id}'s evidence feeds: {}",
                    r.regenerated.len(),
                    shown(&r.regenerated)
                );
            }
            if !r.stale.is_empty() {
                eprintln!(
                    "publish: {} page(s) are stale (the new evidence no longer produces them; left in place): {}",
                    r.stale.len(),
                    shown(&r.stale)
                );
            }
        }
    }
    if opts.echo {
        eprintln!(
            "publish: a site built from {} before (rankings, joint view) does not show this publication; build it again with `pqperf site`",
            root.display()
        );
    }
}

/// `e` and its sources, `outer: inner` (a source whose text the line already ends with is
/// not repeated).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.ends_with(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

/// Put the staged system tree in place of `dest` (renames only) and, when `validate`, check
/// it (the problems `validate` finds in that system). A new tree
/// with problems never replaces an old one without: the two are exchanged back and the old
/// stays (exit 1). Otherwise the old tree is removed; problems of the new one still give 1.
fn swap_in(stage: &Path, dest: &Path, dest_root: &Path, id: &str, validate: bool) -> Res<Exit> {
    let problems = |what: &str| -> Vec<String> {
        if !validate {
            return Vec::new();
        }
        let p = crate::stages::pages::check(dest_root, id);
        if !p.is_empty() {
            eprintln!(
                "publish: validate finds {} problem(s) in the {what} system {id}:",
                p.len()
            );
            for l in p.iter().take(20) {
                eprintln!("  {l}");
            }
        }
        p
    };
    let std_io = CampaignError::Io;
    if std::fs::symlink_metadata(dest).is_err() {
        if let Some(d) = dest.parent() {
            std::fs::create_dir_all(d).map_err(|e| std_io(io_err("creating directory", d, e)))?;
        }
        swap_dir(stage, dest)?;
        return Ok(Exit::failed_if(!problems("published").is_empty()));
    }
    let old_ok = !validate || problems("already published").is_empty();
    exchange(stage, dest)?;
    // `stage` now holds the old tree.
    if !problems("new").is_empty() && old_ok {
        exchange(stage, dest)?;
        let _ = std::fs::remove_dir_all(stage);
        eprintln!(
            "publish: refused to replace the valid {} with an invalid one; it is unchanged",
            dest.display()
        );
        return Ok(Exit::Failed);
    }
    std::fs::remove_dir_all(stage)
        .map_err(|e| std_io(io_err("removing the old tree", stage, e)))?;
    if !old_ok {
        eprintln!("publish: replaced a system tree that validate already rejected");
    }
    Ok(Exit::Done)
}

/// What becomes of one run-directory file on publication.
enum Staged {
    /// Copy these bytes.
    Copy(Vec<u8>),
    /// Not there (nothing to publish).
    Absent,
    /// Not evidence pqperf wrote (a symbolic link somewhere on its path, which pqperf never
    /// creates, or not a regular file): left out with this message (naming the link).
    Skipped(String),
    /// Evidence pqperf wrote that may not be published as it is (a machine path outside
    /// captured candidate output, or larger than the evidence bound): left out, exit 2.
    Refused(String),
}

/// Reads `run/rel` for publication without following a symbolic link anywhere below `run`,
/// bounded in size, with absolute machine paths in captured candidate output redacted
/// (`processes[].stderr` of records, `stderr` of profiles); any other machine path refuses
/// the file.
fn stage_file(run: &Path, rel: &Path) -> Staged {
    let mut at = run.to_path_buf();
    for c in rel.components() {
        at.push(c);
        match at.symlink_metadata() {
            Err(_) => return Staged::Absent,
            Ok(m) if m.file_type().is_symlink() => {
                return Staged::Skipped(format!(
                    "{}: symbolic link (never followed)",
                    at.strip_prefix(run).unwrap_or(&at).display()
                ));
            }
            Ok(_) => {}
        }
    }
    let bytes = match pqperf_model::limits::read_bounded(&at, rel) {
        Ok(b) => b,
        Err(e) if at.is_file() => return Staged::Refused(e.message()),
        Err(e) => return Staged::Skipped(format!("{}: {}", rel.display(), e.message())),
    };
    let text = String::from_utf8_lossy(&bytes);
    if pqperf_model::paths::find_machine_path(&text).is_none() {
        return Staged::Copy(bytes);
    }
    let is_json = rel.extension().is_some_and(|e| e == "json");
    let redacted = is_json.then(|| redact_captured_json(rel, &text)).flatten();
    match redacted {
        Some(t) => match pqperf_model::paths::find_machine_path(&t) {
            None => Staged::Copy(t.into_bytes()),
            Some(m) => Staged::Refused(format!("absolute path '{m}' remains")),
        },
        None => Staged::Refused(format!(
            "absolute path '{}' remains",
            pqperf_model::paths::find_machine_path(&text).unwrap_or_default()
        )),
    }
}

/// The evidence JSON `text` with machine paths redacted where it holds what the candidate
/// printed (a record's `processes[].stderr`, a profile's `stderr`), re-serialised in the
/// reference layout; `None` when nothing there changed.
fn redact_captured_json(rel: &Path, text: &str) -> Option<String> {
    let mut v = pqperf_model::pyjson::parse(rel, text).ok()?;
    let mut n = 0;
    let mut redact = |s: Option<&mut serde_json::Value>| {
        if let Some(s) = s
            && let Some(t) = s.as_str()
        {
            let (r, k) = pqperf_model::paths::redact_machine_paths(t);
            n += k;
            *s = r.into();
        }
    };
    if let Some(ps) = v.get_mut("processes").and_then(|p| p.as_array_mut()) {
        for p in ps {
            redact(p.get_mut("stderr"));
        }
    }
    redact(v.get_mut("stderr"));
    (n > 0).then(|| pqperf_model::pyjson::value_to_string(&v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page refresh that fails is named with its stage and every source once.
    #[test]
    fn a_failed_page_refresh_is_named_with_its_sources() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "summary.md: denied");
        let e = crate::PhaseError::stage("report", io);
        assert_eq!(chain(&e), "report: summary.md: denied");
        let e = crate::PhaseError::from(CampaignError::msg("dataset: no system"));
        assert_eq!(chain(&e), "dataset: no system");
    }
}
