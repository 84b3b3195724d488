//! Section 6 of the candidate page: transmission and storage sizes (API sizes, external
//! sizes, KEX messages and bandwidth).

use crate::Form;
use crate::common::code;
use crate::links::{Page, link};
use crate::view::{RecordRef, SystemView};
use pqperf_model::fmt::DASH;
use pqperf_model::order::Category;

/// Sizes of an instance: the first record that has `sizes`.
pub(super) fn api_sizes<'a>(v: &SystemView<'a>, cand: &str, label: &str) -> Option<RecordRef<'a>> {
    v.records_of(cand, label)
        .into_iter()
        .find(|r| !r.rec.sizes.is_empty())
}

pub(super) fn num(x: Option<u64>) -> String {
    x.map(|b| b.to_string()).unwrap_or_else(|| DASH.into())
}

pub(super) fn sizes_section(
    v: &SystemView,
    cand: &str,
    labels: &[String],
    cat: Category,
    me: &Page,
    form: Form,
) -> Vec<String> {
    let mut out = vec![
        "## 6. Transmission and storage overhead".to_string(),
        String::new(),
    ];
    // pqperf publishes no size audit (a reference-harness document): no link to it.
    let pqperf = crate::common::by_pqperf(v);
    let see_audit = |what: &str| {
        if pqperf {
            String::new()
        } else {
            format!(
                " See [the size audit]({}) for {what}.",
                link(me, &Page::SizeAudit, form)
            )
        }
    };
    match cat {
        Category::Kem | Category::Sign => {
            if pqperf && v.side.external_sizes.is_empty() {
                out.push("Sizes are the API figures recorded in the timing records (this dataset has no curated `performance/external_sizes.csv`).".into());
            } else {
                out.push(format!("External public-key, ciphertext and signature sizes follow the curated `performance/external_sizes.csv` catalog; secret-key and shared-secret lengths remain API figures.{}", see_audit("disagreements")));
            }
            out.push(String::new());
            if cat == Category::Kem {
                out.push(
                    "| instance | public key | secret key | ciphertext | shared secret |".into(),
                );
                out.push("|---|---|---|---|---|".into());
            } else {
                out.push("| instance | public key | secret key | signature |".into());
                out.push("|---|---|---|---|".into());
            }
            let mut nominal = false;
            for label in labels {
                let Some(r) = api_sizes(v, cand, label) else {
                    continue;
                };
                let api = &r.rec.sizes;
                let ext = v
                    .side
                    .external_sizes
                    .get(&(cand.to_string(), label.to_string()));
                let pk = ext.and_then(|e| e.pk).or(api.get("pk_bytes").copied());
                let sk = api.get("sk_bytes").copied();
                if cat == Category::Kem {
                    let ct = ext.and_then(|e| e.ct).or(api.get("ct_bytes").copied());
                    let ss = api.get("ss_bytes").copied();
                    out.push(format!(
                        "| {} | {} | {} | {} | {} |",
                        code(label),
                        num(pk),
                        num(sk),
                        num(ct),
                        num(ss)
                    ));
                } else {
                    let sig = ext
                        .and_then(|e| e.sig)
                        .or(api.get("signature_bytes").copied());
                    let suffix = match ext.map(|e| e.basis.as_str()) {
                        Some("nominal-variable") => {
                            nominal = true;
                            " ≈ nominal"
                        }
                        Some("maximum-variable") => " (maximum)",
                        _ => "",
                    };
                    out.push(format!(
                        "| {} | {} | {} | {}{suffix} |",
                        code(label),
                        num(pk),
                        num(sk),
                        num(sig)
                    ));
                }
            }
            out.push(String::new());
            if nominal {
                out.push("Signatures marked `≈ nominal` have a variable length: the API reports a capacity, actual signatures vary, and the catalog gives the specification's representative size.".into());
                out.push(String::new());
            }
        }
        Category::Kex => {
            out.push(format!("Bandwidth counts all specified protocol messages and each required public key once, following the curated `performance/kex_bandwidth.csv` catalog; raw message lengths are the API figures of the timing records.{}", see_audit("the accounting")));
            out.push(String::new());
            out.push("| instance | passes | messages (bytes; raw API) | protocol-message bytes | public key A / B | bandwidth (bytes) | long-term sk (API cap) | shared secret |".into());
            out.push("|---|---|---|---|---|---|---|---|".into());
            for label in labels {
                let Some(r) = api_sizes(v, cand, label) else {
                    continue;
                };
                let api = &r.rec.sizes;
                let passes = r
                    .rec
                    .kex
                    .get("kex_passes")
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| DASH.into());
                let mut msgs: Vec<(u64, u64)> = api
                    .iter()
                    .filter_map(|(k, b)| {
                        let n = k.strip_prefix("msg")?.strip_suffix("_bytes")?;
                        Some((n.parse().ok()?, *b))
                    })
                    .collect();
                msgs.sort();
                let msgs = if msgs.is_empty() {
                    DASH.to_string()
                } else {
                    msgs.iter()
                        .map(|(_, b)| b.to_string())
                        .collect::<Vec<_>>()
                        .join(" / ")
                };
                let bw = v
                    .side
                    .kex_bandwidth
                    .get(&(cand.to_string(), label.to_string()));
                let (proto, pks, total) = match bw {
                    Some(b) => (
                        b.messages.to_string(),
                        format!("{} / {}", b.pk_a, b.pk_b),
                        (b.messages + b.pk_a + b.pk_b).to_string(),
                    ),
                    None => (DASH.into(), DASH.into(), DASH.into()),
                };
                let ss = api.get("ss_actual_bytes").or(api.get("ss_bytes")).copied();
                out.push(format!(
                    "| {} | {passes} | {msgs} | {proto} | {pks} | {total} | {} | {} |",
                    code(label),
                    num(api.get("sk_bytes").copied()),
                    num(ss)
                ));
            }
            out.push(String::new());
        }
        Category::Hash => {}
    }
    out
}
