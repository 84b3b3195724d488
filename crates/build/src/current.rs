//! Whether a build.json entry still describes what would be built now: the digest of the
//! inputs an instance is built from ([`inputs_sha256`]: its catalog entry and its import
//! record), recorded in the entry at build time, and the library file, whose sha256 the entry
//! names. [`stale_builds`] lists the selected instances whose entry no longer matches (a
//! re-import without a rebuild, a library replaced or removed by a build that did not
//! finish); the stages that test or measure a library refuse them ("run build"), the build
//! phase of a campaign rebuilds them.

use std::path::Path;

use pqperf_model::BuildEntry;
use pqperf_model::catalog::{Candidate, Catalog, Instance};
use pqperf_model::provenance::ImportRecord;
use serde_json::json;

use pqperf_model::select::Selection;

use crate::{BuildError, catalog_path, read_build_json, sha256_file};

/// The build.json entry key (`extra`) holding [`inputs_sha256`] of the build.
pub const INPUTS_KEY: &str = "inputs_sha256";

/// sha256 (hex) of what `cand`/`inst` is built from: the candidate's id, type, algorithm and
/// source root, the catalog instance as it is now, and the import record's submission
/// digest and folder (`<run>/imports/<id>.json`, when there is one). A re-import of other
/// sources or an edit of the catalog entry changes it.
pub fn inputs_sha256(run_dir: &Path, cand: &Candidate, inst: &Instance) -> String {
    let import = ImportRecord::load(run_dir, &cand.id).and_then(|r| {
        r.instances.get(&inst.label).map(
            |i| json!({"source_sha256": i.source_sha256, "folder": i.folder, "source": i.source}),
        )
    });
    let v = json!({
        "candidate": {
            "id": cand.id,
            "type": cand.kind.as_str(),
            "algorithm": cand.algorithm,
            "root": cand.root,
        },
        "instance": serde_json::to_value(inst).unwrap_or_default(),
        "import": import,
    });
    pqperf_model::katlog::sha256_hex(v.to_string().as_bytes())
}

/// The inputs digest a build.json entry recorded (`None`: built before it was recorded).
pub fn recorded_inputs(e: &BuildEntry) -> Option<&str> {
    e.extra.get(INPUTS_KEY).and_then(|v| v.as_str())
}

/// Why the entry `e` of `cand`/`inst` no longer describes what would be built now, if it
/// does not: the inputs changed since the build (a re-import or catalog edit), or the library
/// it names is missing or has another sha256 (replaced, or removed by a build that did not
/// finish). `None` when it matches or cannot be compared (an entry without the digests).
pub fn build_staleness(
    run_dir: &Path,
    cand: &Candidate,
    inst: &Instance,
    e: &BuildEntry,
) -> Option<String> {
    if let Some(old) = recorded_inputs(e)
        && old != inputs_sha256(run_dir, cand, inst)
    {
        return Some("its catalog entry or import changed since it was built".into());
    }
    let (Some(lib), Some(sha)) = (&e.library, &e.library_sha256) else {
        return None;
    };
    match sha256_file(&run_dir.join(lib)) {
        Err(_) => Some(format!("its library {lib} is missing")),
        Ok(now) if &now != sha => Some(format!(
            "its library {lib} is not the one build.json names (sha256 {} != {})",
            &now[..12.min(now.len())],
            &sha[..12.min(sha.len())]
        )),
        Ok(_) => None,
    }
}

/// The instances of the run's catalog selected by `only` whose build.json entry is stale
/// ([`build_staleness`]), as `<id>/<label>: <why>` lines; empty without a catalog or
/// build.json.
pub fn stale_builds(
    run_dir: &Path,
    catalog: Option<&Path>,
    select: &Selection,
) -> Result<Vec<String>, BuildError> {
    let cat_path = catalog_path(run_dir, catalog);
    if !cat_path.is_file() {
        return Ok(Vec::new());
    }
    let cat = Catalog::load(&cat_path)?;
    let bj = read_build_json(run_dir)?;
    let mut out = Vec::new();
    for (c, i) in cat.instances() {
        if !select.selects(&c.id, &i.label) {
            continue;
        }
        let key = i.key(c);
        if let Some(e) = bj.instances.get(&key)
            && let Some(why) = build_staleness(run_dir, c, i, e)
        {
            out.push(format!("{key}: {why}"));
        }
    }
    Ok(out)
}

/// The refusal text for stale entries (`lines` from [`stale_builds`]), naming each instance
/// and what to run.
pub fn stale_refusal(what: &str, run_dir: &Path, lines: &[String]) -> String {
    let mut s = format!(
        "{what}: build.json no longer describes {} selected instance(s); run `pqperf build --run-dir {}` (or `campaign build`) first:",
        lines.len(),
        run_dir.display()
    );
    for l in lines {
        s.push_str("\n  ");
        s.push_str(l);
    }
    s
}
