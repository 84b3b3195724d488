//! The summary, method and survey pages generated from the golden dataset (3 candidates)
//! against the published pages (all 119 candidates): every row of a golden candidate and every
//! dataset-independent line must equal the published one.

use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, method_page, summary_page, survey_page};

fn golden() -> Option<(std::path::PathBuf, Dataset)> {
    let g = pqperf_model::golden::golden_dir()?;
    let ds = Dataset::load(&g.join("harness")).expect("golden dataset loads");
    Some((g, ds))
}

#[test]
fn site_summary_rows_equal_published_rows() {
    let Some((g, ds)) = golden() else { return };
    for sys in ["x86_1", "arm_1"] {
        let published =
            std::fs::read_to_string(g.join(format!("site/content/performance/{sys}/index.md")))
                .unwrap();
        let ours = summary_page(&ds, sys, Form::Site).unwrap();
        let rows: Vec<&str> = ours.lines().filter(|l| l.starts_with("| [`")).collect();
        assert_eq!(
            rows.len(),
            10,
            "{sys}: 3+4+3 reference rows expected:\n{ours}"
        );
        for row in rows {
            assert!(
                published.lines().any(|l| l == row),
                "{sys}: row not in the published summary:\n{row}"
            );
        }
        // Everything before the first table except the hash-rows bullet (no ICCS baseline
        // records in the golden dataset) equals the published text.
        let head = |t: &str| -> Vec<String> {
            t.lines()
                .take_while(|l| !l.starts_with("| id "))
                .filter(|l| !l.starts_with("- **Hash rows**"))
                .map(String::from)
                .collect()
        };
        assert_eq!(head(&ours), head(&published), "{sys}: summary head differs");
        assert!(
            ours.ends_with(" |\n\n"),
            "{sys}: summary must end with a blank line"
        );
    }
}

#[test]
fn harness_summary_has_harness_links() {
    let Some((_, ds)) = golden() else { return };
    let s = summary_page(&ds, "x86_1", Form::Harness).unwrap();
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines[0], "# Performance — x86-64, system x86_1");
    assert!(s.contains("See the [symmetric survey](symmetric-survey.md)."));
    assert!(s.contains("See [method and limitations](method_x86_1.md)."));
    assert!(s.contains("see the [size audit](EXTERNAL_SIZE_AUDIT.md)"));
    assert!(!s.contains("Ordered measurements"));
    assert!(lines.contains(
        &"| [sign-08](../sign-08/perf_x86_1.md) | DARTS [PDF](https://github.com/ngcc-dev/ngcc-harness/blob/main/sign-08/sign-08-spec.pdf) | `DARTS128` | 953.3 k (46%) | 45.51 M (88%) | 353.5 k (64%) | 1120 | 1449 | – |"
    ), "{s}");
    // Optimized builds never appear on the summary.
    assert!(!s.contains("avx2"));
}

/// Lines of the published arm_1 method page that do not depend on the number of candidates.
#[test]
fn method_page_matches_published_fixed_lines() {
    let Some((g, ds)) = golden() else { return };
    let published =
        std::fs::read_to_string(g.join("site/content/performance/arm_1/method.md")).unwrap();
    let ours = method_page(&ds, "arm_1", Form::Site).unwrap();
    let pub_lines: Vec<&str> = published.lines().collect();
    let our_lines: Vec<&str> = ours.lines().collect();
    assert_eq!(pub_lines.len(), our_lines.len(), "same structure");
    let mut differing = Vec::new();
    for (i, (a, b)) in pub_lines.iter().zip(&our_lines).enumerate() {
        if a != b {
            differing.push(i + 1);
        }
    }
    // Line 8: record count; line 19: ICCS baseline paragraph (no iccs records here);
    // line 28: the slowest instances of the full campaign are not in the golden subset.
    assert_eq!(differing, vec![8, 19, 28], "{ours}");
    assert!(ours.ends_with("no such overhead.\n\n"));
}

#[test]
fn survey_page_lists_the_survey_rows() {
    let Some((_, ds)) = golden() else { return };
    let s = survey_page(&ds, "x86_1", Form::Harness).unwrap();
    assert!(s.starts_with("# Symmetric cryptography survey\n\n"));
    assert!(s.contains("\nTotals: 4 ICCS-only.\n"));
    assert!(
        s.contains("\n| id | algorithm | verdict | notes | largest hash share on x86_1 (op) |\n")
    );
    // kem-04 is surveyed but not measured in the golden dataset: no link, no share.
    assert!(s.contains("\n| kem-04 | – | ICCS-only | "));
    assert!(s.contains("\n| [sign-02](../sign-02/perf_x86_1.md) | BIT: Bimodal Triangular distribution based lattice signatures | ICCS-only | own fips202.c compiled but unreachable (BIT_USE_SHAKE=0) | "));
    let site = survey_page(&ds, "x86_1", Form::Site).unwrap();
    assert!(
        site.starts_with("<!-- synchronized from harness: performance/symmetric-survey.md -->\n")
    );
    assert!(site.contains("\n| [sign-02](x86_1/sign-02.md) | "));
    assert!(site.contains("see its [summary](x86_1/index.md)."));
}
