//! Link check of a generated site: every `href`/`src` of every HTML file must resolve to a
//! file of the site (external URLs are not followed; `#fragment`s must name an `id` of the
//! target page). Used by the tests and available to callers.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::SiteError;
use crate::html::{dir_of, is_external, normalize};

/// One broken link: (page, href).
pub type Broken = (String, String);

fn attr_values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let pat = format!(" {attr}=\"");
    let mut v = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&pat) {
        let after = &rest[i + pat.len()..];
        match after.find('"') {
            Some(j) => {
                v.push(&after[..j]);
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    v
}

/// Decode the entities an attribute value may carry (`&quot;`, `&#x2f;`, `&#39;`, …).
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let Some(j) = after.find(';') else {
            out.push_str(after);
            return out;
        };
        let ent = &after[1..j];
        let decoded = match ent {
            "quot" => Some('"'),
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "apos" => Some('\''),
            e if e.starts_with("#x") || e.starts_with("#X") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &after[j + 1..];
            }
            None => {
                out.push('&');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// All files of the site, site-root-relative.
pub fn site_files(out: &Path) -> Result<Vec<String>, SiteError> {
    let mut files = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .map_err(|e| SiteError::io(&d, e))?
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(r) = p.strip_prefix(out) {
                files.push(r.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Check every internal link of the site in `out`; returns the broken ones and the number of
/// links checked.
pub fn check_links(out: &Path) -> Result<(Vec<Broken>, usize), SiteError> {
    let files = site_files(out)?;
    let set: HashSet<&str> = files.iter().map(String::as_str).collect();
    let mut ids: HashMap<String, HashSet<String>> = HashMap::new();
    let mut pages: Vec<(String, String)> = Vec::new();
    for f in files.iter().filter(|f| f.ends_with(".html")) {
        let p = out.join(f);
        let text = std::fs::read_to_string(&p).map_err(|e| SiteError::io(&p, e))?;
        ids.insert(
            f.clone(),
            attr_values(&text, "id").into_iter().map(unescape).collect(),
        );
        pages.push((f.clone(), text));
    }
    let mut broken = Vec::new();
    let mut n = 0;
    for (page, text) in &pages {
        for raw in attr_values(text, "href")
            .into_iter()
            .chain(attr_values(text, "src"))
        {
            let href = unescape(raw);
            if is_external(&href) && !href.starts_with('#') {
                continue;
            }
            n += 1;
            let (path, frag) = match href.find('#') {
                Some(i) => (&href[..i], Some(&href[i + 1..])),
                None => (href.as_str(), None),
            };
            let target = if path.is_empty() {
                Some(page.clone())
            } else {
                let joined = if dir_of(page).is_empty() {
                    path.to_string()
                } else {
                    format!("{}/{}", dir_of(page), path)
                };
                normalize(&joined)
            };
            let ok = match &target {
                Some(t) if set.contains(t.as_str()) => match frag {
                    Some(f) if !f.is_empty() && t.ends_with(".html") => {
                        ids.get(t).is_some_and(|s| {
                            s.contains(f) || s.contains(&crate::evidence::unfragment(f))
                        })
                    }
                    _ => true,
                },
                _ => false,
            };
            if !ok {
                broken.push((page.clone(), href.clone()));
            }
        }
    }
    Ok((broken, n))
}
