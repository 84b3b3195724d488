//! Escaping of hostile names and notes. (The 119 × 2 rendering benchmark against `python3`
//! loading the same JSON files is `cargo bench -p pqperf --bench site`.)

use crate::common;

use std::path::Path;

use common::*;

fn relabel(to_c: &str, to_l: &str, from_c: &str, from_l: &str) -> Relabel {
    Relabel {
        from: (from_c.into(), from_l.into()),
        to: (to_c.into(), to_l.into()),
        ops: Vec::new(),
    }
}

fn html_files(out: &Path) -> Vec<(String, String)> {
    pqperf_site::check::site_files(out)
        .unwrap()
        .into_iter()
        .filter(|f| f.ends_with(".html"))
        .map(|f| {
            let t = std::fs::read_to_string(out.join(&f)).unwrap();
            (f, t)
        })
        .collect()
}

#[test]
fn hostile_names_and_notes_are_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let evil =
        r#"Evil <script>alert("x")</script> "Quoted" & 'single' <img src=x onerror=alert(1)>"#;
    let map = vec![
        relabel("sign-02", "BiT-128", "sign-02", "BiT-128"),
        relabel("sign-08", "DARTS128", "sign-08", "DARTS128"),
    ];
    let downloads = vec![
        ("sign-02".to_string(), evil.to_string()),
        ("sign-08".to_string(), "DARTS".to_string()),
    ];
    synth_dataset(&data, &["x86_1", "arm_1"], &map, &downloads, false);
    std::fs::write(
        data.join("performance/summary_notes.csv"),
        "ID;Label;Note\nsign-02;.*;note <script>alert('n')</script> \"q\"\n",
    )
    .unwrap();
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&data, &[], &out).expect("site");
    let pages = html_files(&out);
    assert!(pages.len() > 8);
    let page = |f: &str| -> &str {
        &pages
            .iter()
            .find(|(p, _)| p == f)
            .unwrap_or_else(|| panic!("no {f}"))
            .1
    };
    for (f, t) in &pages {
        let lower = t.to_ascii_lowercase();
        assert!(!lower.contains("<script"), "{f} contains a script tag");
        assert!(!lower.contains("<img"), "{f} contains an img tag");
        assert!(
            !lower.contains(" onerror=alert(1)>"),
            "{f} carries an event handler"
        );
    }
    // The names are shown, escaped, on the candidate, ranking and joint pages.
    for f in [
        "x86_1/sign-02.html",
        "x86_1/ranking-128.html",
        "joint/sign-02.html",
    ] {
        assert!(
            page(f).contains("&lt;script&gt;"),
            "{f}: escaped name missing"
        );
    }
    let ranking = page("x86_1/ranking-128.html");
    assert!(
        ranking.contains("&quot;Quoted&quot; &amp; &#39;single&#39;"),
        "quotes not escaped: {}",
        &ranking[ranking.find("Evil").unwrap_or(0)..][..200]
    );
    let summary = page("x86_1/index.html");
    assert!(
        summary.contains("note &lt;script&gt;"),
        "note not shown escaped on the summary"
    );
    // Titles go through the template's autoescape.
    let cand = page("x86_1/sign-02.html");
    let title = &cand[cand.find("<title>").unwrap()..cand.find("</title>").unwrap()];
    assert!(
        !title.contains('<') || title == "<title>" || !title[7..].contains('<'),
        "{title}"
    );
}
