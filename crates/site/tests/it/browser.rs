//! The site in a real browser: render from the golden dataset (two systems) and from a small
//! demo-like dataset (PQClean-style ids made from golden records), check every internal link
//! in Rust, then load pages in headless Chromium: no console message, chart SVGs in the DOM,
//! and, for every page type, no horizontal overflow measured from the DOM at 1400 px and at
//! 420 px (tables become cards on narrow screens, charts scale); screenshots of a summary and
//! a candidate page go to `<target>/site-artifacts/`.

use crate::common;

use std::path::Path;

use common::*;

fn rel(to: &str, from: &str) -> Relabel {
    let (fc, fl) = from.split_once('/').unwrap();
    let (tc, tl) = to.split_once('/').unwrap();
    Relabel {
        from: (fc.into(), fl.into()),
        to: (tc.into(), tl.into()),
        ops: Vec::new(),
    }
}

/// The number cells of a page's tables outside the name columns, and those of them that do
/// not link to an evidence file.
fn value_cells(html: &str) -> (usize, Vec<String>) {
    const NAMES: [&str; 6] = [
        "id",
        "algorithm",
        "instance performance report",
        "notes",
        "ICCS helper",
        "output bits",
    ];
    let mut n = 0;
    let mut unlinked = Vec::new();
    for part in html.split("<td class=\"num\" data-label=\"").skip(1) {
        let (label, rest) = part.split_once("\">").unwrap();
        if NAMES.contains(&label) {
            continue;
        }
        n += 1;
        if !rest.starts_with("<a class=\"ev\"") {
            unlinked.push(format!("{label}: {}", &rest[..rest.len().min(60)]));
        }
    }
    (n, unlinked)
}

fn assert_links(out: &Path) -> usize {
    let (broken, n) = pqperf_site::check::check_links(out).unwrap();
    assert!(broken.is_empty(), "broken internal links: {broken:#?}");
    assert!(n > 100, "only {n} links checked");
    n
}

fn assert_page(out: &Path, page: &str, svgs: usize) -> String {
    let p = out.join(page);
    assert!(p.is_file(), "missing page {page}");
    let l = load_page(&p);
    assert!(
        l.console.is_empty(),
        "console messages on {page}: {:#?}",
        l.console
    );
    assert!(
        l.dom.contains("</main>"),
        "{page} did not load: {}",
        &l.dom[..l.dom.len().min(300)]
    );
    let n = l.dom.matches("<svg").count();
    assert!(
        n >= svgs,
        "{page}: {n} chart SVGs in the DOM, expected at least {svgs}"
    );
    l.dom
}

#[test]
fn golden_site_in_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let built =
        pqperf_site::build_from_dataset(&golden_harness(), &[], &out).expect("site from golden");
    assert!(built.pages.iter().any(|p| p == "x86_1/sign-02.html"));
    assert!(built.pages.iter().any(|p| p == "arm_1/sign-02.html"));
    assert!(
        built.evidence_files >= 69 + 60 + 23,
        "{} evidence files",
        built.evidence_files
    );
    assert_links(&out);
    // The system switcher: the same candidate on the other system is one click away.
    let x = std::fs::read_to_string(out.join("x86_1/sign-02.html")).unwrap();
    assert!(x.contains("href=\"../arm_1/sign-02.html\""));
    // Numbers link to evidence.
    assert!(x.contains("href=\"../evidence/x86_1/records/sign-02/BiT-128__keygen.json\""));
    assert!(x.contains("href=\"../evidence/x86_1/kat/sign-02/BiT-128.log\""));
    assert!(
        out.join("evidence/x86_1/records/sign-02/BiT-128__keygen.json")
            .is_file()
    );
    // Joint view with both clocks.
    let j = std::fs::read_to_string(out.join("joint/sign-02.html")).unwrap();
    assert!(j.contains("arm_1 ÷ x86_1"));
    assert!(j.contains("href=\"../evidence/arm_1/campaign.json\""));
    assert!(j.contains("href=\"../evidence/arm_1/records/sign-02/BiT-128__sign.json\""));
    assert!(
        j.contains("2.10 GHz") && j.contains("2.71 GHz"),
        "clocks missing in joint view"
    );
    // Every summary number links to its evidence: each value cell of the summary tables.
    let sum = std::fs::read_to_string(out.join("x86_1/index.html")).unwrap();
    let (values, unlinked) = value_cells(&sum);
    assert!(values > 20, "{values} value cells on the summary");
    assert!(
        unlinked.is_empty(),
        "summary values without evidence: {unlinked:#?}"
    );
    assert!(sum.contains("href=\"../evidence/side/external_sizes.csv\""));
    // The summary as data files, linked from the page.
    assert!(sum.contains("href=\"summary.csv\"") && sum.contains("href=\"summary.json\""));
    let csv = std::fs::read_to_string(out.join("x86_1/summary.csv")).unwrap();
    assert!(csv.starts_with("system;id;algorithm;instance;"), "{csv}");
    assert!(csv.contains("x86_1;sign-02;"), "{csv}");
    // The security report of a candidate links to its published place.
    assert!(
        x.contains("href=\"https://github.com/ngcc-dev/ngcc-harness/blob/main/sign-02/README.md\"")
    );
    // The index names each system's counter and host state.
    let idx = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(idx.contains("data-label=\"host\""), "no host column");
    assert!(idx.contains("Independent cycle-count measurements"));
    // The joint view compares times too, and charts them.
    assert!(
        j.contains("arm_1 ÷ x86_1 (time)"),
        "no time ratio in the joint view"
    );
    assert!(
        j.contains("mean time per call on each system"),
        "no joint chart"
    );
    // A 192-bit page exists and says why it is empty.
    let r192 = std::fs::read_to_string(out.join("x86_1/ranking-192.html")).unwrap();
    assert!(
        r192.contains("class=\"empty-reason\""),
        "empty 192-bit ranking gives no reason"
    );
    // Rankings: all three golden candidates at each target.
    for t in [128, 256, 512] {
        let r = std::fs::read_to_string(out.join(format!("x86_1/ranking-{t}.html"))).unwrap();
        for c in ["sign-02", "sign-06", "sign-08"] {
            assert!(
                r.contains(&format!("<code>{c}</code>")),
                "{c} missing at {t}"
            );
        }
    }
    assert_page(&out, "index.html", 0);
    assert_page(&out, "x86_1/index.html", 0);
    assert_page(&out, "x86_1/sign-02.html", 1);
    assert_page(&out, "arm_1/sign-08.html", 1);
    assert_page(&out, "x86_1/ranking-128.html", 1);
    assert_page(&out, "joint/index.html", 0);
    // The built site stays beside the screenshots for a look in a browser.
    let kept = artifacts_dir().join("golden-site");
    let _ = std::fs::remove_dir_all(&kept);
    copy_tree(&out, &kept);
    for page in [
        "index.html",
        "x86_1/index.html",
        "x86_1/sign-02.html",
        "arm_1/sign-08.html",
        "x86_1/method.html",
        "x86_1/ranking-128.html",
        "x86_1/ranking-192.html",
        "joint/index.html",
        "joint/sign-02.html",
    ] {
        assert_fits(&out, page);
    }
    if out.join("symmetric-survey.html").is_file() {
        assert_fits(&out, "symmetric-survey.html");
    }
    let art = artifacts_dir();
    screenshot(
        &out.join("x86_1/index.html"),
        &art.join("golden-summary-x86_1-420.png"),
        420,
        1600,
        false,
    );
    screenshot(
        &out.join("x86_1/index.html"),
        &art.join("golden-summary-x86_1.png"),
        1280,
        1000,
        false,
    );
    screenshot(
        &out.join("x86_1/sign-02.html"),
        &art.join("golden-candidate-x86_1-sign-02.png"),
        1280,
        2400,
        false,
    );
    screenshot(
        &out.join("x86_1/ranking-256.html"),
        &art.join("golden-ranking-256.png"),
        1280,
        1400,
        false,
    );
    screenshot(
        &out.join("joint/sign-02.html"),
        &art.join("golden-joint-sign-02.png"),
        1280,
        1000,
        false,
    );
    screenshot(
        &out.join("arm_1/sign-08.html"),
        &art.join("golden-candidate-arm_1-sign-08-phone-dark.png"),
        390,
        1600,
        true,
    );
}

#[test]
fn demo_like_site_in_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // PQClean-style ids on one system, with per-call quantiles (pqperf additions).
    let map = vec![
        rel("ml-dsa-44/clean", "sign-02/BiT-128"),
        rel("ml-dsa-87/clean", "sign-08/DARTS256"),
        rel("falcon-512/clean", "sign-06/COMPASS-SIG-128"),
        rel("falcon-1024/clean", "sign-06/COMPASS-SIG-512"),
    ];
    let downloads: Vec<(String, String)> = ["ml-dsa-44", "ml-dsa-87", "falcon-512", "falcon-1024"]
        .iter()
        .map(|s| (s.to_string(), s.to_uppercase()))
        .collect();
    synth_dataset(&data, &["x86_1"], &map, &downloads, true);
    // Targets as `campaign publish` writes them for PQClean schemes (from the claimed NIST
    // level in the catalog), plus an empty curated row.
    std::fs::write(
        data.join("performance/security_targets.csv"),
        "ID;Instance;TargetBits\nml-dsa-44;clean;128\nsign-99;x;\nml-dsa-87;clean;256\nfalcon-512;clean;128\nfalcon-1024;clean;256\n",
    )
    .unwrap();
    let out = tmp.path().join("site");
    let built =
        pqperf_site::build_from_dataset(&data, &[], &out).expect("site from demo-like dataset");
    assert!(
        built.pages.iter().any(|p| p == "x86_1/ml-dsa-44.html"),
        "{:?}",
        built.pages
    );
    assert!(!out.join("joint").exists(), "one system: no joint view");
    assert_links(&out);
    let dom = assert_page(&out, "x86_1/ml-dsa-44.html", 2);
    assert!(dom.contains("p50"), "per-call distribution chart missing");
    let r = assert_page(&out, "x86_1/ranking-128.html", 1);
    assert!(r.contains("ml-dsa-44") && r.contains("falcon-512"));
    let r256 = std::fs::read_to_string(out.join("x86_1/ranking-256.html")).unwrap();
    assert!(r256.contains("ml-dsa-87") && r256.contains("falcon-1024"));
    assert_page(&out, "x86_1/index.html", 0);
    let sum = std::fs::read_to_string(out.join("x86_1/index.html")).unwrap();
    let (values, unlinked) = value_cells(&sum);
    assert!(values >= 4 * 3, "{values} value cells on the demo summary");
    assert!(
        unlinked.is_empty(),
        "demo summary values without evidence: {unlinked:#?}"
    );
    let kept = artifacts_dir().join("demo-site");
    let _ = std::fs::remove_dir_all(&kept);
    copy_tree(&out, &kept);
    for page in [
        "index.html",
        "x86_1/index.html",
        "x86_1/ml-dsa-44.html",
        "x86_1/ranking-128.html",
        "x86_1/ranking-192.html",
    ] {
        assert_fits(&out, page);
    }
    let art = artifacts_dir();
    screenshot(
        &out.join("x86_1/ranking-128.html"),
        &art.join("demo-ranking-128-420.png"),
        420,
        1400,
        false,
    );
    screenshot(
        &out.join("x86_1/index.html"),
        &art.join("demo-summary.png"),
        1280,
        900,
        false,
    );
    screenshot(
        &out.join("x86_1/ml-dsa-44.html"),
        &art.join("demo-candidate-ml-dsa-44.png"),
        1280,
        2400,
        false,
    );
}
