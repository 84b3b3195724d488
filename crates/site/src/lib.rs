//! Stage site: static HTML site from one or more datasets, rankings, joint cross-system view
//! and inline SVG charts.
//!
//! Input is a [`SiteData`]: the pages of the report stage as blocks (site form: candidate ×
//! system, per-system summary, method, symmetric survey) plus the facts the site computes on
//! (records, profiles, build entries, side tables). [`build_site`] writes every page in one
//! frame ([`frame`]) with one stylesheet (no external assets, no JavaScript),
//! adds the ordered measurements per security target, the joint view when two or more
//! systems are present and the charts, and copies the evidence files under `evidence/` so
//! that every linked number can be checked offline.
//!
//! Site layout: `index.html`, `style.css`, `<sys>/index.html` (summary), `<sys>/method.html`,
//! `<sys>/<cand>.html`, `<sys>/ranking-{128,256,512}.html`, `symmetric-survey.html`,
//! `joint/index.html`, `joint/<cand>.html`, `evidence/<sys>/…`, `evidence/side/*.csv`; each
//! JSON evidence file has its viewer page `<file>.json.html` beside it ([`viewer`]), which a
//! value's link opens at the field that holds the value.

#![forbid(unsafe_code)]

pub mod check;
pub mod data;
pub mod evidence;
mod frame;
pub mod html;
mod joint;
pub mod load;
mod pages;
pub mod rank;
pub mod svg;
pub mod viewer;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use frame::{NavItem, SwitchItem};

pub use data::SiteData;

/// Errors of the site stage.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An I/O error whose message names the operation and the path (`fsutil`).
    #[error(transparent)]
    Fs(std::io::Error),
    /// Bad input (dataset, `--out`), named in the message.
    #[error("{0}")]
    Input(String),
}

impl SiteError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> SiteError {
        SiteError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// What [`build_site`] wrote.
#[derive(Debug, Default)]
pub struct Built {
    /// HTML pages written (site-root-relative paths, sorted).
    pub pages: Vec<String>,
    /// Evidence files copied.
    pub evidence_files: usize,
    /// The site's folder.
    pub out: PathBuf,
}

/// One page before templating.
pub(crate) struct PageOut {
    /// Site-root-relative path (`x86_1/sign-02.html`).
    pub path: String,
    pub title: String,
    pub body: String,
    /// Crumb HTML to put above the body when the body has none.
    pub crumb: Option<String>,
    pub main_class: &'static str,
    /// Joint-view page of this candidate, if any (site-root-relative).
    pub joint: Option<String>,
}

const STYLE: &str = include_str!("style.css");

/// Evidence files of the site: (source file, site-root-relative destination).
pub fn evidence_files(site: &SiteData) -> Vec<(PathBuf, String)> {
    evidence_files_of(&system_dirs(site), &site.side_files)
}

/// (id, data directory) of every system of the site.
fn system_dirs(site: &SiteData) -> Vec<(String, PathBuf)> {
    site.systems
        .iter()
        .map(|s| (s.id.clone(), s.data_dir.clone()))
        .collect()
}

/// [`evidence_files`] from the systems' (id, data directory) and the side files by site name.
fn evidence_files_of(
    systems: &[(String, PathBuf)],
    side: &BTreeMap<String, PathBuf>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for (id, data_dir) in systems {
        for top in ["build.json", "campaign.json"] {
            let p = data_dir.join(top);
            if p.is_file() {
                out.push((p, format!("evidence/{id}/{top}")));
            }
        }
        for dir in ["records", "profile", "kat", "katcheck", "ct", "count"] {
            let base = data_dir.join(dir);
            let mut stack = vec![base.clone()];
            while let Some(d) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in rd.flatten() {
                    let p = e.path();
                    let Ok(ft) = e.file_type() else { continue };
                    if ft.is_dir() {
                        stack.push(p);
                    } else if ft.is_file()
                        && let Ok(rel) = p.strip_prefix(data_dir)
                    {
                        let rel = rel.to_string_lossy().replace('\\', "/");
                        out.push((p.clone(), format!("evidence/{id}/{rel}")));
                    }
                }
            }
        }
    }
    for (name, src) in side {
        out.push((src.clone(), format!("evidence/side/{name}")));
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

fn md_to_html_path(p: &str) -> String {
    match p.strip_suffix(".md") {
        Some(s) => format!("{s}.html"),
        None => p.to_string(),
    }
}

fn root_prefix(path: &str) -> String {
    "../".repeat(path.matches('/').count())
}

/// Render the whole site into `out`: written into a staging directory beside it and swapped
/// in whole with renames (a reader or a crash sees the old site or the new one). An existing
/// `out` must be empty or a site (holding `index.html` and `style.css`); it is replaced.
pub fn build_site(site: &SiteData, out: &Path) -> Result<Built, SiteError> {
    let evidence = evidence_files(site);
    staged(out, |stage| render_site(site, stage, &evidence, true))
}

/// Run `render` on a fresh staging directory beside `out`, then swap the result in.
fn staged(
    out: &Path,
    render: impl FnOnce(&Path) -> Result<Built, SiteError>,
) -> Result<Built, SiteError> {
    if let Ok(md) = std::fs::symlink_metadata(out) {
        if !md.is_dir() {
            return Err(SiteError::Input(format!(
                "{}: exists and is not a directory (refused: the site replaces its output directory)",
                out.display()
            )));
        }
        refuse_symlinks_in_out(out)?;
        let empty = std::fs::read_dir(out)
            .map_err(|e| SiteError::io(out, e))?
            .next()
            .is_none();
        let is_site = out.join("index.html").is_file() && out.join("style.css").is_file();
        if !(empty || is_site) {
            return Err(SiteError::Input(format!(
                "{}: not empty and not a site (no index.html and style.css); refused: the site replaces its output directory whole, choose a new or empty one",
                out.display()
            )));
        }
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).map_err(|e| SiteError::io(parent, e))?;
    let stage = pqperf_model::fsutil::staging_dir(parent, out).map_err(SiteError::Fs)?;
    match render(&stage) {
        Ok(mut built) => {
            pqperf_model::fsutil::swap_dir(&stage, out).map_err(SiteError::Fs)?;
            built.out = out.to_path_buf();
            Ok(built)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&stage);
            Err(e)
        }
    }
}

/// [`build_site`] with the evidence list given; the files are linked here only when
/// `copy` is set (otherwise the caller links them, e.g. while the report pages are made).
fn render_site(
    site: &SiteData,
    out: &Path,
    evidence: &[(PathBuf, String)],
    copy: bool,
) -> Result<Built, SiteError> {
    let systems: Vec<String> = site.systems.iter().map(|s| s.id.clone()).collect();
    // Every path that will exist, for link checks while rendering.
    let mut known: HashSet<String> = HashSet::new();
    known.insert("style.css".into());
    for (_, dest) in evidence {
        known.insert(dest.clone());
        if evidence::has_viewer(dest) {
            known.insert(evidence::page_path(dest));
        }
    }
    for (p, _) in &site.pages {
        known.insert(md_to_html_path(p));
    }
    for (p, _) in &site.downloads {
        known.insert(p.clone());
    }
    let generated = pages::generated_paths(site);
    known.extend(generated.iter().cloned());

    std::fs::create_dir_all(out).map_err(|e| SiteError::io(out, e))?;
    refuse_symlinks_in_out(out)?;
    let css = out.join("style.css");
    pqperf_model::fsutil::write_staged(&css, STYLE.as_bytes()).map_err(SiteError::Fs)?;
    for (p, bytes) in &site.downloads {
        let dest = out.join(p);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| SiteError::io(parent, e))?;
        }
        pqperf_model::fsutil::write_staged(&dest, bytes).map_err(SiteError::Fs)?;
    }
    let known = &known;
    let systems = &systems;
    // Three workers on the machine's cores: evidence links, and the pages in two halves
    // (blocks → HTML → template → file). Output does not depend on the split.
    let (written, ()) = std::thread::scope(|scope| -> Result<(Vec<String>, ()), SiteError> {
        let ev = scope.spawn(|| {
            if copy {
                copy_evidence_timed(evidence, out)
            } else {
                Ok(())
            }
        });
        let gen_h = scope.spawn(|| pages::generated_pages(site, known));
        let half = site.pages.len() / 2;
        let (first, second) = site.pages.split_at(half);
        let md_h = scope.spawn(move || -> Result<Vec<String>, SiteError> {
            let outs: Vec<PageOut> = second
                .iter()
                .map(|(p, doc)| pages::report_page(site, systems, p, doc, known))
                .collect();
            write_pages(site, systems, known, &outs, out)
        });
        let t = std::time::Instant::now();
        let outs: Vec<PageOut> = first
            .iter()
            .map(|(p, doc)| pages::report_page(site, systems, p, doc, known))
            .collect();
        let t_md = t.elapsed();
        let mut written = write_pages(site, systems, known, &outs, out)?;
        if std::env::var_os("PQPERF_SITE_TIMING").is_some() {
            eprintln!(
                "site timing: {} markdown pages {:.3} s, templated and written {:.3} s",
                outs.len(),
                t_md.as_secs_f64(),
                (t.elapsed() - t_md).as_secs_f64()
            );
        }
        let generated = gen_h
            .join()
            .map_err(|_| SiteError::Input("page worker panicked".into()))?;
        written.extend(write_pages(site, systems, known, &generated, out)?);
        written.extend(
            md_h.join()
                .map_err(|_| SiteError::Input("page worker panicked".into()))??,
        );
        ev.join()
            .map_err(|_| SiteError::Input("evidence worker panicked".into()))??;
        Ok((written, ()))
    })?;
    let mut written = written;
    written.sort();
    Ok(Built {
        pages: written,
        evidence_files: evidence.len(),
        out: out.to_path_buf(),
    })
}

fn copy_evidence_timed(evidence: &[(PathBuf, String)], out: &Path) -> Result<(), SiteError> {
    let t = std::time::Instant::now();
    let r = copy_evidence(evidence, out);
    if std::env::var_os("PQPERF_SITE_TIMING").is_some() {
        eprintln!(
            "site timing: evidence copy {:.3} s",
            t.elapsed().as_secs_f64()
        );
    }
    r
}

/// The site never writes through a symbolic link already in `--out` (it could point anywhere).
fn refuse_symlinks_in_out(out: &Path) -> Result<(), SiteError> {
    match pqperf_model::dataset::first_symlink(out) {
        Some(l) => Err(SiteError::Input(format!(
            "{}: symbolic link in the output directory (refused: the site does not write through links; remove it)",
            out.join(l).display()
        ))),
        None => Ok(()),
    }
}

fn copy_evidence(evidence: &[(PathBuf, String)], out: &Path) -> Result<(), SiteError> {
    let mut dirs: HashSet<PathBuf> = HashSet::new();
    for (src, dest) in evidence {
        let d = out.join(dest);
        if let Some(parent) = d.parent()
            && dirs.insert(parent.to_path_buf())
        {
            std::fs::create_dir_all(parent).map_err(|e| SiteError::io(parent, e))?;
        }
        // Link first; only an existing destination (a rebuilt site) needs the removal.
        if std::fs::hard_link(src, &d).is_err() {
            let _ = std::fs::remove_file(&d);
            if std::fs::hard_link(src, &d).is_err() {
                std::fs::copy(src, &d).map_err(|e| SiteError::io(src, e))?;
            }
        }
        if evidence::has_viewer(dest) {
            write_viewer(src, dest, out)?;
        }
    }
    Ok(())
}

/// The evidence viewer page of one JSON evidence file (a file that is not one JSON value
/// gets a page that says so and links the raw file).
fn write_viewer(src: &Path, dest: &str, out: &Path) -> Result<(), SiteError> {
    let bytes = std::fs::read(src).map_err(|e| SiteError::io(src, e))?;
    let page = evidence::page_path(dest);
    let html = viewer::render(dest, &bytes).unwrap_or_else(|| {
        let name = dest.rsplit('/').next().unwrap_or(dest);
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{n}</title>\n</head>\n<body>\n<main>\n<p>This evidence file is not one JSON value; see <a href=\"{n}\">the raw file</a>.</p>\n</main>\n</body>\n</html>\n",
            n = html::escape(name)
        )
    });
    pqperf_model::fsutil::write_staged(&out.join(&page), html.as_bytes()).map_err(SiteError::Fs)
}

fn write_pages(
    site: &SiteData,
    systems: &[String],
    known: &HashSet<String>,
    outs: &[PageOut],
    out: &Path,
) -> Result<Vec<String>, SiteError> {
    let mut dirs: HashSet<PathBuf> = HashSet::new();
    let mut written = Vec::with_capacity(outs.len());
    for p in outs {
        let root = root_prefix(&p.path);
        let nav = nav_items(site, &p.path, &root, known);
        let switch = switch_items(systems, &p.path, known, p.joint.as_deref());
        let (notice_head, notice) = host_notice(site, &p.path);
        let body = html::mark_digests(&p.body);
        let html = frame::Frame {
            title: &p.title,
            root: &root,
            nav: &nav,
            switch: &switch,
            crumb: p.crumb.as_deref(),
            main_class: p.main_class,
            body: &body,
            notice: notice_head.zip(notice.as_deref()),
        }
        .render();
        let dest = out.join(&p.path);
        if let Some(parent) = dest.parent()
            && dirs.insert(parent.to_path_buf())
        {
            std::fs::create_dir_all(parent).map_err(|e| SiteError::io(parent, e))?;
        }
        pqperf_model::fsutil::write_staged(&dest, html.as_bytes()).map_err(SiteError::Fs)?;
        written.push(p.path.clone());
    }
    Ok(written)
}

/// The visible notice of a page of a system whose host was not fixed (from the host-check
/// outcome recorded in its campaign.json): (heading, text), or `None` when every check passed.
fn host_notice(site: &SiteData, page: &str) -> (Option<&'static str>, Option<String>) {
    use pqperf_model::HostState;
    if page.starts_with("joint/") {
        return joint_host_notice(site);
    }
    let Some(sys) = site
        .systems
        .iter()
        .find(|s| page.starts_with(&format!("{}/", s.id)))
    else {
        return (None, None);
    };
    if let Some(e) = &sys.emulated {
        let host = match &sys.host_state {
            Some(HostState::NotFixed(problems)) => format!(
                " The host checks recorded in campaign.json found: {}.",
                problems.join("; ")
            ),
            _ => String::new(),
        };
        return (
            Some("emulated: timings are not performance figures."),
            Some(format!(
                "System {} ran its code under {e} (campaign.json pqperf.emulated): the figures show that the pipeline ran, not how fast the code is on real hardware.{host}",
                sys.id
            )),
        );
    }
    match &sys.host_state {
        // No campaign.json loaded (hand-built data): nothing recorded to report on.
        Some(HostState::Fixed) | None => (None, None),
        Some(HostState::NotFixed(problems)) => (
            Some("The host of this system was not fixed."),
            Some(format!(
                "The host checks recorded in campaign.json found: {}. These numbers come from an unprepared machine and are not comparable with those of a fixed-clock system.",
                problems.join("; ")
            )),
        ),
        Some(HostState::Unknown) => (
            Some("Host state unknown."),
            Some(format!(
                "The evidence of system {} records no host-check outcome; the clock, turbo, governor and SMT state during timing are not known.",
                sys.id
            )),
        ),
    }
}

/// The notice of a joint-view page: the systems it compares whose host was not fixed (or
/// whose host state is not recorded), each with what its host checks found; `None` when
/// every system's host was fixed. (Emulated systems are marked in the page's system list.)
fn joint_host_notice(site: &SiteData) -> (Option<&'static str>, Option<String>) {
    use pqperf_model::HostState;
    let mut parts = Vec::new();
    for sys in &site.systems {
        match &sys.host_state {
            Some(HostState::NotFixed(problems)) => parts.push(format!(
                "system {}: the host checks recorded in its campaign.json found: {}",
                sys.id,
                problems.join("; ")
            )),
            Some(HostState::Unknown) => parts.push(format!(
                "system {}: its evidence records no host-check outcome (clock, turbo, governor and SMT state not known)",
                sys.id
            )),
            Some(HostState::Fixed) | None => {}
        }
    }
    if parts.is_empty() {
        return (None, None);
    }
    (
        Some("The host of a compared system was not fixed."),
        Some(format!(
            "{}. Ratios involving such a system compare numbers from an unprepared machine; they are not comparable with those of fixed-clock systems.",
            parts.join(". ")
        )),
    )
}

fn nav_items(site: &SiteData, page: &str, root: &str, known: &HashSet<String>) -> Vec<NavItem> {
    let mut items = vec![NavItem {
        label: "Performance".into(),
        href: format!("{root}index.html"),
        current: page == "index.html",
    }];
    for s in &site.systems {
        let target = format!("{}/index.html", s.id);
        if known.contains(&target) {
            items.push(NavItem {
                label: s.id.clone(),
                current: page.starts_with(&format!("{}/", s.id)),
                href: format!("{root}{target}"),
            });
        }
    }
    if known.contains("joint/index.html") {
        items.push(NavItem {
            label: "Compare systems".into(),
            href: format!("{root}joint/index.html"),
            current: page.starts_with("joint/"),
        });
    }
    if known.contains("symmetric-survey.html") {
        items.push(NavItem {
            label: "Symmetric survey".into(),
            href: format!("{root}symmetric-survey.html"),
            current: page == "symmetric-survey.html",
        });
    }
    items
}

/// The system switcher: the same page on every other system (and the joint view).
fn switch_items(
    systems: &[String],
    page: &str,
    known: &HashSet<String>,
    joint: Option<&str>,
) -> Vec<SwitchItem> {
    let Some((sys, rest)) = page.split_once('/') else {
        return Vec::new();
    };
    if !systems.iter().any(|s| s == sys) {
        return Vec::new();
    }
    let mut items: Vec<SwitchItem> = systems
        .iter()
        .map(|s| {
            let target = format!("{s}/{rest}");
            SwitchItem {
                label: s.clone(),
                current: s == sys,
                href: known
                    .contains(&target)
                    .then(|| html::relative(page, &target)),
            }
        })
        .collect();
    if let Some(j) = joint {
        items.push(SwitchItem {
            label: "all systems side by side".into(),
            href: Some(html::relative(page, j)),
            current: false,
        });
    }
    items
}

/// Prefix of the site-form page paths of the report stage.
const SITE_PREFIX: &str = "content/performance/";

/// The report stage's pages (site form, as blocks) of `systems` in the dataset at `root`, with
/// paths relative to the site root (`x86_1/sign-02.md`, `x86_1/index.md`, …).
pub fn report_pages(
    root: &Path,
    systems: &[String],
) -> Result<Vec<(String, pqperf_report::page::Page)>, SiteError> {
    let ds =
        pqperf_model::dataset::Dataset::load(root).map_err(|e| SiteError::Input(e.to_string()))?;
    Ok(pages_of(&ds, systems)?.0)
}

/// One system's site-form pages: (kind, path, page), and its summary rows.
type SystemPages = (
    Vec<(pqperf_report::PageKind, String, pqperf_report::page::Page)>,
    Vec<pqperf_report::export::SummaryRow>,
);

/// Site pages and data files (see [`SiteData::downloads`]).
type PagesAndDownloads = (
    Vec<(String, pqperf_report::page::Page)>,
    Vec<(String, Vec<u8>)>,
);

/// Site-form pages of `systems`, one thread per system.
fn pages_of(
    ds: &pqperf_model::dataset::Dataset,
    systems: &[String],
) -> Result<PagesAndDownloads, SiteError> {
    let per_system: Vec<Result<SystemPages, SiteError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = systems
            .iter()
            .map(|sys| {
                scope.spawn(move || {
                    let err = |e: pqperf_report::ReportError| {
                        SiteError::Input(format!("report pages of {sys}: {e}"))
                    };
                    let docs = pqperf_report::render_docs(ds, sys, pqperf_report::Form::Site)
                        .map_err(err)?;
                    let rows = pqperf_report::summary_export(ds, sys).map_err(err)?;
                    Ok((docs, rows))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(SiteError::Input("report worker panicked".into())))
            })
            .collect()
    });
    use pqperf_report::export::{CsvExporter, Exporter, JsonExporter};
    let mut pages = Vec::new();
    let mut downloads = Vec::new();
    for (sys, r) in systems.iter().zip(per_system) {
        let (docs, rows) = r?;
        for (_, path, doc) in docs {
            let rel = path.strip_prefix(SITE_PREFIX).unwrap_or(&path).to_string();
            pages.push((rel, doc));
        }
        for e in [&CsvExporter as &dyn Exporter, &JsonExporter] {
            downloads.push((
                format!("{sys}/summary.{}", e.extension()),
                e.serialize(&rows),
            ));
        }
    }
    Ok((pages, downloads))
}

/// Load a dataset root (the evidence model, parsed once), make its report pages, then render
/// the site into `out` (see [`build_from_loaded`]).
pub fn build_from_dataset(root: &Path, systems: &[String], out: &Path) -> Result<Built, SiteError> {
    let ds = load_dataset(root)?;
    build_from_loaded(&ds, systems, out)
}

/// Load the evidence model of a dataset root for [`build_from_loaded`].
pub fn load_dataset(root: &Path) -> Result<pqperf_model::dataset::Dataset, SiteError> {
    let t = std::time::Instant::now();
    let ds =
        pqperf_model::dataset::Dataset::load(root).map_err(|e| SiteError::Input(e.to_string()))?;
    if std::env::var_os("PQPERF_SITE_TIMING").is_some() {
        eprintln!("site timing: load {:.3} s", t.elapsed().as_secs_f64());
    }
    Ok(ds)
}

/// Make the report pages of a loaded dataset and render the site into `out` (staged and
/// swapped in whole, as [`build_site`]); the evidence files are linked while the pages are
/// made. Phase times are printed to stderr when `PQPERF_SITE_TIMING` is set.
pub fn build_from_loaded(
    ds: &pqperf_model::dataset::Dataset,
    systems: &[String],
    out: &Path,
) -> Result<Built, SiteError> {
    staged(out, |stage| render_loaded(ds, systems, stage))
}

fn render_loaded(
    ds: &pqperf_model::dataset::Dataset,
    systems: &[String],
    out: &Path,
) -> Result<Built, SiteError> {
    let timing = std::env::var_os("PQPERF_SITE_TIMING").is_some();
    let t = std::time::Instant::now();
    let side = load::side(ds)?;
    let mut site = load::load(ds, &side, systems)?;
    let ids: Vec<String> = site.systems.iter().map(|s| s.id.clone()).collect();
    std::fs::create_dir_all(out).map_err(|e| SiteError::io(out, e))?;
    refuse_symlinks_in_out(out)?;
    let mut t_pages = t.elapsed();
    let built = std::thread::scope(|scope| -> Result<Built, SiteError> {
        // The evidence files do not depend on the pages: one worker lists them (the list is
        // handed over for the link checks of the HTML) and links them while the report pages
        // are made and rendered.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let dirs = system_dirs(&site);
        let side = site.side_files.clone();
        let ev = scope.spawn(move || {
            let evidence = evidence_files_of(&dirs, &side);
            let _ = tx.send(evidence.clone());
            copy_evidence_timed(&evidence, out)
        });
        let (pages, downloads) = pages_of(ds, &ids)?;
        t_pages = t.elapsed();
        site.downloads = downloads;
        let evidence = rx
            .recv()
            .map_err(|_| SiteError::Input("evidence worker panicked".into()))?;
        site.pages = pages;
        let built = render_site(&site, out, &evidence, false);
        ev.join()
            .map_err(|_| SiteError::Input("evidence worker panicked".into()))??;
        built
    })?;
    if timing {
        eprintln!(
            "site timing: report pages {:.3} s, html {:.3} s",
            t_pages.as_secs_f64(),
            (t.elapsed() - t_pages).as_secs_f64()
        );
    }
    Ok(built)
}

/// Pages by kind, for callers that want to point at one (e.g. the demo's printed path).
pub fn summary_page(out: &Path, system: &str) -> PathBuf {
    out.join(system).join("index.html")
}

/// Map of candidate id → systems it appears on (records or build entries).
pub(crate) fn candidate_systems(site: &SiteData) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in &site.systems {
        let mut ids: HashSet<&str> = s
            .records()
            .iter()
            .map(|r| r.rec.candidate.as_str())
            .collect();
        ids.extend(s.built().into_iter().map(|(c, _, _)| c));
        for id in ids {
            m.entry(id.to_string()).or_default().push(s.id.clone());
        }
    }
    m
}
