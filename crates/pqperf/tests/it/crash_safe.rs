//! Crash safety of the commands that replace evidence (`campaign publish`, `site`, `kat`):
//! the real `pqperf` is SIGKILLed at its N-th file write (for every N until it finishes;
//! `pqperf_model::fsutil::FAULT_ENV`), killed after random delays, and made to hit
//! "No space left on device" (injected, and on a small tmpfs mounted for the test when the
//! kernel lets us); afterwards the dataset, site or KAT log must be the old one or the new
//! one, whole, and an I/O error must name the path.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{exe as pqperf, repo};
use pqperf_model::fsutil::{FAULT_ENV, copy_tree};

type Tree = BTreeMap<PathBuf, Vec<u8>>;

/// Every regular file below `dir` (relative path → bytes).
fn tree(dir: &Path) -> Tree {
    let mut out = Tree::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.map(Result::unwrap) {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn describe(t: &Tree) -> String {
    format!("{} files", t.len())
}

/// The problems validate finds in one system (pages not compared: publish makes them stale).
fn problems(root: &Path, system: &str) -> Vec<String> {
    let rep = pqperf_validate::validate_with(
        root,
        &pqperf_validate::Options {
            system: Some(system.into()),
            pages: false,
        },
    );
    rep.problems.iter().map(|p| p.to_string()).collect()
}

fn run_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(pqperf());
    c.args(args).env_remove(FAULT_ENV);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run pqperf")
}

fn text(o: &Output) -> String {
    common::text(o)
}

/// Killed by SIGKILL (the injected fault or the test).
fn killed(o: &Output) -> bool {
    use std::os::unix::process::ExitStatusExt;
    o.status.signal() == Some(9)
}

/// A small deterministic sequence of delays (ms) without a random-number crate.
fn delays(n: usize, max_ms: u64, seed: u64) -> Vec<u64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % max_ms.max(1)
        })
        .collect()
}

/// Start pqperf, SIGKILL it after `ms` (if still running), and wait for it.
fn kill_after(args: &[&str], ms: u64) -> std::process::ExitStatus {
    let mut child = Command::new(pqperf())
        .args(args)
        .env_remove(FAULT_ENV)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(ms));
    let _ = child.kill();
    child.wait().unwrap()
}

/// A dataset (copy of the golden harness dataset) and a run directory made from its x86_1
/// system with one record less, so that the old and the new system trees differ.
struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ds0: PathBuf,
    run: PathBuf,
}

fn fixture() -> Option<Fixture> {
    let golden = pqperf_model::golden::golden_harness()?;
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().to_path_buf();
    let ds0 = base.join("ds0");
    copy_tree(&golden, &ds0).unwrap();
    let run = base.join("run");
    copy_tree(&ds0.join("performance/data/x86_1"), &run).unwrap();
    std::fs::copy(
        ds0.join("performance/systems.csv"),
        base.join("systems.csv"),
    )
    .unwrap();
    let rec = std::fs::read_dir(run.join("records"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .min()
        .unwrap();
    std::fs::remove_file(&rec).unwrap();
    Some(Fixture {
        _tmp: tmp,
        base,
        ds0,
        run,
    })
}

fn publish_args<'a>(run: &'a str, ds: &'a str) -> Vec<&'a str> {
    vec!["campaign", "publish", "--run-dir", run, "--publish-to", ds]
}

#[test]
fn publish_killed_at_every_write_leaves_the_old_or_the_new_dataset() {
    let Some(f) = fixture() else {
        eprintln!("golden fixtures skipped (PQPERF_GOLDEN=skip)");
        return;
    };
    let sys = |ds: &Path| ds.join("performance/data/x86_1");
    let old = tree(&sys(&f.ds0));
    let other = tree(&f.ds0.join("performance/data/arm_1"));
    assert!(problems(&f.ds0, "x86_1").is_empty());
    // The reference: an undisturbed publish.
    let dref = f.base.join("dref");
    copy_tree(&f.ds0, &dref).unwrap();
    let run = f.run.to_str().unwrap();
    let o = run_with(&publish_args(run, dref.to_str().unwrap()), &[]);
    assert!(o.status.success(), "{}", text(&o));
    let new = tree(&sys(&dref));
    assert_ne!(old, new);
    assert!(
        problems(&dref, "x86_1").is_empty(),
        "{:?}",
        problems(&dref, "x86_1")
    );
    // Another system of the dataset is kept as it was.
    assert_eq!(tree(&dref.join("performance/data/arm_1")), other);
    let mut kills = 0;
    for k in 1.. {
        let ds = f.base.join(format!("dk{k}"));
        copy_tree(&f.ds0, &ds).unwrap();
        let spec = format!("{k}:kill");
        let o = run_with(
            &publish_args(run, ds.to_str().unwrap()),
            &[(FAULT_ENV, &spec)],
        );
        let got = tree(&sys(&ds));
        assert!(
            got == old || got == new,
            "killed at write {k}: system tree is neither old ({}) nor new ({}): {}",
            describe(&old),
            describe(&new),
            describe(&got)
        );
        assert!(
            problems(&ds, "x86_1").is_empty(),
            "write {k}: {:?}",
            problems(&ds, "x86_1")
        );
        assert_eq!(tree(&ds.join("performance/data/arm_1")), other);
        std::fs::remove_dir_all(&ds).unwrap();
        if !killed(&o) {
            assert!(o.status.success(), "write {k}: {}", text(&o));
            break;
        }
        kills += 1;
        assert!(k < 1000, "publish never finished");
    }
    // Every staged file and the side tables are writes of their own.
    assert!(kills > new.len(), "only {kills} kill points");
    // Random moments.
    for (i, ms) in delays(6, 400, 7).into_iter().enumerate() {
        let ds = f.base.join(format!("dr{i}"));
        copy_tree(&f.ds0, &ds).unwrap();
        kill_after(&publish_args(run, ds.to_str().unwrap()), ms);
        let got = tree(&sys(&ds));
        assert!(
            got == old || got == new,
            "killed after {ms} ms: {}",
            describe(&got)
        );
        std::fs::remove_dir_all(&ds).unwrap();
    }
}

#[test]
fn publish_on_a_full_disk_keeps_the_old_dataset_and_names_the_path() {
    let Some(f) = fixture() else {
        eprintln!("golden fixtures skipped (PQPERF_GOLDEN=skip)");
        return;
    };
    let run = f.run.to_str().unwrap();
    let old = tree(&f.ds0.join("performance/data/x86_1"));
    for k in [1, 5, 20, 60] {
        let ds = f.base.join(format!("de{k}"));
        copy_tree(&f.ds0, &ds).unwrap();
        let spec = format!("{k}:enospc");
        let o = run_with(
            &publish_args(run, ds.to_str().unwrap()),
            &[(FAULT_ENV, &spec)],
        );
        let t = text(&o);
        assert!(!o.status.success(), "{t}");
        assert!(t.contains("No space left on device"), "{t}");
        assert!(
            t.contains(ds.to_str().unwrap()),
            "the error names no path: {t}"
        );
        assert_eq!(
            tree(&ds.join("performance/data/x86_1")),
            old,
            "ENOSPC at {k}"
        );
        assert!(problems(&ds, "x86_1").is_empty());
    }
    // A real full disk: a small tmpfs holding the dataset, filled up.
    let mnt = f.base.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("tmpfs ENOSPC case skipped: mount is not permitted here");
        return;
    }
    let ds = mnt.join("ds");
    copy_tree(&f.ds0, &ds).unwrap();
    // Leave less room than the new system tree needs.
    let need: usize = tree(&f.run).values().map(Vec::len).sum();
    let free = nix::sys::statvfs::statvfs(&mnt).unwrap();
    let avail = free.blocks_available() as usize * free.fragment_size() as usize;
    let filler = avail.saturating_sub(need / 3);
    let _ = std::fs::write(mnt.join("filler"), vec![0u8; filler]);
    let o = run_with(&publish_args(run, ds.to_str().unwrap()), &[]);
    let t = text(&o);
    let got = tree(&ds.join("performance/data/x86_1"));
    let _ = Command::new("umount").arg(&mnt).status();
    assert!(!o.status.success(), "{t}");
    assert!(t.contains("No space left on device"), "{t}");
    assert!(t.contains("mnt/ds"), "the error names no path: {t}");
    assert_eq!(got, old);
}

#[test]
fn publish_refuses_to_replace_a_valid_system_with_an_invalid_one() {
    let Some(f) = fixture() else {
        eprintln!("golden fixtures skipped (PQPERF_GOLDEN=skip)");
        return;
    };
    let old = tree(&f.ds0.join("performance/data/x86_1"));
    // A record whose trials no longer give its mean.
    let rec = std::fs::read_dir(f.run.join("records"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .max()
        .unwrap();
    let text_before = std::fs::read_to_string(&rec).unwrap();
    std::fs::write(&rec, text_before.replacen("\"trials\"", "\"trials_x\"", 1)).unwrap();
    let o = run_with(
        &publish_args(f.run.to_str().unwrap(), f.ds0.to_str().unwrap()),
        &[],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("refused to replace"), "{t}");
    assert_eq!(tree(&f.ds0.join("performance/data/x86_1")), old);
}

#[test]
fn site_killed_at_many_writes_is_the_old_site_or_the_new_one() {
    let Some(f) = fixture() else {
        eprintln!("golden fixtures skipped (PQPERF_GOLDEN=skip)");
        return;
    };
    // Old site from the dataset, new site from the dataset after a publish.
    let o = run_with(
        &publish_args(
            f.run.to_str().unwrap(),
            f.base.join("dnew").to_str().unwrap(),
        ),
        &[],
    );
    let _ = o;
    let dnew = f.base.join("dnew2");
    copy_tree(&f.ds0, &dnew).unwrap();
    let o = run_with(
        &publish_args(f.run.to_str().unwrap(), dnew.to_str().unwrap()),
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let site = f.base.join("site");
    let s = site.to_str().unwrap();
    let o = run_with(&["site", f.ds0.to_str().unwrap(), "--out", s], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let old = tree(&site);
    let ref_site = f.base.join("site-new");
    let o = run_with(
        &[
            "site",
            dnew.to_str().unwrap(),
            "--out",
            ref_site.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let new = tree(&ref_site);
    assert_ne!(old, new);
    let args = ["site", dnew.to_str().unwrap(), "--out", s];
    let mut k = 1;
    let mut kills = 0;
    loop {
        let spec = format!("{k}:kill");
        let o = run_with(&args, &[(FAULT_ENV, &spec)]);
        let got = tree(&site);
        assert!(
            got == old || got == new,
            "killed at write {k}: site is neither old ({}) nor new ({}): {}",
            describe(&old),
            describe(&new),
            describe(&got)
        );
        if !killed(&o) {
            assert!(o.status.success(), "{}", text(&o));
            assert_eq!(got, new);
            break;
        }
        kills += 1;
        // Not every write: 1, 2, 3, 5, 8, … keeps the test short.
        k += (k / 2).max(1);
        assert!(k < 100_000, "site never finished");
    }
    assert!(kills >= 5, "only {kills} kill points");
    // ENOSPC half way: the old site stays and the error names the page.
    let o = run_with(
        &["site", f.ds0.to_str().unwrap(), "--out", s],
        &[(FAULT_ENV, "20:enospc")],
    );
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("No space left on device") && t.contains(".html"),
        "{t}"
    );
    assert_eq!(tree(&site), new);
    // Random moments.
    for ms in delays(5, 600, 11) {
        kill_after(&["site", f.ds0.to_str().unwrap(), "--out", s], ms);
        let got = tree(&site);
        assert!(got == old || got == new, "killed after {ms} ms");
    }
    // No staging leftovers of the killed runs remain after a complete one.
    let o = run_with(&args, &[]);
    assert!(o.status.success());
    let names: Vec<String> = std::fs::read_dir(&f.base)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".site."))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn site_refuses_to_replace_a_directory_that_is_not_a_site() {
    let Some(f) = fixture() else {
        eprintln!("golden fixtures skipped (PQPERF_GOLDEN=skip)");
        return;
    };
    let out = f.base.join("notes");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("mine.txt"), "keep me").unwrap();
    let o = run_with(
        &[
            "site",
            f.ds0.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("not a site"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(out.join("mine.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn kat_killed_keeps_a_whole_log_that_build_json_describes() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    let rd = run_dir.to_str().unwrap();
    let cand = repo().join("testdata/candidates/wots-pxof");
    common::ok(
        None,
        &[
            "import",
            "iccs",
            cand.to_str().unwrap(),
            "--id",
            "sign-90",
            "--run-dir",
            rd,
        ],
    );
    common::ok(None, &["build", "--run-dir", rd]);
    common::ok(None, &["kat", "--run-dir", rd]);
    let log = run_dir.join("kat/sign-90/WOTS-PXOF-128.log");
    let good = std::fs::read(&log).unwrap();
    let check = |what: &str| {
        let bj: pqperf_model::BuildJson =
            pqperf_model::pyjson::read(&run_dir.join("build.json"), Path::new("build.json"))
                .unwrap();
        let e = &bj.instances["sign-90/WOTS-PXOF-128"];
        let bytes = std::fs::read(&log).unwrap_or_else(|_| panic!("{what}: the log is gone"));
        // The log is whole: it ends with its RESULT line.
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            text.lines()
                .last()
                .is_some_and(|l| l.starts_with("RESULT ")),
            "{what}: torn log"
        );
        // build.json claims a verdict only with the log it describes.
        if e.kat != "NOLOG" {
            assert_eq!(
                e.kat_log_sha256.as_deref(),
                Some(pqperf_model::katlog::sha256_hex(&bytes).as_str()),
                "{what}: build.json names another log"
            );
        }
    };
    for k in 1..=4 {
        let spec = format!("{k}:kill");
        let o = run_with(&["kat", "--run-dir", rd], &[(FAULT_ENV, &spec)]);
        check(&format!("killed at write {k}"));
        if !killed(&o) {
            break;
        }
    }
    for ms in delays(4, 300, 5) {
        kill_after(&["kat", "--run-dir", rd], ms);
        check(&format!("killed after {ms} ms"));
    }
    common::ok(None, &["kat", "--run-dir", rd]);
    check("final run");
    assert_eq!(std::fs::read(&log).unwrap().len(), good.len());
}
