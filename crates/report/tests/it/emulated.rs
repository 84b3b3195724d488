//! Pages of a dataset measured on an emulated host (campaign.json `pqperf.emulated`, derived
//! here from the golden arm_1 files): the candidate, summary and method pages of that system
//! say "emulated: timings are not performance figures" in both forms, once; the other
//! system's pages do not. (Golden pages stay byte-identical: tests/it/golden_pages.rs.)

use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, candidate_page, method_page, summary_page};
use serde_json::json;

use crate::common;
use common::*;

const NOTICE: &str = "**emulated: timings are not performance figures.** This system ran its code under qemu-user (`pqperf.emulated` in `campaign.json`): the figures show that the pipeline ran, not how fast the code is on real hardware.";

#[test]
fn emulated_system_pages_say_so_and_only_those() {
    let Some((_tmp, root)) = golden_copy() else {
        return;
    };
    edit_json(&root.join("performance/data/arm_1/campaign.json"), |c| {
        c["pqperf"] = json!({"version": "0.1.0", "emulated": "qemu-user"});
    });
    let ds = Dataset::load(&root).unwrap();
    for form in [Form::Harness, Form::Site] {
        let pages = [
            candidate_page(&ds, "arm_1", "sign-08", form).unwrap(),
            summary_page(&ds, "arm_1", form).unwrap(),
            method_page(&ds, "arm_1", form).unwrap(),
        ];
        for p in &pages {
            assert_has(p, NOTICE);
            assert_eq!(
                p.matches("emulated: timings are not performance").count(),
                1
            );
        }
        for p in [
            candidate_page(&ds, "x86_1", "sign-08", form).unwrap(),
            summary_page(&ds, "x86_1", form).unwrap(),
            method_page(&ds, "x86_1", form).unwrap(),
        ] {
            assert!(!p.contains("emulated"), "{p}");
        }
    }
}
