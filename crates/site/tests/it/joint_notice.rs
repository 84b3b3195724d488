//! Joint pages say when a compared system's host was not fixed (as that system's own pages
//! do), naming the system and what its host checks found; with every host fixed they carry
//! no notice.

use crate::common;

use common::*;

fn site_with(arm_problems: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let map = vec![Relabel {
        from: ("sign-08".into(), "DARTS128".into()),
        to: ("sign-08".into(), "DARTS128".into()),
        ops: Vec::new(),
    }];
    synth_dataset(&data, &["x86_1", "arm_1"], &map, &[], false);
    for (sys, problems) in [("x86_1", &[][..]), ("arm_1", arm_problems)] {
        let camp = data.join(format!("performance/data/{sys}/campaign.json"));
        let mut c: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&camp).unwrap()).unwrap();
        c["host_problems"] = serde_json::json!(problems);
        std::fs::write(&camp, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    }
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&data, &[], &out).expect("site");
    (tmp, out)
}

#[test]
fn joint_pages_name_the_system_whose_host_was_not_fixed() {
    let (_tmp, out) = site_with(&["CPU 2: turbo on"]);
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    for page in ["joint/index.html", "joint/sign-08.html"] {
        let html = read(page);
        let notice = html
            .lines()
            .find(|l| l.starts_with("<p class=\"host-notice\""))
            .unwrap_or_else(|| panic!("{page} has no host notice"));
        assert!(notice.contains("was not fixed"), "{notice}");
        assert!(notice.contains("system arm_1"), "{notice}");
        assert!(notice.contains("CPU 2: turbo on"), "{notice}");
        assert!(!notice.contains("x86_1"), "{notice}");
    }
    // The system's own pages keep theirs; the fixed system has none.
    assert!(read("arm_1/sign-08.html").contains("class=\"host-notice\""));
    assert!(!read("x86_1/sign-08.html").contains("class=\"host-notice\""));
}

#[test]
fn joint_pages_of_fixed_hosts_have_no_notice() {
    let (_tmp, out) = site_with(&[]);
    let html = std::fs::read_to_string(out.join("joint/index.html")).unwrap();
    assert!(!html.contains("class=\"host-notice\""), "{html}");
}

/// With count evidence on both systems (x86 callgrind, AArch64 under the emulator's plugin),
/// the joint page shows each system's instructions per call side by side, linked to its
/// count file, with the sentence on what a count compares across architectures.
#[test]
fn joint_pages_show_both_architectures_instruction_counts() {
    use pqperf_model::count::{ACROSS_ARCHITECTURES, CountEvidence, Spread};
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let map = vec![Relabel {
        from: ("sign-08".into(), "DARTS128".into()),
        to: ("sign-08".into(), "DARTS128".into()),
        ops: Vec::new(),
    }];
    synth_dataset(&data, &["x86_1", "arm_1"], &map, &[], false);
    for (sys, n, arch) in [("x86_1", 18_274, None), ("arm_1", 16_914, Some("aarch64"))] {
        let ev = CountEvidence {
            schema: 1,
            candidate: "sign-08".into(),
            label: "DARTS128".into(),
            operation: "sign".into(),
            architecture: arch.map(String::from),
            status: "counted".into(),
            symbol: "sig_sign".into(),
            calls: 3,
            calls_run: 4,
            instructions_per_call: Spread::of(&[n, n, n]),
            instructions: vec![n; 3],
            ..Default::default()
        };
        let p = data.join(format!(
            "performance/data/{sys}/count/sign-08/DARTS128__sign.json"
        ));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, pqperf_model::pyjson::to_string(&ev).unwrap()).unwrap();
    }
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&data, &[], &out).expect("site");
    let html = std::fs::read_to_string(out.join("joint/sign-08.html")).unwrap();
    assert!(html.contains("x86_1 instructions/call"), "{html}");
    assert!(html.contains("arm_1 instructions/call"), "{html}");
    let esc = ACROSS_ARCHITECTURES.replace('\'', "&#39;");
    assert!(
        html.contains(&esc) || html.contains(ACROSS_ARCHITECTURES),
        "{html}"
    );
    for (sys, shown) in [("x86_1", "18.3 k"), ("arm_1", "16.9 k")] {
        let cell = format!(
            "data-label=\"{sys} instructions/call\"><a class=\"ev\" href=\"../evidence/{sys}/count/sign-08/DARTS128__sign.json\">{shown}</a>"
        );
        assert!(html.contains(&cell), "{cell} not in {html}");
    }
}
