//! Snapshots (insta) of the summary, method and survey pages generated from the golden dataset,
//! in both forms. The candidate pages are compared with the published files instead
//! (golden_pages.rs); these pages have no published counterpart for a 3-candidate dataset.

use pqperf_model::dataset::Dataset;
use pqperf_report::{Form, method_page, summary_page, survey_page};

#[test]
fn golden_summary_method_survey_snapshots() {
    let Some(g) = pqperf_model::golden::golden_dir() else {
        return;
    };
    let ds = Dataset::load(&g.join("harness")).unwrap();
    for form in [Form::Harness, Form::Site] {
        let f = format!("{form:?}").to_lowercase();
        for sys in ["x86_1", "arm_1"] {
            insta::assert_snapshot!(
                format!("summary_{sys}_{f}"),
                summary_page(&ds, sys, form).unwrap()
            );
            insta::assert_snapshot!(
                format!("method_{sys}_{f}"),
                method_page(&ds, sys, form).unwrap()
            );
        }
        insta::assert_snapshot!(
            format!("survey_{f}"),
            survey_page(&ds, "x86_1", form).unwrap()
        );
    }
}
