//! Where the evidence a page cell names lives in the site (the report stage's cells carry the
//! file their value came from: timing records, hash profiles, build.json, campaign.json, KAT
//! logs, ct evidence and the curated size catalogs), the viewer page of a JSON evidence file
//! and the fragment that opens it at a field, and the kind of a report page from its path.

use pqperf_model::order::Category;
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

/// Does an evidence file (site-root-relative) get a viewer page?
pub fn has_viewer(dest: &str) -> bool {
    dest.ends_with(".json")
}

/// The viewer page of an evidence file (site-root-relative).
pub fn page_path(dest: &str) -> String {
    format!("{dest}.html")
}

/// A JSON pointer as a URL fragment: characters other than ASCII letters, digits and
/// `/ - _ . ~` percent-encoded (the id the viewer writes is the pointer itself).
pub fn fragment(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for b in pointer.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decode a fragment [`fragment`] wrote (for the link check).
pub fn unfragment(frag: &str) -> String {
    let b = frag.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
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
