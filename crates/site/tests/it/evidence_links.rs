//! Evidence links open at the field: a candidate page's environment values link to a record
//! of that candidate (never another candidate's) at the field that holds the value, through
//! the evidence viewer page generated beside each JSON evidence file; the viewer has an `id`
//! for every field and every such link resolves (the site's link check follows fragments).

use crate::common;

/// The `href`s of the value links in the "Assessment environment" table of a page.
fn environment_links(html: &str) -> Vec<String> {
    let start = html
        .find("-assessment-environment\"")
        .expect("environment section");
    let table = &html[start..];
    let table = &table[..table.find("</table>").unwrap()];
    table
        .split("<a class=\"ev\" href=\"")
        .skip(1)
        .map(|p| p[..p.find('"').unwrap()].to_string())
        .collect()
}

#[test]
fn environment_values_link_to_the_candidates_own_record_at_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&common::golden_harness(), &[], &out).expect("site");
    for (page, cand) in [
        ("x86_1/sign-02.html", "sign-02"),
        ("x86_1/sign-06.html", "sign-06"),
        ("x86_1/sign-08.html", "sign-08"),
        ("arm_1/sign-06.html", "sign-06"),
    ] {
        let html = std::fs::read_to_string(out.join(page)).unwrap();
        let links = environment_links(&html);
        // Processor, (machine on AArch64,) clock, memory, OS, compiler; campaign times.
        let n = links.len();
        assert!(n == 6 || n == 7, "{page}: {links:#?}");
        for l in &links[..n - 1] {
            assert!(
                l.starts_with(&format!("../evidence/{}/records/{cand}/", &page[..5])),
                "{page}: an environment value links outside {cand}'s records: {l}"
            );
            assert!(l.contains(".json.html#/environment/"), "{page}: {l}");
        }
        assert!(
            links[0].ends_with("#/environment/cpu_model"),
            "{page}: {}",
            links[0]
        );
        assert!(
            links[n - 1].ends_with("campaign.json.html#/started_utc"),
            "{page}: {}",
            links[n - 1]
        );
        // The viewer the link names has the field's id.
        let (file, frag) = links[0].split_once('#').unwrap();
        let viewer = std::fs::read_to_string(out.join(page).parent().unwrap().join(file)).unwrap();
        assert!(viewer.contains(&format!("<span id=\"{frag}\">")), "{file}");
        assert!(viewer.contains("cpu_model"));
    }
    // The summary's operation values open their record at the mean.
    let summary = std::fs::read_to_string(out.join("x86_1/index.html")).unwrap();
    assert!(
        summary.contains("records/sign-02/BiT-128__keygen.json.html#/mean_cycles\""),
        "summary values do not open at their field"
    );
    // Every link resolves, fragments included (the check names an id per fragment).
    let (broken, n) = pqperf_site::check::check_links(&out).unwrap();
    assert!(broken.is_empty(), "broken links: {broken:#?}");
    assert!(n > 1000, "{n}");
}

#[test]
fn a_fragment_naming_no_field_is_a_broken_link() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&common::golden_harness(), &[], &out).expect("site");
    let p = out.join("x86_1/sign-02.html");
    let html = std::fs::read_to_string(&p).unwrap();
    let html = html.replacen("#/environment/cpu_model", "#/environment/no_such_field", 1);
    std::fs::write(&p, html).unwrap();
    let (broken, _) = pqperf_site::check::check_links(&out).unwrap();
    assert_eq!(broken.len(), 1, "{broken:#?}");
    assert!(broken[0].1.ends_with("#/environment/no_such_field"));
}
