//! Charts and digests on a phone (420 px window, headless Chromium): chart text is drawn at
//! a readable size (the chart keeps a minimum width and scrolls inside its frame instead of
//! shrinking its text below 9 px), and a sha256 digest in a sentence stays inside the screen
//! while its element keeps the whole value.

use crate::common;

use common::*;

/// Load `html` (written as a page of the site at `page`) at `width` px and return what the
/// script reports.
fn measure(out: &std::path::Path, page: &str, width: u32, script: &str) -> serde_json::Value {
    let html = std::fs::read_to_string(out.join(page)).unwrap();
    let csp_start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let csp_end = csp_start + html[csp_start..].find('>').unwrap() + 1;
    let copy = format!("{}{}", &html[..csp_start], &html[csp_end..])
        .replace("</body>", &format!("<script>{script}</script>\n</body>"));
    let measured = out.join(page).with_extension("phone.html");
    std::fs::write(&measured, copy).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let o = chromium_cmd(profile.path())
        .arg(format!("--window-size={width},900"))
        .arg("--dump-dom")
        .arg(format!("file://{}", measured.display()))
        .output()
        .expect("run chromium");
    let _ = std::fs::remove_file(&measured);
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom.find("<pre id=\"report\">").expect("report") + "<pre id=\"report\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    serde_json::from_str(&dom[start..end].replace("&amp;", "&")).unwrap()
}

#[test]
fn chart_text_is_readable_at_420_px() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&golden_harness(), &[], &out).expect("site");
    let script = "var r={min:1e9,n:0,vw:document.documentElement.clientWidth,doc:document.documentElement.scrollWidth};\
        document.querySelectorAll('figure.chart svg text').forEach(function(t){var h=parseFloat(getComputedStyle(t).fontSize)*t.getScreenCTM().a;r.n++;if(h<r.min)r.min=h;});\
        var p=document.createElement('pre');p.id='report';p.textContent=JSON.stringify(r);document.body.appendChild(p);";
    let r = measure(&out, "x86_1/sign-02.html", 420, script);
    assert!(r["n"].as_u64().unwrap() > 10, "{r}");
    let min = r["min"].as_f64().unwrap();
    assert!(min >= 9.0, "chart text drawn at {min:.1} px on a phone");
    assert!(
        r["doc"].as_f64() <= r["vw"].as_f64().map(|v| v + 1.0),
        "{r}"
    );
}

#[test]
fn a_digest_fits_a_phone_and_keeps_its_value() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    pqperf_site::build_from_dataset(&golden_harness(), &[], &out).expect("site");
    let digest = "f40a56d5d0590ad50badb8216dcbf59553127753b2a80dbb49b60aeb0cc497de";
    // A sentence with a digest as the report renders one (a code span).
    let p = out.join("x86_1/sign-02.html");
    let html = std::fs::read_to_string(&p).unwrap().replacen(
        "</main>",
        &format!(
            "{}</main>",
            pqperf_site::html::mark_digests(&format!(
                "<p id=\"d\">built from (sha256 <code>{digest}</code>)</p>"
            ))
        ),
        1,
    );
    std::fs::write(&p, html).unwrap();
    let script = "var c=document.querySelector('#d code');var b=c.getBoundingClientRect();\
        var r={right:b.right,vw:document.documentElement.clientWidth,text:c.textContent,title:c.title};\
        var p=document.createElement('pre');p.id='report';p.textContent=JSON.stringify(r);document.body.appendChild(p);";
    let r = measure(&out, "x86_1/sign-02.html", 420, script);
    assert!(
        r["right"].as_f64().unwrap() <= r["vw"].as_f64().unwrap(),
        "digest past the screen edge: {r}"
    );
    assert_eq!(r["text"], digest);
    assert_eq!(r["title"], digest);
}
