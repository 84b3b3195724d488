//! Hostile output and evidence (issue 31): what a candidate prints stays evidence (stored
//! capped with control characters escaped, machine paths redacted on publish, every other
//! candidate still published); `publish` never follows a symbolic link planted in a run
//! directory; evidence over the bounds of `pqperf_model::limits` is refused by `validate`,
//! `compare`, `site` and `report` naming the file, without reading it whole; names and
//! descriptions with Markdown structure cannot change a page, and `validate` refuses them.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use pqperf_test_support::{Ran, pqperf};

use common::repo;
use common::toy::{Lib, TOY_SIG, toy_run};

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

fn write_json(p: &Path, v: &Value) {
    std::fs::write(p, pqperf_model::pyjson::value_to_string(v)).unwrap();
}

/// Every file below `dir` (links not followed), relative.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path().strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// Two toy signature instances built by gcc into `run`: `sign-93/good` and `sign-93/leak`,
/// the second with `testdata/hostile/print_host_file.c` linked in (it prints `secret`'s path
/// and content on stderr when loaded); build.json lists both with KAT PASS.
fn hostile_run(run: &Path, secret: &Path) {
    let leak = [
        format!("-DLEAK_FILE=\"{}\"", secret.display()),
        repo()
            .join("testdata/hostile/print_host_file.c")
            .to_str()
            .unwrap()
            .to_string(),
    ];
    toy_run(
        run,
        "toy_sig.c",
        TOY_SIG,
        &[
            Lib::new("sign-93", "good"),
            Lib::new("sign-93", "leak").args(&leak),
        ],
    );
}

fn campaign(run: &Path, phase: &str, extra: &[&str]) -> (i32, String) {
    let mut args = common::toy::campaign_args(run, phase);
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    pqperf().args(&args).code_text()
}

#[test]
fn printed_host_paths_are_redacted_and_planted_links_are_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    // A host file under a machine path (the temporary directory is below /tmp).
    let secret = tmp.path().join("host-secret.txt");
    std::fs::write(&secret, "TOP-SECRET-93\n").unwrap();
    let secret_s = secret.to_str().unwrap();
    assert!(pqperf_model::paths::find_machine_path(secret_s).is_some());
    hostile_run(&run, &secret);
    let cpu = common::last_cpu();
    let common = ["--cpu", cpu.as_str(), "--trial-target", "0.002"];
    for phase in ["calibrate", "measure"] {
        let (code, text) = campaign(&run, phase, &common);
        assert_eq!(code, 0, "{phase}: {text}");
    }
    // In the run directory the candidate's stderr is kept (escaped: no raw ESC character).
    let rec = read_json(&run.join("records/sign-93/leak__sign.json"));
    assert_eq!(rec["status"], "complete", "{rec}");
    let stderr: Vec<&str> = rec["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["stderr"].as_str().unwrap())
        .collect();
    assert!(stderr.iter().all(|s| s.contains(secret_s)), "{stderr:?}");
    assert!(
        stderr
            .iter()
            .all(|s| s.contains("\\x1b[2J") && !s.contains('\u{1b}'))
    );

    // Links planted where the KAT child writes (its output folder), at a log's place, among
    // the records and instead of the profile folder.
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x__sign.json"), "{}\n").unwrap();
    std::fs::create_dir_all(run.join("kat/sign-93/leak")).unwrap();
    symlink(&secret, run.join("kat/sign-93/leak/planted.log")).unwrap();
    symlink(&secret, run.join("kat/sign-93/leak.log")).unwrap();
    symlink(&secret, run.join("records/sign-93/planted__sign.json")).unwrap();
    let _ = std::fs::remove_dir_all(run.join("profile"));
    symlink(&outside, run.join("profile")).unwrap();

    let ds = tmp.path().join("ds");
    let (code, text) = campaign(&run, "publish", &["--publish-to", ds.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    for link in [
        "kat/sign-93/leak/planted.log: symbolic link",
        "kat/sign-93/leak.log: symbolic link",
        "records/sign-93/planted__sign.json: symbolic link",
        "profile: symbolic link",
    ] {
        assert!(text.contains(link), "{link}: {text}");
    }
    let sys = read_json(&run.join("campaign.json"))["system_id"]
        .as_str()
        .unwrap()
        .to_string();
    let sysdir = ds.join("performance/data").join(&sys);
    let files = files_below(&sysdir);
    for label in ["good", "leak"] {
        for op in ["keygen", "sign", "verify"] {
            let f = PathBuf::from(format!("records/sign-93/{label}__{op}.json"));
            assert!(files.contains(&f), "{f:?} not published: {files:?}");
        }
    }
    assert!(
        !files.iter().any(|f| f.starts_with("kat")
            || f.starts_with("profile")
            || f.ends_with("planted__sign.json")),
        "{files:?}"
    );
    for f in &files {
        let bytes = std::fs::read(sysdir.join(f)).unwrap();
        assert_ne!(
            bytes,
            std::fs::read(&secret).unwrap(),
            "{f:?} is the host file"
        );
        assert!(
            pqperf_model::paths::find_machine_path(&String::from_utf8_lossy(&bytes)).is_none(),
            "{f:?}"
        );
    }
    let rec = read_json(&sysdir.join("records/sign-93/leak__sign.json"));
    let s = rec["processes"][0]["stderr"].as_str().unwrap();
    assert!(
        s.contains(pqperf_model::paths::REDACTED_PATH) && !s.contains(secret_s),
        "{s}"
    );
    // The redacted output passes validate's machine-path check.
    let (code, text) = pqperf()
        .args(["validate", ds.to_str().unwrap()])
        .code_text();
    assert_eq!(code, 0, "{text}");

    // A machine path in one of pqperf's own fields is still caught: publish refuses that file
    // (exit 2) and publishes the others; validate names it in a dataset.
    let own = run.join("records/sign-93/good__sign.json");
    let mut v = read_json(&own);
    v["processes"][0]["command"][0] = Value::from("/home/someone/pqperf-driver");
    write_json(&own, &v);
    let ds2 = tmp.path().join("ds2");
    let (code, text) = campaign(&run, "publish", &["--publish-to", ds2.to_str().unwrap()]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains(
            "records/sign-93/good__sign.json: absolute path '/home/someone/pqperf-driver'"
        ),
        "{text}"
    );
    let sysdir2 = ds2.join("performance/data").join(&sys);
    assert!(!sysdir2.join("records/sign-93/good__sign.json").exists());
    assert!(sysdir2.join("records/sign-93/leak__sign.json").is_file());
    assert!(sysdir2.join("records/sign-93/good__verify.json").is_file());
    let published = sysdir.join("records/sign-93/leak__verify.json");
    let mut v = read_json(&published);
    v["processes"][0]["command"][0] = Value::from("/home/someone/pqperf-driver");
    write_json(&published, &v);
    let (code, text) = pqperf()
        .args(["validate", ds.to_str().unwrap()])
        .code_text();
    assert_ne!(code, 0, "{text}");
    assert!(
        text.contains("records/sign-93/leak__verify.json") && text.contains("/home/someone"),
        "{text}"
    );
}

fn golden(tmp: &Path) -> Option<PathBuf> {
    let g = pqperf_model::golden::golden_dir()?;
    let root = tmp.join("harness");
    pqperf_model::fsutil::copy_tree(&g.join("harness"), &root).unwrap();
    Some(root)
}

const RECORD: &str = "performance/data/x86_1/records/sign-02/BiT-128__sign.json";

/// `validate`, `compare`, `site` and `report` on `root` all fail naming `shown` and saying
/// `what`.
fn every_reader_names(root: &Path, shown: &str, what: &str) {
    let r = root.to_str().unwrap();
    let out = root.parent().unwrap().join("site-out");
    for args in [
        vec!["validate", r],
        vec!["compare", r, r, "--system", "x86_1"],
        vec!["site", r, "--out", out.to_str().unwrap()],
        vec!["report", r, "--check"],
    ] {
        let (code, text) = pqperf().args(&args).code_text();
        assert_ne!(code, 0, "{args:?}: {text}");
        assert!(
            text.contains(shown) && text.contains(what),
            "{args:?}: {text}"
        );
    }
}

#[test]
fn an_oversized_evidence_file_is_refused_unread() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(root) = golden(tmp.path()) else {
        return;
    };
    // 2 GB, sparse: nothing is written, and nothing may be read.
    let f = std::fs::File::create(root.join(RECORD)).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    every_reader_names(&root, RECORD, "2147483648 bytes: larger than the 32 MiB");
}

#[test]
fn records_with_too_many_samples_are_refused_before_any_recomputation() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(root) = golden(tmp.path()) else {
        return;
    };
    let path = root.join(RECORD);
    let mut v = read_json(&path);
    let robust =
        pqperf_model::robust::Robust::compute(&[vec![100, 101, 102]], "sign", 1e9).unwrap();
    let mut robust = serde_json::to_value(&robust).unwrap();
    // One trial over the per-trial bound.
    let one = pqperf_model::limits::MAX_SAMPLES_PER_TRIAL + 1;
    robust["samples"] = serde_json::json!([vec!["7"; one].join(" ")]);
    v["pqperf"] = serde_json::json!({ "robust": robust.clone() });
    write_json(&path, &v);
    every_reader_names(
        &root,
        RECORD,
        "samples[0]: 4097 samples, more than the 4096",
    );
    // Trials within the bound, the record over its bound (what 10^7 samples would be, in
    // a file small enough to be read).
    let per = pqperf_model::limits::MAX_SAMPLES_PER_TRIAL;
    let trials = pqperf_model::limits::MAX_SAMPLES_PER_RECORD / per + 1;
    robust["samples"] = Value::from(vec![vec!["7"; per].join(" "); trials]);
    v["pqperf"] = serde_json::json!({ "robust": robust.clone() });
    write_json(&path, &v);
    every_reader_names(&root, RECORD, "samples a record may have");
    // A bootstrap that would take forever.
    robust["samples"] = serde_json::json!(["7 8 9"]);
    robust["resamples"] = Value::from(1_000_000_000u64);
    v["pqperf"] = serde_json::json!({ "robust": robust });
    write_json(&path, &v);
    every_reader_names(&root, RECORD, "bootstrap replicates");
}

#[test]
fn markdown_structure_in_descriptions_and_names_is_escaped_and_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(root) = golden(tmp.path()) else {
        return;
    };
    let evil =
        "evil | cell\n# Injected heading <script>alert(1)</script> [click](javascript:alert(1))";
    // systems.csv: the description of x86_1 (a quoted field may span lines).
    let sc = root.join("performance/systems.csv");
    let text = std::fs::read_to_string(&sc).unwrap();
    let line = text.lines().position(|l| l.starts_with("x86_1;")).unwrap() + 1;
    let text = text
        .lines()
        .map(|l| {
            if l.starts_with("x86_1;") {
                format!("x86_1;x86_64;blk;\"{evil}\"")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    std::fs::write(&sc, text).unwrap();
    // downloads.csv: the algorithm name of sign-06.
    let dl = root.join("downloads.csv");
    let text = std::fs::read_to_string(&dl).unwrap();
    std::fs::write(
        &dl,
        text.replace(
            "sign-06;COMPASS-SIG;",
            "sign-06;COMPASS | <script>x</script> [a](javascript:x);",
        ),
    )
    .unwrap();
    // An instance name and label: sign-08's first label renamed everywhere it appears.
    let sys = root.join("performance/data/x86_1");
    let bj = read_json(&sys.join("build.json"));
    let (key, old) = bj["instances"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, e)| e["candidate"] == "sign-08")
        .map(|(k, e)| (k.clone(), e["label"].as_str().unwrap().to_string()))
        .unwrap();
    let new = format!("{old}|x<b>");
    let bj_text = std::fs::read_to_string(sys.join("build.json"))
        .unwrap()
        .replace(&format!("\"{old}\""), &format!("\"{new}\""))
        .replace(&format!("\"{key}\""), &format!("\"sign-08/{new}\""));
    std::fs::write(sys.join("build.json"), bj_text).unwrap();
    for f in files_below(&sys) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if f.starts_with("records/sign-08") && name.starts_with(&format!("{old}__")) {
            let text = std::fs::read_to_string(sys.join(&f))
                .unwrap()
                .replace(&format!("\"{old}\""), &format!("\"{new}\""));
            std::fs::remove_file(sys.join(&f)).unwrap();
            let to = f.with_file_name(name.replacen(&old, &new, 1));
            std::fs::write(sys.join(to), text).unwrap();
        }
    }

    // validate names every source.
    let r = root.to_str().unwrap();
    let (code, text) = pqperf().args(["validate", r]).code_text();
    assert_ne!(code, 0, "{text}");
    for want in [
        format!("performance/systems.csv:{line}: Description: description"),
        "downloads.csv:".to_string(),
        "Algorithm: algorithm name \"COMPASS | ".to_string(),
        format!("build.json: instances.sign-08/{new}.label: instance label"),
        format!("records/sign-08/{new}__"),
        "which would change a page's structure".to_string(),
    ] {
        assert!(text.contains(&want), "{want}: {text}");
    }

    // The pages keep their structure: no injected heading, tag, link or table cell.
    let (code, text) = pqperf()
        .args(["report", r, "--system", "x86_1"])
        .code_text();
    assert_eq!(code, 0, "{text}");
    let method = std::fs::read_to_string(root.join("performance/method_x86_1.md")).unwrap();
    let summary = std::fs::read_to_string(root.join("performance/summary_x86_1.md")).unwrap();
    let cand = std::fs::read_to_string(root.join("sign-08/perf_x86_1.md")).unwrap();
    let comp = std::fs::read_to_string(root.join("sign-06/perf_x86_1.md")).unwrap();
    // `needle` in `page` other than right after a backslash (an escaped, literal character).
    let raw = |page: &str, needle: &str| {
        page.match_indices(needle)
            .any(|(i, _)| i == 0 || page.as_bytes()[i - 1] != b'\\')
    };
    for page in [&method, &summary, &cand, &comp] {
        assert!(!page.lines().any(|l| l.starts_with("# Injected")));
        assert!(
            !raw(page, "<script") && !raw(page, "](javascript:"),
            "{page}"
        );
    }
    assert!(
        method.contains("evil \\| cell \\# Injected heading \\<script\\>"),
        "{method}"
    );
    assert!(
        comp.lines()
            .next()
            .unwrap()
            .starts_with("# sign-06 COMPASS \\| \\<script\\>")
    );
    assert!(cand.contains(&format!("`{old}\\|x<b>`")), "{cand}");
    // Every table row of the candidate page has as many cells as its header.
    let mut cols = 0;
    for l in cand.lines() {
        if !l.starts_with('|') {
            cols = 0;
            continue;
        }
        let n = l.replace("\\|", "").matches('|').count();
        if cols == 0 {
            cols = n;
        }
        assert_eq!(n, cols, "{l}");
    }
    // The site renders the same text, not markup.
    let out = tmp.path().join("site");
    let (code, text) = pqperf()
        .args(["site", r, "--out", out.to_str().unwrap()])
        .code_text();
    assert_eq!(code, 0, "{text}");
    for f in files_below(&out) {
        if f.extension().is_some_and(|e| e == "html") {
            let html = std::fs::read_to_string(out.join(&f)).unwrap();
            assert!(!html.contains("<script>"), "{f:?}");
            assert!(!html.contains("href=\"javascript:"), "{f:?}");
            assert!(!html.contains(">Injected heading"), "{f:?}");
        }
    }
}
