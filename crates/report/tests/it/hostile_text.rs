//! Hostile strings in dataset side files (issue 11): a `javascript:` submission URL in
//! downloads.csv and KAT causes with raw HTML, images and `data:` links must not reach the
//! pages as live Markdown.

use crate::common;

use std::path::Path;

use common::{edit_json, golden_copy};
use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, candidate_page};
use serde_json::json;

fn append(p: &Path, line: &str) {
    let mut t = std::fs::read_to_string(p).unwrap();
    if !t.ends_with('\n') {
        t.push('\n');
    }
    t.push_str(line);
    t.push('\n');
    std::fs::write(p, t).unwrap();
}

#[test]
fn unsafe_urls_and_markup_are_not_rendered_live() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let dl = root.join("downloads.csv");
    let text = std::fs::read_to_string(&dl).unwrap();
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("sign-08;") {
                let mut f: Vec<&str> = l.split(';').collect();
                f[2] = "javascript:alert(document.cookie)";
                f.join(";")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    std::fs::write(&dl, text).unwrap();
    let sys = root.join("performance/data/x86_1");
    edit_json(&sys.join("build.json"), |b| {
        b["instances"]["sign-08/DARTS256"]["kat"] = json!("MISMATCH");
    });
    append(
        &root.join("performance/kat_issues.csv"),
        "sign-08;^DARTS256$;measure;MISMATCH <script>alert(1)</script> ![x](https://evil.example/t.png) [see](data:text/html,hi) and [spec](https://example.org/s) with `code`.",
    );
    let ds = Dataset::load(&root).unwrap();
    for form in [Form::Harness, Form::Site] {
        let page = candidate_page(&ds, "x86_1", "sign-08", form).unwrap();
        assert!(!page.contains("](javascript:"), "{page}");
        assert!(!page.contains("<script>"), "{page}");
        assert!(!page.contains("![x]("), "{page}");
        assert!(!page.contains("[see](data:"), "{page}");
        // Safe Markdown in the cause is kept.
        assert!(
            page.contains("[spec](https://example.org/s) with `code`."),
            "{page}"
        );
    }
}

#[test]
fn method_page_states_the_sandbox_only_when_recorded() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    let camp = root.join("performance/data/x86_1/campaign.json");
    let ds = Dataset::load(&root).unwrap();
    let page = pqperf_report::method_page(&ds, "x86_1", Form::Harness).unwrap();
    assert!(!page.contains("Candidate code ran"), "{page}");
    edit_json(&camp, |c| {
        c["pqperf"] = json!({"counter": "tsc", "sandbox": {
            "sandbox": "on", "namespaces": ["network", "mount"],
            "network": "none (empty network namespace)",
            "write_confinement": "landlock (scratch directory only)",
            "address_space_limit_bytes": 8589934592u64, "pids_limit": "pids cgroup"}});
    });
    let ds = Dataset::load(&root).unwrap();
    let page = pqperf_report::method_page(&ds, "x86_1", Form::Harness).unwrap();
    assert!(
        page.contains("Namespaces: network, mount; network: none (empty network namespace); writes: landlock (scratch directory only); process limit: pids cgroup; address space: 8192 MiB"),
        "{page}"
    );
    edit_json(&camp, |c| {
        c["pqperf"]["sandbox"] = json!({"sandbox": "off (--no-sandbox)"});
    });
    let ds = Dataset::load(&root).unwrap();
    let page = pqperf_report::method_page(&ds, "x86_1", Form::Harness).unwrap();
    assert!(page.contains("**without the sandbox**"), "{page}");
}
