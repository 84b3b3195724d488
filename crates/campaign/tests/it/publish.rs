//! `publish` on a real run directory: the side tables it writes quote what needs quoting, so a
//! `;` in a system description (or a quote) reads back unchanged.

use pqperf_campaign::{After, CampaignOptions, Exit, publish_with, systems};

#[test]
fn publish_side_tables_round_trip_a_semicolon_in_a_description() {
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("campaign.json"), "{\"system_id\": \"x86_7\"}\n").unwrap();
    let desc = "a VM; \"not\" fixed";
    std::fs::write(
        d.path().join("systems.csv"),
        "ID;Arch;Hostname;Description\nx86_7;x86_64;vm7;\"a VM; \"\"not\"\" fixed\"\n",
    )
    .unwrap();
    let mut o = CampaignOptions::new(&run).unwrap();
    o.publish_to = Some(d.path().join("ds"));
    assert_eq!(publish_with(&o, After::NOTHING).unwrap(), Exit::Done);
    let out = d.path().join("ds/performance/systems.csv");
    let rows = systems::load(&out).unwrap();
    assert_eq!(rows.len(), 1, "{}", std::fs::read_to_string(&out).unwrap());
    assert_eq!(rows[0].id, "x86_7");
    assert_eq!(rows[0].description, desc);
    // Published twice: the existing table is read back and written again unchanged.
    let before = std::fs::read_to_string(&out).unwrap();
    assert_eq!(publish_with(&o, After::NOTHING).unwrap(), Exit::Done);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
    assert!(
        d.path()
            .join("ds/performance/data/x86_7/campaign.json")
            .is_file()
    );
}

#[test]
fn publish_refuses_evidence_with_a_machine_path() {
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("run");
    std::fs::create_dir_all(run.join("records/sign-90")).unwrap();
    std::fs::write(run.join("campaign.json"), "{\"system_id\": \"x86_7\"}\n").unwrap();
    std::fs::write(
        run.join("records/sign-90/W__sign.json"),
        "{\"library\": \"/home/someone/lib.so\"}\n",
    )
    .unwrap();
    let mut o = CampaignOptions::new(&run).unwrap();
    o.publish_to = Some(d.path().join("ds"));
    // The file with the path is refused (exit 2), the rest of the run is published.
    assert_eq!(publish_with(&o, After::NOTHING).unwrap(), Exit::Refused);
    let sys = d.path().join("ds/performance/data/x86_7");
    assert!(sys.join("campaign.json").is_file());
    assert!(!sys.join("records/sign-90/W__sign.json").exists());
    // Once the path is gone the same run publishes.
    std::fs::write(
        run.join("records/sign-90/W__sign.json"),
        "{\"library\": \"lib/sign-90/libW.so\"}\n",
    )
    .unwrap();
    assert_eq!(publish_with(&o, After::NOTHING).unwrap(), Exit::Done);
    assert!(sys.join("records/sign-90/W__sign.json").is_file());
    assert!(
        d.path()
            .join("ds/performance/data/x86_7/records/sign-90/W__sign.json")
            .is_file()
    );
}

/// One build.json entry (only what publish reads).
fn entry(cand: &str, label: &str) -> String {
    format!(
        "\"{cand}/{label}\": {{\"candidate\": \"{cand}\", \"label\": \"{label}\", \"instance\": \"{label}\", \"variant\": \"reference\", \"flags\": \"guide\", \"kat\": \"PASS\"}}"
    )
}

/// A run directory of system x86_7 (registered in `<d>/systems.csv`) below `d`.
fn run_of_x86_7(d: &std::path::Path) -> std::path::PathBuf {
    let run = d.join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("campaign.json"), "{\"system_id\": \"x86_7\"}\n").unwrap();
    std::fs::write(
        d.join("systems.csv"),
        "ID;Arch;Hostname;Description\nx86_7;x86_64;vm7;a VM\n",
    )
    .unwrap();
    run
}

#[test]
fn publish_writes_the_targets_labels_state_once_and_leaves_the_rest_unknown() {
    let d = tempfile::tempdir().unwrap();
    let run = run_of_x86_7(d.path());
    let inst = |label: &str, extra: &str| {
        format!(
            "[[candidate.instance]]\nlabel = \"{label}\"\ninstance = \"{label}\"\nsource_dir = \".\"\n{extra}\n"
        )
    };
    let nist = |ns: &str, level: &str| {
        format!(
            "api = \"nist\"\n[candidate.instance.nist]\nnamespace = \"{ns}\"\npk_bytes = 1\nsk_bytes = 1\nsig_bytes = 1\n{level}"
        )
    };
    let catalog = format!(
        "[[candidate]]\nid = \"sign-90\"\ntype = \"sign\"\nalgorithm = \"S\"\nroot = \".\"\n\n{}{}{}{}{}\
         [[candidate]]\nid = \"hash-90\"\ntype = \"hash\"\nalgorithm = \"H\"\nroot = \".\"\n\n{}\
         [[candidate]]\nid = \"ml-dsa-65\"\ntype = \"sign\"\nalgorithm = \"ML-DSA-65\"\nroot = \".\"\n\n{}{}",
        inst("S-128", ""),
        inst("S-192-avx2", ""),
        inst("S-384", ""),
        inst("S-256-1024", ""),
        inst("S-512", ""),
        inst("H-256", ""),
        inst(
            "ml-dsa-65",
            &nist("PQCLEAN_MLDSA65_CLEAN", "nist_level = 3\n")
        ),
        // A PQClean label's digits are parameters, never a target.
        inst("ml-dsa-512", &nist("PQCLEAN_X_CLEAN", "")),
    );
    std::fs::write(run.join("catalog.toml"), catalog).unwrap();
    let entries: Vec<String> = [
        ("sign-90", "S-128"),
        ("sign-90", "S-192-avx2"),
        ("sign-90", "S-384"),
        ("sign-90", "S-256-1024"),
        ("sign-90", "S-512"),
        ("hash-90", "H-256"),
        ("ml-dsa-65", "ml-dsa-65"),
        ("ml-dsa-65", "ml-dsa-512"),
    ]
    .iter()
    .map(|(c, l)| entry(c, l))
    .collect();
    std::fs::write(
        run.join("build.json"),
        format!("{{\"instances\": {{{}}}}}\n", entries.join(", ")),
    )
    .unwrap();
    let ds = d.path().join("ds");
    let st = ds.join("performance/security_targets.csv");
    // A curator's value is kept; an empty cell is filled when the label states the target.
    std::fs::create_dir_all(st.parent().unwrap()).unwrap();
    std::fs::write(
        &st,
        "ID;Instance;TargetBits\nsign-90;S-512;256\nsign-90;S-128;\n",
    )
    .unwrap();
    let mut o = CampaignOptions::new(&run).unwrap();
    o.publish_to = Some(ds.clone());
    assert_eq!(publish_with(&o, After::NOTHING).unwrap(), Exit::Done);
    let text = std::fs::read_to_string(&st).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "ID;Instance;TargetBits",
            "hash-90;H-256;",
            "ml-dsa-65;ml-dsa-512;",
            "ml-dsa-65;ml-dsa-65;192",
            "sign-90;S-128;128",
            "sign-90;S-192-avx2;192",
            "sign-90;S-256-1024;",
            "sign-90;S-384;",
            "sign-90;S-512;256",
        ],
        "{text}"
    );
    // The file reads back through the model (192 is a valid target).
    let t = pqperf_model::sidecsv::CsvTable::read(&st, &st).unwrap();
    assert_eq!(t.security_targets().unwrap().len(), 8);
}

/// A page refresh that fails (a dataset the report stage cannot load: its kat_issues.csv is
/// not one) leaves the published tree in place: publish still ends with 0 and names the
/// pages as stale.
#[test]
fn a_failing_page_refresh_does_not_undo_the_publication() {
    let d = tempfile::tempdir().unwrap();
    let run = run_of_x86_7(d.path());
    let mut o = CampaignOptions::new(&run).unwrap();
    o.publish_to = Some(d.path().join("ds"));
    std::fs::create_dir_all(d.path().join("ds/performance")).unwrap();
    std::fs::write(
        d.path().join("ds/performance/kat_issues.csv"),
        "no;such;columns\n1;2;3\n",
    )
    .unwrap();
    let after = After {
        validate: false,
        pages: true,
    };
    let code = publish_with(&o, after).unwrap();
    assert_eq!(code, Exit::Done);
    assert!(
        d.path()
            .join("ds/performance/data/x86_7/campaign.json")
            .is_file()
    );
}
