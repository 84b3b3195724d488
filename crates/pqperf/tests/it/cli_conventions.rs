//! The command-line conventions, as a user meets them: shell completions and manual pages
//! that cover every command, `-q`/`-v` that change what is printed, the containment flags
//! only where candidate code runs, help texts without doubled words, and missing inputs
//! named plainly (exit 2, nothing written).

use crate::common;

use std::path::Path;

fn run(args: &[&str]) -> (i32, String, String) {
    common::status(args)
}

/// The visible subcommands of `pqperf <path>`, as its `--help` lists them.
fn subcommands(path: &[&str]) -> Vec<String> {
    let args: Vec<&str> = path.iter().copied().chain(["--help"]).collect();
    let (code, out, _) = run(&args);
    assert_eq!(code, 0, "{args:?}");
    let Some(list) = out.split("Commands:").nth(1) else {
        return Vec::new();
    };
    list.split("\n\n")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect()
}

/// The visible commands, as `pqperf --help` lists them.
fn commands() -> Vec<String> {
    let names = subcommands(&[]);
    for want in [
        "import", "build", "kat", "campaign", "report", "site", "compare", "man",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    names
}

#[test]
fn completions_and_man_pages_cover_every_command() {
    let cmds = commands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        for c in &cmds {
            assert!(out.contains(c.as_str()), "{shell} completion lacks {c}");
        }
        // Hidden internal commands are not offered.
        assert!(
            !out.contains("kat-child") && !out.contains("hashprof"),
            "{shell}"
        );
    }
    let (code, bash, _) = run(&["completions", "bash"]);
    assert_eq!(code, 0);
    assert!(bash.contains("--fail-on-regression") && bash.contains("--run-dir"));
    let (code, _, err) = run(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{err}");

    let (code, man, _) = run(&["man"]);
    assert_eq!(code, 0);
    assert!(
        man.starts_with(".ie") || man.contains(".TH pqperf"),
        "{man}"
    );
    for c in &cmds {
        assert!(
            man.contains(&format!("pqperf\\-{c}(1)")),
            "pqperf(1) does not list {c}"
        );
    }
    assert!(!man.contains("kat\\-child"));

    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("man");
    let (code, out, err) = run(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("pages in"), "{out}");
    assert!(dir.join("pqperf.1").is_file());
    for c in &cmds {
        let page = std::fs::read_to_string(dir.join(format!("pqperf-{c}.1")))
            .unwrap_or_else(|e| panic!("pqperf-{c}.1: {e}"));
        assert!(
            page.contains(".SH NAME") && page.contains(".SH SYNOPSIS"),
            "{c}"
        );
    }
    // Nested commands get their page, with the options of their parent that apply.
    let iccs = std::fs::read_to_string(dir.join("pqperf-import-iccs.1")).unwrap();
    assert!(iccs.contains("\\-\\-define") && iccs.contains("\\-\\-no\\-sandbox"));
    let campaign = std::fs::read_to_string(dir.join("pqperf-campaign.1")).unwrap();
    assert!(campaign.contains("\\-\\-allow\\-unfixed\\-host"));
    // --quiet: the files, no status line.
    let dir2 = d.path().join("man2");
    let (code, out, _) = run(&["-q", "man", "--out", dir2.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(out, "");
    assert!(dir2.join("pqperf-demo.1").is_file());
}

#[test]
fn containment_flags_only_where_candidate_code_runs() {
    let flags = ["--no-sandbox", "--mem-limit", "--emulated"];
    let runs_code: &[&[&str]] = &[
        &["import", "iccs"],
        &["import", "pqclean"],
        &["build"],
        &["kat"],
        &["ct"],
        &["campaign"],
        &["demo"],
    ];
    for cmd in runs_code {
        let args: Vec<&str> = cmd.iter().copied().chain(["--help"]).collect();
        let (code, out, _) = run(&args);
        assert_eq!(code, 0, "{cmd:?}");
        for f in flags {
            assert!(out.contains(f), "{cmd:?} --help lacks {f}");
        }
    }
    let reads_only: &[&[&str]] = &[
        &["report"],
        &["site"],
        &["validate"],
        &["compare"],
        &["check"],
        &["iccs"],
        &["completions"],
        &["man"],
        &[],
    ];
    for cmd in reads_only {
        let args: Vec<&str> = cmd.iter().copied().chain(["--help"]).collect();
        let (code, out, _) = run(&args);
        assert_eq!(code, 0, "{cmd:?}");
        for f in flags {
            assert!(!out.contains(f), "{cmd:?} --help shows {f}:\n{out}");
        }
    }
    // ... and they are refused there.
    let (code, _, err) = run(&["report", "--no-sandbox", "x"]);
    assert_eq!(code, 2, "{err}");
    // A bad limit names the flag and the value.
    let (code, _, err) = run(&["build", "--mem-limit", "1M", "--list"]);
    assert_eq!(code, 2);
    assert!(err.contains("--mem-limit") && err.contains("1M"), "{err}");
}

/// Every help text of every command, nested ones included, short and long.
fn all_help() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    while let Some(cmd) = todo.pop() {
        let path: Vec<&str> = cmd.iter().map(String::as_str).collect();
        for sub in subcommands(&path) {
            let mut next = cmd.clone();
            next.push(sub);
            todo.push(next);
        }
        for h in ["-h", "--help"] {
            let args: Vec<&str> = path.iter().copied().chain([h]).collect();
            let (code, text, _) = run(&args);
            assert_eq!(code, 0, "{args:?}");
            out.push((args.join(" "), text));
        }
    }
    assert!(out.len() > 30, "{}", out.len());
    out
}

#[test]
fn help_texts_say_each_thing_once() {
    for (cmd, text) in all_help() {
        // `(default: X) [default: X]`: a default stated by hand and by clap.
        for (i, _) in text.match_indices("[default: ") {
            let v = &text[i + 10..];
            let v = &v[..v.find(']').unwrap()];
            assert!(
                !text.contains(&format!("(default: {v})")),
                "{cmd}: default {v} stated twice:\n{text}"
            );
        }
        // A phrase repeated back to back ("not a directory: not a directory").
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            for n in 3..=words.len() / 2 {
                for w in words.windows(2 * n) {
                    assert!(w[..n] != w[n..], "{cmd}: repeated words in {line:?}");
                }
            }
        }
    }
    let (_, site, _) = run(&["site", "--help"]);
    assert!(!site.contains("one or more datasets"), "{site}");
    let (_, top, _) = run(&["--help"]);
    assert!(!top.contains("one or more datasets"), "{top}");
    let (_, demo, _) = run(&["demo", "--help"]);
    assert!(demo.contains("[default: runs/demo]"), "{demo}");
    assert!(!demo.contains("(default: runs/demo)"), "{demo}");
    // The global flags are documented everywhere.
    assert!(
        demo.contains("--quiet") && demo.contains("--verbose"),
        "{demo}"
    );
}

#[test]
fn missing_inputs_are_named_plainly_and_refused() {
    let d = tempfile::tempdir().unwrap();
    let run_dir = d.path().join("run");
    let missing = d.path().join("nothere.zip");
    let m = missing.to_str().unwrap();
    let (code, _, err) = run(&[
        "import",
        "iccs",
        m,
        "--id",
        "sign-90",
        "--run-dir",
        run_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{m}: no such file or directory")),
        "{err}"
    );
    assert!(!err.contains("neither a folder"), "{err}");
    assert!(
        !run_dir.exists(),
        "a refused import created its run directory"
    );

    let ds = d.path().join("no-dataset");
    let ds_s = ds.to_str().unwrap();
    let out = d.path().join("site");
    for args in [
        vec!["report", ds_s],
        vec!["site", ds_s, "--out", out.to_str().unwrap()],
        vec!["validate", ds_s],
        vec!["compare", ds_s, ds_s],
    ] {
        let (code, stdout, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stdout}{err}");
        let want = format!("{ds_s}: no such file or directory");
        assert_eq!(err.matches(&want).count(), 1, "{args:?}: {err}");
        assert!(!err.contains("not a directory: "), "{args:?}: {err}");
    }
    assert!(!out.exists());
}

#[test]
fn a_bad_only_pattern_is_refused_naming_the_option_and_the_pattern() {
    let d = tempfile::tempdir().unwrap();
    let run_dir = d.path().join("run");
    let r = run_dir.to_str().unwrap();
    for cmd in ["build", "kat", "ct"] {
        let (code, stdout, err) = run(&[cmd, "--run-dir", r, "--only", "(sign"]);
        assert_eq!(code, 2, "{cmd}: {stdout}{err}");
        assert!(err.contains("--only \"(sign\": "), "{cmd}: {err}");
    }
    assert!(
        !run_dir.exists(),
        "a refused selection created the run directory"
    );
}

/// Campaign options are checked once, each error naming its option (exit 2, nothing
/// created); the retired `--adaptive` says what to use instead.
#[test]
fn campaign_options_are_refused_naming_the_option() {
    let d = tempfile::tempdir().unwrap();
    let run_dir = d.path().join("run");
    let r = run_dir.to_str().unwrap();
    for (args, says) in [
        (
            &["--adaptive"][..],
            "--adaptive is retired: `--target-ci PCT`",
        ),
        (&["--trial-target", "0"], "--trial-target"),
        (&["--shard", "3/2"], "--shard 3/2"),
        (&["--defer", "("], "--defer \"(\""),
    ] {
        let mut a = vec!["campaign", "measure", "--run-dir", r];
        a.extend_from_slice(args);
        let (code, stdout, err) = run(&a);
        assert_eq!(code, 2, "{args:?}: {stdout}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (code, stdout, err) = run(&["ab", r, r, "--op", "sgn"]);
    assert_eq!(code, 2, "{stdout}{err}");
    assert!(err.contains("not an operation key"), "{err}");
    assert!(
        !run_dir.exists(),
        "a refused option created the run directory"
    );
}

#[test]
fn a_dataset_root_that_is_a_file_is_refused_once() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("dataset");
    std::fs::write(&f, "not a folder").unwrap();
    let f = f.to_str().unwrap();
    for args in [
        vec!["report", f],
        vec!["validate", f],
        vec!["site", f, "--out", "unused"],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.matches("not a directory").count(), 1, "{args:?}: {err}");
        assert!(err.contains(&format!("{f}: not a directory")), "{err}");
    }
}

#[test]
fn quiet_and_verbose_change_what_validate_prints() {
    let Some(golden) = pqperf_model::golden::golden_harness() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("ds");
    pqperf_model::fsutil::copy_tree(&golden, &root).unwrap();
    let rec = "performance/data/arm_1/records/sign-06/COMPASS-SIG-512__sign.json";
    let text = std::fs::read_to_string(root.join(rec)).unwrap();
    std::fs::write(root.join(rec), &text[..text.len() - 100]).unwrap();
    let r = root.to_str().unwrap();
    let base = ["validate", r, "--system", "arm_1", "--no-pages"];
    let with = |pre: &[&str], post: &[&str]| {
        let args: Vec<&str> = pre
            .iter()
            .chain(base.iter())
            .chain(post.iter())
            .copied()
            .collect();
        let (code, out, err) = run(&args);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        (out, err)
    };
    let (out, err) = with(&[], &[]);
    assert!(out.lines().next().unwrap().starts_with(rec), "{out}");
    assert!(
        err.contains("validate: ") && err.contains(": dataset root"),
        "{err}"
    );
    assert!(!err.contains("checked"), "{err}");
    // -q (before or after the command): the summary line only.
    for (pre, post) in [(&["-q"][..], &[][..]), (&[][..], &["--quiet"][..])] {
        let (q, qerr) = with(pre, post);
        assert_eq!(q.lines().count(), 1, "{q}");
        assert!(q.trim_end().ends_with(": 1 problem(s)"), "{q}");
        assert_eq!(qerr, "", "{qerr}");
    }
    // -v: what was checked, besides the same results.
    let (v, verr) = with(&["-v"], &[]);
    assert_eq!(v, out);
    assert!(
        verr.contains("validate: checked arm_1 under") && verr.contains("--no-pages"),
        "{verr}"
    );
    // Both at once is a usage error.
    let (code, _, err) = run(&["-q", "-v", "validate", r]);
    assert_eq!(code, 2, "{err}");
}

/// A run directory with one imported test candidate.
fn imported(dir: &Path) -> std::path::PathBuf {
    let run = dir.join("run");
    let cand = common::repo().join("testdata/candidates/toy-kem");
    common::ok(
        None,
        &[
            "-q",
            "import",
            "iccs",
            cand.to_str().unwrap(),
            "--id",
            "kem-90",
            "--run-dir",
            run.to_str().unwrap(),
        ],
    );
    run
}

#[test]
fn quiet_and_verbose_change_what_build_and_kat_print() {
    let d = tempfile::tempdir().unwrap();
    let run = imported(d.path());
    let r = run.to_str().unwrap();
    let o = common::output(None, &["-v", "build", "--run-dir", r]);
    assert!(o.status.success());
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(out.contains("built 1 library"), "{out}");
    assert!(err.contains("built kem-90/TOY-KEM"), "{err}");
    // Quiet: the KAT verdicts that are not PASS and the summary only.
    let o = common::output(None, &["kat", "--run-dir", r, "--quiet"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("kat: 1 instance(s)") && out.contains("1 PASS"),
        "{out}"
    );
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    let o = common::output(None, &["kat", "--run-dir", r]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("RESULT kem-90 TOY-KEM PASS"), "{out}");

    // A campaign phase: its log lines at the default level, nothing at -q (campaign.log
    // keeps them), and the options in force at -v.
    let phase = |pre: &[&str]| {
        let args: Vec<&str> = pre
            .iter()
            .copied()
            .chain(["campaign", "kat", "--run-dir", r])
            .collect();
        let o = common::output(None, &args);
        assert!(o.status.success(), "{}", common::text(&o));
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (out, err) = phase(&[]);
    assert!(
        out.contains("phase kat: no built instance is waiting"),
        "{out}"
    );
    assert!(!err.contains("campaign: run directory"), "{err}");
    let (out, err) = phase(&["-q"]);
    assert_eq!(out, "", "{out}");
    assert!(!err.contains("phase kat"), "{err}");
    let log = std::fs::read_to_string(run.join("campaign.log")).unwrap();
    assert_eq!(
        log.matches("phase kat: no built instance is waiting")
            .count(),
        2,
        "{log}"
    );
    let (out, err) = phase(&["-v"]);
    assert!(
        out.contains("phase kat: no built instance is waiting"),
        "{out}"
    );
    assert!(
        err.contains(&format!("campaign: run directory {r}, CPU "))
            && err.contains("containment sandbox on"),
        "{err}"
    );
}

/// Refusals exit 2 and leave nothing behind (issue 40): a bad `--id`, an id of another
/// category, a folder that is not a submission; a mistyped `--run-dir` is named as missing.
#[test]
fn refused_imports_leave_nothing_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let wots = common::repo().join("testdata/candidates/wots-pxof");
    let wots = wots.to_str().unwrap();
    let empty = d.path().join("not-a-submission");
    std::fs::create_dir_all(empty.join("docs")).unwrap();
    std::fs::write(empty.join("docs/readme.txt"), "hello\n").unwrap();
    let run_dir = d.path().join("run");
    let r = run_dir.to_str().unwrap();
    for (sub, id, says) in [
        (wots, "sign-x", "--id \"sign-x\""),
        (wots, "kem-90", "kem"),
        (empty.to_str().unwrap(), "sign-90", "not-a-submission"),
    ] {
        let (code, out, err) = run(&["import", "iccs", sub, "--id", id, "--run-dir", r]);
        assert_eq!(code, 2, "{id}: {out}{err}");
        assert!(err.contains(says), "{id}: {err}");
        assert!(!run_dir.exists(), "{id}: a refused import left {r}");
    }
    // In an existing run directory the refused import leaves it as it was.
    common::ok(
        None,
        &["import", "iccs", wots, "--id", "sign-90", "--run-dir", r],
    );
    let before: Vec<_> = walk(&run_dir);
    let (code, _, err) = run(&["import", "iccs", wots, "--id", "kem-91", "--run-dir", r]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(walk(&run_dir), before);

    // A mistyped run directory is named as missing, not "run pqperf build first".
    let typo = d.path().join("rnu");
    let t = typo.to_str().unwrap();
    for cmd in ["kat", "build", "ct"] {
        let (code, out, err) = run(&[cmd, "--run-dir", t]);
        assert_eq!(code, 2, "{cmd}: {out}{err}");
        assert!(
            err.contains(&format!("run directory {t} does not exist")),
            "{cmd}: {err}"
        );
        assert!(!err.contains("first"), "{cmd}: {err}");
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            v.push(p);
        }
    }
    v.sort();
    v
}

/// `site --out` into a folder that is neither empty nor a site: refused (exit 2) with what
/// to do, nothing written there.
#[test]
fn site_into_a_non_empty_folder_is_refused() {
    let Some(ds) = pqperf_model::golden::golden_harness() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("mine");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "keep me\n").unwrap();
    let (code, o, err) = run(&["site", ds.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{o}{err}");
    assert!(err.contains("choose a new or empty one"), "{err}");
    assert_eq!(walk(&out), vec![out.join("notes.txt")]);
}

/// A reader that closes the pipe early (`pqperf completions zsh | head`): no panic, no
/// message, the status of a writer ended by SIGPIPE.
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::process::{Command, Stdio};
    let mut c = Command::new(common::exe())
        .args(["completions", "zsh"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(c.stdout.take());
    let o = c.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err, "");
    assert_eq!(o.status.code(), Some(141));
}

/// BUILDFAIL says why on the console: the first compiler error and the log's path.
#[test]
fn buildfail_shows_the_first_error_and_the_log() {
    let d = tempfile::tempdir().unwrap();
    let run_dir = d.path().join("run");
    let r = run_dir.to_str().unwrap();
    let cand = common::repo().join("testdata/candidates/broken-sig");
    common::ok(
        None,
        &[
            "-q",
            "import",
            "iccs",
            cand.to_str().unwrap(),
            "--id",
            "sign-94",
            "--run-dir",
            r,
        ],
    );
    let (code, out, err) = run(&["build", "--run-dir", r]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("BUILDFAIL sign-94/BROKEN-SIG\n  first error: "),
        "{out}"
    );
    assert!(out.contains(": error:"), "{out}");
    assert!(
        out.contains(&format!("  log: {r}/build/sign-94.log")),
        "{out}"
    );
}

/// `-q ab … --json` (the guide's CI gate) prints nothing on stderr; without `-q` the last
/// line is the verdict in one line; `--max-time` stops adding pairs and says so.
#[test]
fn ab_is_quiet_has_a_deadline_and_ends_with_its_verdict() {
    let d = tempfile::tempdir().unwrap();
    let run = imported(d.path());
    let r = run.to_str().unwrap();
    common::ok(None, &["-q", "build", "--run-dir", r]);
    common::ok(None, &["-q", "kat", "--run-dir", r]);
    let ab = |pre: &[&str], extra: &[&str]| {
        let mut args: Vec<&str> = pre.to_vec();
        args.extend([
            "ab",
            r,
            r,
            "--op",
            "keygen",
            "--pairs",
            "6",
            "--max-pairs",
            "6",
            "--trial-target",
            "0.002",
            "--probe-attempts",
            "1",
            "--cpu",
            "auto",
            "--json",
        ]);
        args.extend(extra);
        common::output(None, &args)
    };
    let o = ab(&["-q"], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{err}");
    assert_eq!(err, "", "-q ab printed on stderr");
    let ev: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(ev["units"].as_array().unwrap().len(), 1);

    let o = ab(&[], &["--max-time", "0.001"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("ab: --max-time 0.001 s reached after 0 pair(s)"),
        "{err}"
    );
    let last = err.lines().last().unwrap_or("");
    assert!(last.starts_with("ab: verdict inconclusive: "), "{err}");
    assert!(
        last.contains("1 not measured of 1 operation(s)") && last.ends_with("exit 1"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(1), "{err}");
    let ev: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reason = ev["units"][0]["result"]["reason"].as_str().unwrap_or("");
    assert!(
        reason.starts_with("judged at the --max-time deadline"),
        "{reason}"
    );
}
