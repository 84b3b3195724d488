//! Which evidence file a table cell's number came from: timing records, hash profiles,
//! build.json, campaign.json, KAT logs and the curated size catalogs, for the tables of the
//! candidate pages, the per-system summaries and the symmetric survey.

use crate::data::{Category, SiteData, SystemFacts};
use crate::html::{CellInfo, TableLinker};

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
    /// Any other page (ranking, joint view, index).
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

/// Bytes of a message-size text: `32 B` → 32, `1 KiB` → 1024, `1024 B` → 1024.
pub fn size_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    if let Some(k) = t.strip_suffix(" KiB") {
        return k.trim().parse::<u64>().ok().map(|k| k * 1024);
    }
    t.strip_suffix(" B").and_then(|b| b.trim().parse().ok())
}

/// Operation key of a summary column header (`sign cycles (sym %)` → `sign`,
/// `32 B cycles (× pseudoXOF)` → `hash_32`).
pub fn header_opkey(h: &str) -> Option<String> {
    let head = h.split(" cycles").next()?;
    if !h.contains(" cycles") {
        return None;
    }
    if let Some(b) = size_bytes(head) {
        return Some(format!("hash_{b}"));
    }
    Some(head.trim().to_string())
}

/// Linker for one page.
pub struct EvidenceLinker<'a> {
    /// What the site renders.
    pub site: &'a SiteData,
    /// The page's system (none for cross-system pages).
    pub sys: Option<&'a SystemFacts>,
    /// Which page it links.
    pub kind: PageKind,
}

impl EvidenceLinker<'_> {
    fn ev(&self, sys: &SystemFacts, rel: &str) -> String {
        format!("evidence/{}/{}", sys.id, rel)
    }

    fn record(&self, sys: &SystemFacts, cand: &str, label: &str, opkey: &str) -> Option<String> {
        sys.record(cand, label, opkey)
            .map(|r| self.ev(sys, &r.path))
    }

    fn sized_record(&self, sys: &SystemFacts, cand: &str, label: &str) -> Option<String> {
        sys.sized_record(cand, label).map(|r| self.ev(sys, &r.path))
    }

    fn side(&self, name: &str, cand: &str, label: &str) -> Option<String> {
        let key = (cand.to_string(), label.to_string());
        let has = match name {
            "external_sizes.csv" => self.site.side.ext_sizes.contains_key(&key),
            "kex_bandwidth.csv" => self.site.side.kex_bandwidth.contains_key(&key),
            _ => true,
        };
        (has && self.site.side.files.contains_key(name)).then(|| format!("evidence/side/{name}"))
    }

    fn size_cell(
        &self,
        sys: &SystemFacts,
        header: &str,
        cand: &str,
        label: &str,
    ) -> Option<String> {
        let h = header.to_ascii_lowercase();
        let catalog = if h.starts_with("public key") && !h.contains('/')
            || h.starts_with("ciphertext")
            || h.starts_with("signature")
        {
            self.side("external_sizes.csv", cand, label)
        } else if h.starts_with("bandwidth")
            || h.starts_with("protocol-message")
            || h.starts_with("public key a")
        {
            self.side("kex_bandwidth.csv", cand, label)
        } else {
            None
        };
        catalog.or_else(|| self.sized_record(sys, cand, label))
    }

    fn candidate_links(
        &self,
        sys: &SystemFacts,
        cand: &str,
        header: &[String],
        row: &[CellInfo],
    ) -> Vec<Option<String>> {
        let h: Vec<String> = header.iter().map(|s| s.to_ascii_lowercase()).collect();
        let label = row.first().and_then(|c| c.code.clone()).unwrap_or_default();
        let n = row.len();
        let mut out = vec![None; n];
        let col = |name: &str| h.iter().position(|x| x == name);
        if h.len() >= 2 && h[0] == "item" && h[1] == "value" {
            if n > 1 && row[1].text.chars().any(|c| c.is_ascii_digit()) {
                out[1] = Some(self.ev(sys, "campaign.json"));
            }
            return out;
        }
        if h.first().map(String::as_str) != Some("instance") {
            return out;
        }
        if h.get(1).map(String::as_str) == Some("operation") {
            let opkey = row.get(1).map(|c| c.text.clone()).unwrap_or_default();
            let rec = self.record(sys, cand, &label, &opkey);
            if h.iter().any(|x| x.starts_with("pseudohash")) {
                let p = sys
                    .profiles
                    .get(&(cand.to_string(), label.clone(), opkey.clone()))
                    .map(|p| self.ev(sys, &p.path));
                for o in out.iter_mut().skip(2) {
                    *o = p.clone();
                }
            } else {
                for (i, o) in out.iter_mut().enumerate().skip(2) {
                    *o = if h.get(i).is_some_and(|x| x.starts_with("static")) {
                        Some(self.ev(sys, "build.json"))
                    } else {
                        rec.clone()
                    };
                }
            }
        } else if h.get(1).map(String::as_str) == Some("message") {
            let opkey = row
                .get(1)
                .and_then(|c| size_bytes(&c.text))
                .map(|b| format!("hash_{b}"));
            let rec = opkey.and_then(|k| self.record(sys, cand, &label, &k));
            for o in out.iter_mut().skip(1) {
                *o = rec.clone();
            }
        } else if let Some(k) = col("kat") {
            if let Some(f) = col("build flags")
                && f < n
            {
                out[f] = Some(self.ev(sys, "build.json"));
            }
            let log = sys
                .build
                .get(&(cand.to_string(), label.clone()))
                .and_then(|b| b.kat_log.clone())
                .unwrap_or_else(|| format!("kat/{cand}/{label}.log"));
            if k < n {
                out[k] = Some(self.ev(sys, &log));
            }
        } else if col("file").is_some() {
            let f = col("file").unwrap_or(2);
            if let Some(path) = row.get(f).and_then(|c| c.code.clone()) {
                out[f] = Some(self.ev(sys, &path));
            }
            if let Some(item) = row.get(1)
                && item.text.starts_with("KAT log")
            {
                out[1] = out[f].clone();
            }
        } else {
            for i in 1..n {
                out[i] = self.size_cell(sys, &header[i], cand, &label);
            }
        }
        out
    }

    fn summary_links(
        &self,
        sys: &SystemFacts,
        header: &[String],
        row: &[CellInfo],
    ) -> Vec<Option<String>> {
        let n = row.len();
        let mut out = vec![None; n];
        if header.first().map(String::as_str) == Some("ICCS helper") {
            let helper = row.first().and_then(|c| c.code.clone()).unwrap_or_default();
            let bits = row.get(1).map(|c| c.text.clone()).unwrap_or_default();
            let label = format!("{helper}-{bits}");
            for i in 2..n {
                if let Some(b) = size_bytes(&header[i]) {
                    out[i] = self.record(sys, "iccs", &label, &format!("hash_{b}"));
                }
            }
            return out;
        }
        if header.len() < 3 || header[0] != "id" {
            return out;
        }
        let cand = row.first().and_then(|c| c.code.clone()).unwrap_or_default();
        let label = row.get(2).and_then(|c| c.code.clone()).unwrap_or_default();
        for i in 3..n.min(header.len()) {
            if let Some(op) = header_opkey(&header[i]) {
                out[i] = self.record(sys, &cand, &label, &op);
            } else if header[i] != "notes" {
                out[i] = self.size_cell(sys, &header[i], &cand, &label);
            }
        }
        out
    }

    fn survey_links(&self, header: &[String], row: &[CellInfo]) -> Vec<Option<String>> {
        let n = row.len();
        let mut out = vec![None; n];
        let Some(sys) = self.site.systems.first() else {
            return out;
        };
        let Some(last) = header.len().checked_sub(1) else {
            return out;
        };
        if !header[last].starts_with("largest hash share") || last >= n {
            return out;
        }
        let cand = row
            .first()
            .and_then(|c| c.code.clone())
            .or_else(|| row.first().map(|c| c.text.clone()))
            .unwrap_or_default();
        let text = &row[last].text;
        if let (Some(a), Some(b)) = (text.find('('), text.rfind(')')) {
            let inner = &text[a + 1..b];
            if let Some((label, opkey)) = inner.rsplit_once(' ') {
                out[last] = sys
                    .profiles
                    .get(&(cand.clone(), label.to_string(), opkey.to_string()))
                    .map(|p| self.ev(sys, &p.path));
            }
        }
        out
    }
}

impl TableLinker for EvidenceLinker<'_> {
    fn link(&self, header: &[String], row: &[CellInfo]) -> Vec<Option<String>> {
        match (&self.kind, self.sys) {
            (PageKind::Candidate(c), Some(sys)) => self.candidate_links(sys, c, header, row),
            (PageKind::Summary, Some(sys)) => self.summary_links(sys, header, row),
            (PageKind::Survey, _) => self.survey_links(header, row),
            _ => Vec::new(),
        }
    }
}

/// The category of a candidate from its id or its records' operations.
pub fn infer_category(id: &str, ops: &[&str]) -> Category {
    if let Some(c) = Category::parse(id) {
        return c;
    }
    if ops.iter().any(|o| *o == "sign" || *o == "verify") {
        Category::Sign
    } else if ops.contains(&"exchange") {
        Category::Kex
    } else if ops.iter().any(|o| o.starts_with("hash")) {
        Category::Hash
    } else {
        Category::Kem
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_sizes() {
        assert_eq!(header_opkey("sign cycles (sym %)").as_deref(), Some("sign"));
        assert_eq!(
            header_opkey("32 B cycles (× pseudoXOF)").as_deref(),
            Some("hash_32")
        );
        assert_eq!(header_opkey("64 KiB cycles").as_deref(), Some("hash_65536"));
        assert_eq!(header_opkey("public key (B)"), None);
        assert_eq!(size_bytes("1024 B"), Some(1024));
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
    }
}
