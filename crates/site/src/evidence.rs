//! Where the evidence a page cell names lives in the site (the report stage's cells carry the
//! file their value came from: timing records, hash profiles, build.json, campaign.json, KAT
//! logs, ct evidence and the curated size catalogs), and the kind of a report page from its
//! path.

use crate::data::Category;
use pqperf_report::page::Evidence;

/// Kind of a report page, from its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageKind {
    /// `<sys>/index.md`
    Summary,
    /// `<sys>/method.md`
    Method,
    /// `<sys>/<cand>.md`
    Candidate(String),
    /// `symmetric-survey.md`
    Survey,
    /// Any other page (index, rankings, joint view).
    Other,
}

/// Classify a site-form Markdown path (`x86_1/sign-02.md`).
pub fn page_kind(path: &str, systems: &[String]) -> (PageKind, Option<String>) {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        [sys, file] if systems.iter().any(|s| s == sys) => {
            let stem = file.trim_end_matches(".md");
            let kind = match stem {
                "index" => PageKind::Summary,
                "method" => PageKind::Method,
                s if s.starts_with("ranking-") => PageKind::Other,
                s => PageKind::Candidate(s.to_string()),
            };
            (kind, Some(sys.to_string()))
        }
        ["symmetric-survey.md"] => (PageKind::Survey, None),
        _ => (PageKind::Other, None),
    }
}

/// Where the site keeps the evidence file a page cell names (site-root-relative): a system's
/// run files under `evidence/<system>/`, the side tables under `evidence/side/`. Whether the
/// file was copied is the caller's check (the set of known site paths).
pub fn href(ev: &Evidence) -> String {
    match ev {
        Evidence::Run { system, path } => format!("evidence/{system}/{path}"),
        Evidence::Side(name) => format!("evidence/side/{name}"),
    }
}

/// The category of a candidate from its id or its records' operations.
pub fn infer_category(id: &str, ops: &[&str]) -> Category {
    if let Some(c) = Category::parse(id) {
        return c;
    }
    Category::from_operations(ops.iter().copied()).unwrap_or(Category::Kem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_hrefs() {
        let systems = vec!["x86_1".to_string()];
        assert_eq!(
            page_kind("x86_1/sign-02.md", &systems).0,
            PageKind::Candidate("sign-02".into())
        );
        assert_eq!(page_kind("x86_1/index.md", &systems).0, PageKind::Summary);
        assert_eq!(
            page_kind("symmetric-survey.md", &systems).0,
            PageKind::Survey
        );
        let ev = Evidence::Run {
            system: "x86_1".into(),
            path: "records/a/b__sign.json".into(),
        };
        assert_eq!(href(&ev), "evidence/x86_1/records/a/b__sign.json");
        assert_eq!(
            href(&Evidence::Side("external_sizes.csv".into())),
            "evidence/side/external_sizes.csv"
        );
    }
}
