//! `publish` on a real run directory: the side tables it writes quote what needs quoting, so a
//! `;` in a system description (or a quote) reads back unchanged.

use pqperf_campaign::{CampaignOptions, publish, systems};

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
    assert_eq!(publish(&o, None).unwrap(), 0);
    let out = d.path().join("ds/performance/systems.csv");
    let rows = systems::load(&out).unwrap();
    assert_eq!(rows.len(), 1, "{}", std::fs::read_to_string(&out).unwrap());
    assert_eq!(rows[0].id, "x86_7");
    assert_eq!(rows[0].description, desc);
    // Published twice: the existing table is read back and written again unchanged.
    let before = std::fs::read_to_string(&out).unwrap();
    assert_eq!(publish(&o, None).unwrap(), 0);
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
    assert_eq!(publish(&o, None).unwrap(), 2);
    let sys = d.path().join("ds/performance/data/x86_7");
    assert!(sys.join("campaign.json").is_file());
    assert!(!sys.join("records/sign-90/W__sign.json").exists());
    // Once the path is gone the same run publishes.
    std::fs::write(
        run.join("records/sign-90/W__sign.json"),
        "{\"library\": \"lib/sign-90/libW.so\"}\n",
    )
    .unwrap();
    assert_eq!(publish(&o, None).unwrap(), 0);
    assert!(sys.join("records/sign-90/W__sign.json").is_file());
    assert!(
        d.path()
            .join("ds/performance/data/x86_7/records/sign-90/W__sign.json")
            .is_file()
    );
}
