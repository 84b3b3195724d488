//! Shared helpers of the site tests: the golden dataset, synthetic datasets made from golden
//! records, headless Chromium.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The golden data root, from the one lookup of every test ([`pqperf_model::golden`]): a
/// clear failure when the fixtures are absent. The site tests cannot run without them.
pub fn golden() -> PathBuf {
    pqperf_model::golden::golden_dir()
        .expect("the site tests need the golden fixtures (PQPERF_GOLDEN=skip is not supported)")
}

/// The golden harness dataset root.
pub fn golden_harness() -> PathBuf {
    golden().join("harness")
}

/// Where test artifacts (screenshots) go: `<target>/site-artifacts`.
pub fn artifacts_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let d = tmp.parent().unwrap_or(tmp).join("site-artifacts");
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn copy_tree(src: &Path, dst: &Path) {
    pqperf_model::fsutil::copy_tree(src, dst).unwrap();
}

fn set(v: &mut serde_json::Value, key: &str, val: serde_json::Value) {
    if let Some(o) = v.as_object_mut()
        && o.contains_key(key)
    {
        o.insert(key.to_string(), val);
    }
}

/// Write a JSON value in the reference layout (indent 1 is not needed for reading).
fn write_json(p: &Path, v: &serde_json::Value) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, serde_json::to_string_pretty(v).unwrap() + "\n").unwrap();
}

/// One instance mapping of a synthetic dataset: golden (candidate, label) → new (id, label).
pub struct Relabel {
    pub from: (String, String),
    pub to: (String, String),
    /// Operation renames (e.g. sign → enc) for synthetic KEM records.
    pub ops: Vec<(String, String)>,
}

/// Build a dataset at `dst` for `systems` by copying golden records, profiles, KAT logs and
/// build entries under new ids/labels. `downloads` rows are (id, algorithm name).
/// `per_call` adds pqperf per-call quantiles to every record.
pub fn synth_dataset(
    dst: &Path,
    systems: &[&str],
    map: &[Relabel],
    downloads: &[(String, String)],
    per_call: bool,
) {
    let g = golden_harness();
    let perf = dst.join("performance");
    std::fs::create_dir_all(&perf).unwrap();
    // systems.csv restricted to the chosen systems.
    let sys_csv = std::fs::read_to_string(g.join("performance/systems.csv")).unwrap();
    let kept: Vec<&str> = sys_csv
        .lines()
        .filter(|l| {
            l.starts_with('#')
                || l.starts_with("ID;")
                || systems.iter().any(|s| l.starts_with(&format!("{s};")))
        })
        .collect();
    std::fs::write(perf.join("systems.csv"), kept.join("\n") + "\n").unwrap();
    let mut dl = String::from("ID;Algorithm;PageURL\n");
    for (id, name) in downloads {
        dl.push_str(&format!("{id};{name};https://example.org/{id}\n"));
    }
    std::fs::write(dst.join("downloads.csv"), dl).unwrap();
    for sys in systems {
        let gs = g.join("performance/data").join(sys);
        let ds = perf.join("data").join(sys);
        std::fs::create_dir_all(&ds).unwrap();
        std::fs::copy(gs.join("campaign.json"), ds.join("campaign.json")).unwrap();
        let build: serde_json::Value =
            serde_json::from_slice(&std::fs::read(gs.join("build.json")).unwrap()).unwrap();
        let mut instances = serde_json::Map::new();
        for m in map {
            let (fc, fl) = &m.from;
            let (tc, tl) = &m.to;
            let Some(e) = build["instances"].get(format!("{fc}/{fl}")) else {
                continue;
            };
            let mut e = e.clone();
            set(&mut e, "candidate", tc.clone().into());
            set(&mut e, "label", tl.clone().into());
            set(&mut e, "kat_log", format!("kat/{tc}/{tl}.log").into());
            set(&mut e, "library", format!("{tc}/lib/lib{tl}.so").into());
            instances.insert(format!("{tc}/{tl}"), e);
            // KAT log.
            let klog = gs.join("kat").join(fc).join(format!("{fl}.log"));
            if klog.is_file() {
                let to = ds.join("kat").join(tc).join(format!("{tl}.log"));
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(&klog, &to).unwrap();
            }
            for kind in ["records", "profile"] {
                let dir = gs.join(kind).join(fc);
                let Ok(rd) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for f in rd.flatten() {
                    let name = f.file_name().to_string_lossy().into_owned();
                    let Some(op) = name
                        .strip_prefix(&format!("{fl}__"))
                        .and_then(|r| r.strip_suffix(".json"))
                    else {
                        continue;
                    };
                    let new_op = m
                        .ops
                        .iter()
                        .find(|(a, _)| a == op)
                        .map(|(_, b)| b.clone())
                        .unwrap_or_else(|| op.to_string());
                    let mut v: serde_json::Value =
                        serde_json::from_slice(&std::fs::read(f.path()).unwrap()).unwrap();
                    set(&mut v, "candidate", tc.clone().into());
                    set(&mut v, "label", tl.clone().into());
                    set(&mut v, "operation", new_op.clone().into());
                    set(&mut v, "kat_log", format!("kat/{tc}/{tl}.log").into());
                    if kind == "records"
                        && per_call
                        && let Some(c) = v.get("mean_cycles").and_then(|c| c.as_f64())
                    {
                        v.as_object_mut().unwrap().insert(
                                "pqperf".into(),
                                serde_json::json!({"per_call_cycles": {"samples": 1000, "method": "linear", "min": c * 0.9, "p50": c * 0.98, "p90": c * 1.1, "p99": c * 1.6, "max": c * 3.0}}),
                            );
                    }
                    write_json(
                        &ds.join(kind).join(tc).join(format!("{tl}__{new_op}.json")),
                        &v,
                    );
                }
            }
        }
        write_json(
            &ds.join("build.json"),
            &serde_json::json!({ "instances": instances }),
        );
    }
}

/// The `chromium` binary, or a clear failure.
pub fn chromium() -> PathBuf {
    for dir in std::env::var("PATH").unwrap_or_default().split(':') {
        for name in ["chromium", "chromium-browser"] {
            let p = Path::new(dir).join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "headless Chromium not found: install the Debian package `chromium` (bash scripts/setup.sh --tests does) to run the browser tests"
    );
}

/// Result of loading one page in headless Chromium.
pub struct Loaded {
    pub dom: String,
    /// Console messages (`INFO:CONSOLE` lines): our pages have no script, so any message is
    /// an error (CSP violation, failed load, script error).
    pub console: Vec<String>,
}

pub fn chromium_cmd(profile: &Path) -> Command {
    let mut c = Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        "--hide-scrollbars",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Load `page` (a file) and return its DOM and console messages.
pub fn load_page(page: &Path) -> Loaded {
    let profile = tempfile::tempdir().unwrap();
    let out = chromium_cmd(profile.path())
        .arg("--dump-dom")
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed on {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    Loaded {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string)
            .collect(),
    }
}

/// Screenshot `page` into `png` at the given window size; `dark` forces the dark scheme.
pub fn screenshot(page: &Path, png: &Path, width: u32, height: u32, dark: bool) {
    let profile = tempfile::tempdir().unwrap();
    let mut c = chromium_cmd(profile.path());
    c.arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={width},{height}"));
    if dark {
        c.arg("--force-dark-mode")
            .arg("--blink-settings=preferredColorScheme=0");
    }
    let out = c
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium screenshot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        png.is_file() && std::fs::metadata(png).unwrap().len() > 1000,
        "no screenshot at {}",
        png.display()
    );
}

/// What [`measure_overflow`] found on one page at one window width.
#[derive(Debug)]
pub struct Overflow {
    /// Layout viewport width (CSS px).
    pub viewport: f64,
    /// The document's scroll width: wider than the viewport means the page scrolls sideways.
    pub document: f64,
    /// Elements outside any scroll box whose right edge is past the viewport.
    pub past_edge: Vec<String>,
    /// Table boxes whose table is wider than the box (columns reachable only by scrolling).
    pub scrolled_tables: Vec<String>,
}

/// Lay `page` out in headless Chromium at `width` CSS px and measure horizontal overflow from
/// the DOM: a copy of the page beside it gets a script (the copy's CSP allows it; the site's
/// pages carry none) that reports the document width, every element past the right edge and
/// every table box that needs scrolling.
pub fn measure_overflow(page: &Path, width: u32) -> Overflow {
    const SCRIPT: &str = r#"<script>
(function () {
  var vw = document.documentElement.clientWidth;
  var res = { vw: vw, doc: document.documentElement.scrollWidth, over: [], wraps: [] };
  function scrolls(e) {
    for (var p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') return true;
    }
    return false;
  }
  document.querySelectorAll('main *').forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > vw + 1 && !scrolls(e)) {
      res.over.push(e.tagName + '.' + e.className + ' "' + (e.textContent || '').slice(0, 40) + '" right=' + Math.round(r.right));
    }
  });
  document.querySelectorAll('.table-wrap').forEach(function (w) {
    if (w.scrollWidth > w.clientWidth + 1) {
      var th = w.querySelector('th');
      res.wraps.push((th ? th.textContent : '?') + ': ' + w.scrollWidth + ' > ' + w.clientWidth);
    }
  });
  var pre = document.createElement('pre');
  pre.id = 'overflow-report';
  pre.textContent = JSON.stringify(res);
  document.body.appendChild(pre);
})();
</script>"#;
    let html = std::fs::read_to_string(page).unwrap();
    let csp_start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .expect("page has a CSP meta");
    let csp_end = csp_start + html[csp_start..].find('>').unwrap() + 1;
    let mut copy = String::new();
    copy.push_str(&html[..csp_start]);
    copy.push_str(&html[csp_end..]);
    let copy = copy.replace("</body>", &format!("{SCRIPT}\n</body>"));
    let measured = page.with_extension(format!("measure-{width}.html"));
    std::fs::write(&measured, copy).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let out = chromium_cmd(profile.path())
        .arg(format!("--window-size={width},900"))
        .arg("--dump-dom")
        .arg(format!(
            "file://{}",
            measured.canonicalize().unwrap().display()
        ))
        .output()
        .expect("run chromium");
    let _ = std::fs::remove_file(&measured);
    assert!(
        out.status.success(),
        "chromium failed on {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("<pre id=\"overflow-report\">")
        .unwrap_or_else(|| panic!("no overflow report on {}", page.display()))
        + "<pre id=\"overflow-report\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let list = |k: &str| -> Vec<String> {
        v[k].as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    Overflow {
        viewport: v["vw"].as_f64().unwrap_or(0.0),
        document: v["doc"].as_f64().unwrap_or(0.0),
        past_edge: list("over"),
        scrolled_tables: list("wraps"),
    }
}

/// Assert that `page` (relative to `out`) keeps every column readable at a desktop (1400 px)
/// and a phone (420 px) width: no sideways page scroll, nothing past the edge, no table whose
/// columns are reachable only by scrolling its box.
pub fn assert_fits(out: &Path, page: &str) {
    for width in [1400, 420] {
        let o = measure_overflow(&out.join(page), width);
        assert!(
            o.viewport > 0.0 && o.document <= o.viewport + 1.0,
            "{page} at {width} px: document {} px wide in a {} px viewport",
            o.document,
            o.viewport
        );
        assert!(
            o.past_edge.is_empty(),
            "{page} at {width} px: past the right edge: {:#?}",
            o.past_edge
        );
        assert!(
            o.scrolled_tables.is_empty(),
            "{page} at {width} px: tables wider than their box: {:#?}",
            o.scrolled_tables
        );
    }
}
