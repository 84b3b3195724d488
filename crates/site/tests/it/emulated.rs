//! A system measured on an emulated host (campaign.json `pqperf.emulated`): its pages carry
//! the notice "emulated: timings are not performance figures." and the joint view marks it in
//! the system list, once per page; the native system's pages and list entry do not.

use crate::common;

use common::*;

#[test]
fn emulated_system_is_labelled_in_its_pages_and_the_joint_view() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let map = vec![Relabel {
        from: ("sign-08".into(), "DARTS128".into()),
        to: ("sign-08".into(), "DARTS128".into()),
        ops: Vec::new(),
    }];
    synth_dataset(&data, &["x86_1", "arm_1"], &map, &[], false);
    let camp = data.join("performance/data/arm_1/campaign.json");
    let mut c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&camp).unwrap()).unwrap();
    c["pqperf"] = serde_json::json!({"version": "0.1.0", "emulated": "qemu-user"});
    std::fs::write(&camp, serde_json::to_string_pretty(&c).unwrap()).unwrap();
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&data, &[], &out).expect("site");
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    let joint = read("joint/index.html");
    let arm = joint
        .lines()
        .find(|l| l.starts_with("<li><strong>arm_1</strong>"))
        .expect("arm_1 in the joint view");
    assert!(
        arm.contains("emulated: timings are not performance figures</strong> (qemu-user)"),
        "{arm}"
    );
    let x86 = joint
        .lines()
        .find(|l| l.starts_with("<li><strong>x86_1</strong>"))
        .expect("x86_1 in the joint view");
    assert!(!x86.contains("emulated"), "{x86}");
    assert!(read("arm_1/index.html").contains("emulated: timings are not performance figures."));
    assert!(!read("x86_1/index.html").contains("emulated"));
    // The method page is rendered from its blocks: its headings are headings, and the notice
    // appears once (the site's frame shows it; the page's notice block is left out).
    let method = read("arm_1/method.html");
    assert_eq!(
        method
            .matches("emulated: timings are not performance figures")
            .count(),
        1,
        "{method}"
    );
    assert!(method.contains(">Measurement</h2>"), "{method}");
    assert!(!read("x86_1/method.html").contains("emulated"));
}
