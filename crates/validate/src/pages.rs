//! Pages: the harness-form pages regenerated from the evidence must equal the page files
//! present under the root; the first differing line is reported.

use std::path::Path;

use pqperf_model::dataset::Dataset;

use crate::problem::{Problem, Report};

/// Compare the pages regenerated from the evidence with those on disk (where present).
pub(crate) fn check_pages(rep: &mut Report, ds: &Dataset, system: &str, root: &Path) {
    let pages = match pqperf_report::render_pages(ds, system, pqperf_report::Form::Harness) {
        Ok(p) => p,
        Err(e) => {
            // Only a problem when there are pages on disk to compare with.
            let any_on_disk = ds
                .systems
                .iter()
                .find(|s| s.id == system)
                .map(|s| {
                    s.candidates()
                        .iter()
                        .any(|id| root.join(format!("{id}/perf_{system}.md")).is_file())
                })
                .unwrap_or(false);
            if any_on_disk {
                rep.problems.push(Problem::new(
                    format!("performance/data/{system}"),
                    "",
                    format!("pages cannot be regenerated: {e}"),
                ));
            }
            return;
        }
    };
    for (_, rel, text) in pages {
        let Ok(on_disk) = pqperf_model::limits::read_bounded(&root.join(&rel), Path::new(&rel))
        else {
            continue;
        };
        rep.pages += 1;
        if on_disk == text.as_bytes() {
            continue;
        }
        let old = String::from_utf8_lossy(&on_disk);
        let (n, a, b) = old
            .split('\n')
            .zip(text.split('\n'))
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .map(|(i, (a, b))| (i + 1, a.to_string(), b.to_string()))
            .unwrap_or_else(|| {
                let n = old.split('\n').count().min(text.split('\n').count());
                (n, "<end of file>".into(), "<end of file>".into())
            });
        rep.problems.push(Problem::new(
            format!("{rel}:{n}"),
            "",
            format!(
                "page differs from the one regenerated from the evidence: on disk {:?}, regenerated {:?}",
                clip(&a),
                clip(&b)
            ),
        ));
    }
}

pub(crate) fn clip(s: &str) -> String {
    if s.chars().count() > 80 {
        let mut c: String = s.chars().take(80).collect();
        c.push('…');
        c
    } else {
        s.to_string()
    }
}
