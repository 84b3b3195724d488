//! Path scan: absolute machine paths in every text line, JSON string and key
//! ([`pqperf_model::paths::find_machine_path`]), `/`-rooted values in path fields, and the
//! reference JSON layout (`json.dumps(indent=1)` + newline, re-serialised byte for byte).

use std::path::Path;

use pqperf_model::paths::find_machine_path;
use pqperf_model::pyjson;
use serde_json::Value;

use crate::problem::{Problem, Report};

pub(crate) fn scan_text_file(rep: &mut Report, path: &Path, shown: &Path) {
    let Ok(bytes) = pqperf_model::limits::read_bounded(path, shown) else {
        return;
    };
    rep.files_scanned += 1;
    let text = String::from_utf8_lossy(&bytes);
    scan_lines(rep, &text, shown);
}

pub(crate) fn scan_lines(rep: &mut Report, text: &str, shown: &Path) {
    for (i, line) in text.lines().enumerate() {
        let file = format!("{}:{}", shown.display(), i + 1);
        if let Some(p) = find_machine_path(line) {
            rep.problems.push(Problem::new(
                &file,
                "",
                format!("absolute machine path {p:?}"),
            ));
        } else if let Some(v) = line.strip_prefix("library")
            && v.trim_start().starts_with('=')
            && let Some((_, val)) = v.split_once("= ")
            && val.starts_with('/')
        {
            // KAT log header `library     = <path>`.
            rep.problems.push(Problem::new(
                &file,
                "library",
                format!("absolute path {val:?}"),
            ));
        }
    }
}

pub(crate) fn scan_file(rep: &mut Report, path: &Path, shown: &Path) {
    let bytes = match pqperf_model::limits::read_bounded(path, shown) {
        Ok(b) => b,
        Err(e) => {
            rep.problems.push(Problem::new(shown, "", e.message()));
            return;
        }
    };
    rep.files_scanned += 1;
    let text = String::from_utf8_lossy(&bytes);
    let is_json = path.extension().is_some_and(|e| e == "json");
    if is_json && let Ok(v) = serde_json::from_str::<Value>(&text) {
        let before = rep.problems.len();
        scan_json(rep, &v, "", shown);
        if rep.problems.len() == before && pyjson::value_to_string(&v) != text {
            rep.problems.push(Problem::new(
                shown,
                "",
                "not in the reference JSON layout (json.dumps(indent=1) + newline)",
            ));
        }
        return;
    }
    // Text files, and JSON that does not parse (its syntax error is reported by the loader).
    scan_lines(rep, &text, shown);
}

pub(crate) fn scan_json(rep: &mut Report, v: &Value, field: &str, shown: &Path) {
    match v {
        Value::String(s) => {
            if let Some(p) = find_machine_path(s) {
                rep.problems.push(Problem::new(
                    shown,
                    field,
                    format!("absolute machine path {p:?}"),
                ));
            } else if s.starts_with('/') && is_path_field(field) {
                rep.problems
                    .push(Problem::new(shown, field, format!("absolute path {s:?}")));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                scan_json(rep, item, &format!("{field}[{i}]"), shown);
            }
        }
        Value::Object(m) => {
            for (k, item) in m {
                if let Some(p) = find_machine_path(k) {
                    rep.problems.push(Problem::new(
                        shown,
                        field,
                        format!("absolute machine path {p:?} in a key"),
                    ));
                }
                let f = if field.is_empty() {
                    k.clone()
                } else {
                    format!("{field}.{k}")
                };
                scan_json(rep, item, &f, shown);
            }
        }
        _ => {}
    }
}

/// Fields whose values are paths and must be relative: `library`, `kat_log`, `command[…]`.
pub(crate) fn is_path_field(field: &str) -> bool {
    let last = field.rsplit('.').next().unwrap_or(field);
    let last = last.split('[').next().unwrap_or(last);
    matches!(last, "library" | "kat_log" | "command")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_fields() {
        assert!(is_path_field("library"));
        assert!(is_path_field("processes[0].command[3]"));
        assert!(is_path_field("instances.sign-02/BiT-128.kat_log"));
        assert!(!is_path_field("build_flags"));
    }
}
