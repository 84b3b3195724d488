//! `pqperf import iccs` names instances with the compiler's value of `ALGORITHM_INSTANCE`
//! (testdata/candidates/macro-sig: the name is a macro of another header chosen by a mode
//! macro, and a `-D` chooses the other parameter set); header text is never matched.

use std::path::{Path, PathBuf};

use pqperf_build::iccs_import::{read_submission, read_submission_with};

fn macro_sig() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/candidates/macro-sig")
}

#[test]
fn instance_names_come_from_the_preprocessor() {
    let c = read_submission(&macro_sig(), "sign-95", None, None).unwrap();
    assert_eq!(c.algorithm, "MSIG");
    let i = &c.instances[0];
    assert_eq!(
        (i.label.as_str(), i.instance.as_str(), i.source_dir.as_str()),
        ("MSIG-192", "MSIG-192", "Reference_Implementation/MSIG")
    );
    assert!(i.defines.is_empty());
    // A -D parameter set: recorded in the catalog defines and used for the name.
    let (c, notes) = read_submission_with(
        &macro_sig(),
        "sign-96",
        None,
        None,
        &["MSIG_MODE=1".to_string()],
    )
    .unwrap();
    // Folder MSIG and instance MSIG-128 differ: one line naming the three.
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("sign-96/MSIG-128: folder MSIG, ALGORITHM_INSTANCE MSIG-128 (gcc, -DMSIG_MODE=1), manifest entry of the folder MSIG/KAT_SIG_MSIG-128.txt: they disagree; built MSIG-128 (its manifest entry: MSIG/KAT_SIG_MSIG-128.txt)"),
        "{notes:?}"
    );
    assert_eq!(c.instances[0].instance, "MSIG-128");
    assert_eq!(c.instances[0].label, "MSIG-128");
    assert_eq!(c.instances[0].defines, vec!["MSIG_MODE=1".to_string()]);
    // A define the header rejects (#error): named after the folder, with a note saying why.
    let (c, notes) =
        read_submission_with(&macro_sig(), "sign-97", None, None, &["MSIG_MODE=2".into()]).unwrap();
    assert_eq!(c.instances[0].instance, "MSIG");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(
            "Reference_Implementation/MSIG/SIG_AlgorithmInstance.h: ALGORITHM_INSTANCE could not be evaluated"
        ) && notes[0].contains("MSIG_MODE must be 1 or 3"),
        "{notes:?}"
    );
}

#[test]
fn a_name_that_is_not_a_string_is_not_taken_literally() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sub");
    pqperf_model::fsutil::copy_tree(&macro_sig(), &root).unwrap();
    let h = root.join("Reference_Implementation/MSIG/SIG_AlgorithmInstance.h");
    let text = std::fs::read_to_string(&h).unwrap();
    // The header refers to a macro nothing defines (config.h no longer included).
    std::fs::write(&h, text.replace("#include \"config.h\"", "")).unwrap();
    let (c, notes) = read_submission_with(&root, "sign-95", None, None, &[]).unwrap();
    assert_eq!(c.instances[0].instance, "MSIG");
    assert!(
        notes[0].contains("expands to `CRYPTO_ALGNAME`"),
        "{notes:?}"
    );
    // A header without ALGORITHM_INSTANCE: the folder name, with a note.
    std::fs::write(&h, "/* no name */\n").unwrap();
    let (c, notes) = read_submission_with(&root, "sign-95", None, None, &[]).unwrap();
    assert_eq!(c.instances[0].instance, "MSIG");
    assert!(
        notes[0].contains("ALGORITHM_INSTANCE is not defined"),
        "{notes:?}"
    );
}
