//! What a pqperf candidate page says about what was built from what (issue 27): where the KAT
//! manifest came from and the digests computed from the generated text (section 3), and per
//! instance the import command, the submission's digest, the folder / evaluated
//! `ALGORITHM_INSTANCE` / manifest entry, catalog edits, the source selection and who
//! defines `drng_algorithm` (section 7). Read from build.json entries (`provenance`,
//! `sources`, `drng_algorithm`, `kat_computed`); reference datasets have none of these keys
//! and their pages are unchanged.

use serde_json::Value;

use crate::common::code;
use crate::md::sanitize_fragment;
use crate::view::SystemView;

fn extra<'a>(v: &'a SystemView, cand: &str, label: &str, key: &str) -> Option<&'a Value> {
    v.entry(cand, label).and_then(|e| e.extra.get(key))
}

fn short(s: &str) -> String {
    s.chars().take(12).collect()
}

/// The sentence opening section 3 of a pqperf page: where the manifest came from.
pub(super) fn kat_origin_sentence(v: &SystemView, cand: &str, labels: &[String]) -> String {
    let mut seen: Vec<(String, Vec<&str>)> = Vec::new();
    for label in labels {
        let k = extra(v, cand, label, "provenance").and_then(|p| p.get("kat_manifest"));
        let d = match k {
            None => "where its KAT reference came from is not recorded in this dataset".to_string(),
            Some(k) => match k["origin"].as_str() {
                Some("submission") => format!(
                    "the generated KAT text was hashed (canonical SHA-256) and compared with the manifest the submission ships ({}, sha256 {}…)",
                    code(k["path"].as_str().unwrap_or("?")),
                    short(k["sha256"].as_str().unwrap_or(""))
                ),
                Some("curated") => format!(
                    "the generated KAT text was hashed (canonical SHA-256) and compared with a curated manifest that is not part of the submission ({}, sha256 {}…)",
                    code(k["path"].as_str().unwrap_or("?")),
                    short(k["sha256"].as_str().unwrap_or(""))
                ),
                _ => match k["missing"].as_str() {
                    Some(m) => format!(
                        "no KAT manifest ({} is named but does not exist): the generated text was compared with the submitted KAT files where present, else NOKAT",
                        code(m)
                    ),
                    None => "no KAT manifest: the generated text was compared with the submitted KAT files where present, else NOKAT".to_string(),
                },
            },
        };
        match seen.iter_mut().find(|(x, _)| *x == d) {
            Some((_, ls)) => ls.push(label),
            None => seen.push((d, vec![label])),
        }
    }
    if seen.len() <= 1 {
        let d = seen
            .pop()
            .map(|(d, _)| d)
            .unwrap_or_else(|| "no instance was checked".into());
        let mut c = d.chars();
        let d = c
            .next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default();
        return format!("{d}; this was done for each library before timing.");
    }
    let parts: Vec<String> = seen
        .iter()
        .map(|(d, ls)| {
            let ls: Vec<String> = ls.iter().map(|l| code(l)).collect();
            format!("{}: {d}", ls.join(", "))
        })
        .collect();
    format!("Before timing, per instance — {}.", parts.join("; "))
}

/// The computed digests of the KAT logs (pqperf's `computed` lines), one line per instance.
pub(super) fn computed_digests(v: &SystemView, cand: &str, labels: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for label in labels {
        let Some(c) = extra(v, cand, label, "kat_computed").and_then(Value::as_array) else {
            continue;
        };
        let d: Vec<String> = c
            .iter()
            .filter_map(Value::as_str)
            .map(|l| {
                let mut p = l.splitn(3, ' ');
                let (sha, mode, file) = (
                    p.next().unwrap_or(""),
                    p.next().unwrap_or(""),
                    p.next().unwrap_or(""),
                );
                format!("{} {mode} {}", code(sha), code(file))
            })
            .collect();
        out.push(format!("- {}: computed {}", code(label), d.join(", ")));
    }
    if !out.is_empty() {
        out.insert(
            0,
            "Digests computed from the generated KAT text (canonical SHA-256 in the manifest's mode, from the KAT logs):".into(),
        );
        out.insert(1, String::new());
        out.push(String::new());
    }
    out
}

/// Section 7's "built from" list: one item per instance with recorded provenance.
pub(super) fn built_from(v: &SystemView, cand: &str, labels: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for label in labels {
        let p = extra(v, cand, label, "provenance");
        let src = extra(v, cand, label, "sources");
        if p.is_none() && src.is_none() {
            continue;
        }
        let mut parts: Vec<String> = Vec::new();
        if let Some(i) = p.and_then(|p| p.get("import")) {
            parts.push(format!(
                "imported with {} ({}) from {} (sha256 {})",
                code(i["command"].as_str().unwrap_or("not recorded")),
                i["tool"].as_str().unwrap_or("pqperf"),
                code(i["source"].as_str().unwrap_or("?")),
                code(i["source_sha256"].as_str().unwrap_or("?"))
            ));
        }
        if let Some(id) = p.and_then(|p| p.get("identity")) {
            let mut s = format!(
                "built instance {} from folder {}; ALGORITHM_INSTANCE as gcc evaluates it: {}; manifest entry: {}",
                code(id["built_instance"].as_str().unwrap_or("?")),
                code(id["folder"].as_str().unwrap_or("?")),
                id["evaluated_instance"]
                    .as_str()
                    .map(code)
                    .unwrap_or_else(|| "not evaluable".into()),
                id["manifest_entry"]
                    .as_str()
                    .map(code)
                    .unwrap_or_else(|| "none".into())
            );
            if id.get("note").is_some() {
                s.push_str(" — these names disagree");
            }
            parts.push(s);
        }
        if let Some(e) = p
            .and_then(|p| p.get("catalog_edits"))
            .and_then(Value::as_array)
        {
            let e: Vec<String> = e.iter().filter_map(Value::as_str).map(code).collect();
            parts.push(if e.is_empty() {
                "catalog as imported (no edits)".into()
            } else {
                format!("catalog edits: {}", e.join(", "))
            });
        }
        if let Some(s) = src {
            let linked: Vec<String> = s["linked"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).map(code).collect())
                .unwrap_or_default();
            parts.push(format!("sources linked: {}", linked.join(", ")));
            if let Some(l) = s["left_out"].as_object()
                && !l.is_empty()
            {
                let l: Vec<String> = l
                    .iter()
                    .map(|(f, why)| format!("{} ({})", code(f), why.as_str().unwrap_or("")))
                    .collect();
                parts.push(format!("left out: {}", l.join(", ")));
            }
        }
        if let Some(d) = extra(v, cand, label, "drng_algorithm").and_then(Value::as_str) {
            parts.push(format!("`drng_algorithm` {d}"));
        }
        out.push(sanitize_fragment(&format!(
            "- {}: {}.",
            code(label),
            parts.join("; ")
        )));
    }
    if !out.is_empty() {
        out.insert(
            0,
            "What each library was built from (build.json `provenance`, `sources`):".into(),
        );
        out.insert(1, String::new());
        out.push(String::new());
    }
    out
}
