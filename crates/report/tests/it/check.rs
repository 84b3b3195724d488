//! `--check` semantics on a temporary copy of the golden pages: the regenerated pages match;
//! one changed byte is reported with a unified diff; writing restores the page atomically.

use pqperf_model::dataset::Dataset;
use pqperf_report::check::{check_pages, write_pages};
use pqperf_report::{Form, PageKind, render_pages};

#[test]
fn check_passes_on_golden_and_reports_a_changed_byte() {
    let Some(g) = pqperf_model::golden::golden_dir() else {
        return;
    };
    let ds = Dataset::load(&g.join("harness")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (form, src) in [
        (Form::Harness, g.join("harness")),
        (Form::Site, g.join("site")),
    ] {
        for sys in ["x86_1", "arm_1"] {
            let pages: Vec<(String, String)> = render_pages(&ds, sys, form)
                .unwrap()
                .into_iter()
                .filter(|(k, _, _)| *k == PageKind::Candidate)
                .map(|(_, p, t)| (p, t))
                .collect();
            assert_eq!(pages.len(), 3);
            // Copy the committed pages into the temporary output root.
            let out = tmp.path().join(format!("{form:?}"));
            for (rel, _) in &pages {
                let dst = out.join(rel);
                std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
                std::fs::copy(src.join(rel), &dst).unwrap();
            }
            let report = check_pages(&out, &pages);
            assert!(report.ok(), "{form:?} {sys}: {:?}", report.differing);
            assert_eq!(report.pages, 3);

            // Change one byte of one page: reported, with a unified diff of that line.
            let (rel, _) = &pages[1];
            let path = out.join(rel);
            let text = std::fs::read_to_string(&path).unwrap();
            let changed = text.replacen("| PASS |", "| PASS!|", 1);
            assert_ne!(changed, text);
            std::fs::write(&path, &changed).unwrap();
            let report = check_pages(&out, &pages);
            assert_eq!(report.differing, vec![rel.clone()]);
            let diff = report.first_diff.unwrap();
            assert!(diff.contains(&format!("--- a/{rel} (committed)")), "{diff}");
            assert!(
                diff.contains("\n-| `") && diff.contains("| PASS!|\n"),
                "{diff}"
            );
            assert!(
                diff.contains("\n+| `") && diff.contains("| PASS |\n"),
                "{diff}"
            );

            // A missing page is a difference too.
            std::fs::remove_file(&path).unwrap();
            let report = check_pages(&out, &pages);
            assert!(
                report
                    .first_diff
                    .unwrap()
                    .starts_with(&format!("{rel}: missing on disk"))
            );

            // Writing restores it byte for byte.
            write_pages(&out, &pages).unwrap();
            assert!(check_pages(&out, &pages).ok());
            assert_eq!(
                std::fs::read(&path).unwrap(),
                std::fs::read(src.join(rel)).unwrap()
            );
        }
    }
}
