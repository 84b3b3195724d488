//! The ICCS provider as recorded by pqperf (issue 19): the `iccs_provider` object of
//! build.json entries, records (`pqperf.iccs_provider`) and campaign.json
//! (`pqperf.iccs_provider`, `pqperf.iccs_provider_cost`), and its one-line description.
//!
//! Object keys: `kind` (`pqperf` | `official`), `sources_sha256` (official: file → sha256),
//! `library_sha256` (pqperf: sha256 of `libpqperf_iccs.a`), `compiler`, `flags`,
//! `vectors_checked` (official: pqperf vectors reproduced before use).

use serde_json::Value;

/// `the official ICCS helpers (auxfunc.c sha256 9b99c0bb3807…, drng.c sha256 0df0ac78c828…;
/// gcc 12.2.0 -O2 …)` or `pqperf's own ICCS helpers (libpqperf_iccs.a sha256 …; rustc …)`.
/// When the library's own objects define helpers (`submission_sources`: file → `sha256`,
/// `defines`), those come first: `the submission's own … (compiled into the library and
/// linked first) before <provider>, which supplies only what they do not define`.
pub fn describe(v: &Value) -> String {
    let provider = describe_provider(v);
    let Some(own) = v["submission_sources"]
        .as_object()
        .filter(|m| !m.is_empty())
    else {
        return provider;
    };
    let short = |s: &str| s.chars().take(12).collect::<String>();
    let files: Vec<String> = own
        .iter()
        .map(|(f, o)| {
            let name = f.rsplit('/').next().unwrap_or(f);
            let defs: Vec<&str> = o["defines"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            format!(
                "{name} sha256 {}…: {}",
                short(o["sha256"].as_str().unwrap_or("")),
                defs.join(", ")
            )
        })
        .collect();
    format!(
        "the submission's own ICCS helpers ({}; compiled into the library and linked first), then {provider} for what they do not define",
        files.join("; ")
    )
}

/// The provider alone (the static library or official files that supply what a library's
/// own objects do not define), without the submission's own helpers.
pub fn describe_provider(v: &Value) -> String {
    let short = |s: &str| s.chars().take(12).collect::<String>();
    let compiler = v["compiler"].as_str().unwrap_or("an unrecorded compiler");
    let flags = v["flags"].as_str().unwrap_or("").trim();
    match v["kind"].as_str() {
        Some("official") => {
            let files: Vec<String> = v["sources_sha256"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| k.ends_with(".c"))
                        .map(|(k, h)| format!("{k} sha256 {}…", short(h.as_str().unwrap_or(""))))
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "the official ICCS helpers ({}; {compiler} `{flags}`)",
                files.join(", ")
            )
        }
        Some("pqperf") => format!(
            "pqperf's own ICCS helpers (libpqperf_iccs.a sha256 {}…; {compiler})",
            short(v["library_sha256"].as_str().unwrap_or(""))
        ),
        _ => "ICCS helpers of an unrecorded kind".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn descriptions() {
        let o = json!({"kind": "official", "sources_sha256": {"auxfunc.c": "9b99c0bb3807c966", "auxfunc.h": "44fc", "drng.c": "0df0ac78c828bd43"}, "compiler": "gcc 12.2.0", "flags": "-O2 -fwrapv "});
        assert_eq!(
            describe(&o),
            "the official ICCS helpers (auxfunc.c sha256 9b99c0bb3807…, drng.c sha256 0df0ac78c828…; gcc 12.2.0 `-O2 -fwrapv`)"
        );
        let p = json!({"kind": "pqperf", "library_sha256": "4b6da607a8e9ffff", "compiler": "rustc 1.95.0"});
        assert_eq!(
            describe(&p),
            "pqperf's own ICCS helpers (libpqperf_iccs.a sha256 4b6da607a8e9…; rustc 1.95.0)"
        );
        assert_eq!(describe(&json!({})), "ICCS helpers of an unrecorded kind");
        let own = json!({"kind": "pqperf", "library_sha256": "4b6da607a8e9ffff", "compiler": "rustc 1.95.0",
            "submission_sources": {"R/X/auxfunc.c": {"sha256": "aaaabbbbccccdddd", "defines": ["sm3hash", "pseudoXOF"]}}});
        assert_eq!(
            describe(&own),
            "the submission's own ICCS helpers (auxfunc.c sha256 aaaabbbbcccc…: sm3hash, pseudoXOF; compiled into the library and linked first), then pqperf's own ICCS helpers (libpqperf_iccs.a sha256 4b6da607a8e9…; rustc 1.95.0) for what they do not define"
        );
    }
}
