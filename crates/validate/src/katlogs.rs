//! KAT logs: each build entry's `kat_log` exists, its sha256 equals `kat_log_sha256`, its last
//! RESULT equals `kat`, and a reference log's manifest digest equals the candidate's
//! `kat.sha256` entry.

use pqperf_model::BuildJson;
use pqperf_model::dataset::{Dataset, SystemData};

use crate::problem::{Problem, Report, has_error_for};

pub(crate) fn check_kat_logs(rep: &mut Report, ds: &Dataset, sys: &SystemData, build: &BuildJson) {
    let build_shown = pqperf_model::layout::RunLayout::new(&sys.dir).build_json();
    for (key, e) in &build.instances {
        let Some(rel) = &e.kat_log else { continue };
        let field = format!("instances.{key}.kat_log");
        if rel.starts_with('/') {
            continue; // reported by the path scan
        }
        let Some(log) = sys.kat_log(rel) else {
            let shown = sys.dir.join(rel);
            if !has_error_for(rep, &shown) {
                rep.problems.push(Problem::new(
                    &build_shown,
                    field,
                    format!("KAT log {rel} is missing"),
                ));
            }
            continue;
        };
        rep.kat_logs += 1;
        match &e.kat_log_sha256 {
            Some(want) if *want != log.value.sha256 => rep.problems.push(Problem::new(
                &log.shown,
                "sha256",
                format!(
                    "file digest {} != build.json instances.{key}.kat_log_sha256 {want}",
                    log.value.sha256
                ),
            )),
            Some(_) => {}
            None => rep.problems.push(Problem::new(
                &build_shown,
                format!("instances.{key}.kat_log_sha256"),
                "missing although kat_log is set",
            )),
        }
        match log.value.status() {
            Some(st) if st == e.kat => {}
            Some(st) => rep.problems.push(Problem::new(
                &log.shown,
                "RESULT",
                format!("status {st} != build.json instances.{key}.kat {}", e.kat),
            )),
            None => rep
                .problems
                .push(Problem::new(&log.shown, "RESULT", "no RESULT line")),
        }
        if e.variant == "reference"
            && let (Some(m), Some(ml)) = (ds.manifest(&e.candidate), log.value.manifests.first())
            && let Some(entry) = m.lookup(&e.label, &ml.file)
            && entry.sha256 != ml.sha256
        {
            rep.problems.push(Problem::new(
                &log.shown,
                "manifest",
                format!(
                    "digest {} != {}/kat.sha256 entry {} ({})",
                    ml.sha256, e.candidate, entry.sha256, entry.path
                ),
            ));
        }
    }
}
