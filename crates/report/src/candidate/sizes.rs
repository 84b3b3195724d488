//! Section 6 of the candidate page: transmission and storage sizes (API sizes, external
//! sizes, KEX messages and bandwidth).

use crate::Form;
use crate::common::code;
use crate::links::{PageRef, link};
use crate::page::{Cell, Evidence, Page, Section, Table};
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
    me: &PageRef,
    form: Form,
) -> Page {
    let mut out = Page::new();
    out.section(Section::Transmission);
    out.blank();
    // pqperf publishes no size audit (a reference-harness document): no link to it.
    let pqperf = crate::common::by_pqperf(v);
    let see_audit = |what: &str| {
        if pqperf {
            String::new()
        } else {
            format!(
                " See [the size audit]({}) for {what}.",
                link(me, &PageRef::SizeAudit, form)
            )
        }
    };
    match cat {
        Category::Kem | Category::Sign => {
            if pqperf && v.side.external_sizes.is_empty() {
                out.line("Sizes are the API figures recorded in the timing records (this dataset has no curated `performance/external_sizes.csv`).");
            } else {
                out.line(format!("External public-key, ciphertext and signature sizes follow the curated `performance/external_sizes.csv` catalog; secret-key and shared-secret lengths remain API figures.{}", see_audit("disagreements")));
            }
            out.blank();
            let mut t = if cat == Category::Kem {
                Table::new([
                    "instance",
                    "public key",
                    "secret key",
                    "ciphertext",
                    "shared secret",
                ])
            } else {
                Table::new(["instance", "public key", "secret key", "signature"])
            };
            let catalog = Some(Evidence::Side("external_sizes.csv".into()));
            let mut nominal = false;
            for label in labels {
                let Some(r) = api_sizes(v, cand, label) else {
                    continue;
                };
                let api = &r.rec.sizes;
                let api_ev = Some(r.evidence(&v.id));
                let ext = v
                    .side
                    .external_sizes
                    .get(&(cand.to_string(), label.to_string()));
                // A catalog size links to the catalog, an API size to its record.
                let sized = |curated: Option<u64>, key: &str| match curated {
                    Some(b) => (Some(b), catalog.clone()),
                    None => (api.get(key).copied(), api_ev.clone()),
                };
                let api_cell = |key: &str| Cell::value(num(api.get(key).copied()), api_ev.clone());
                let (pk, pk_ev) = sized(ext.and_then(|e| e.public_key_bytes), "pk_bytes");
                if cat == Category::Kem {
                    let (ct, ct_ev) = sized(ext.and_then(|e| e.ciphertext_bytes), "ct_bytes");
                    t.row(vec![
                        Cell::text(code(label)),
                        Cell::value(num(pk), pk_ev),
                        api_cell("sk_bytes"),
                        Cell::value(num(ct), ct_ev),
                        api_cell("ss_bytes"),
                    ]);
                } else {
                    let (sig, sig_ev) =
                        sized(ext.and_then(|e| e.signature_bytes), "signature_bytes");
                    let suffix = match ext.map(|e| e.basis.as_str()) {
                        Some("nominal-variable") => {
                            nominal = true;
                            " ≈ nominal"
                        }
                        Some("maximum-variable") => " (maximum)",
                        _ => "",
                    };
                    t.row(vec![
                        Cell::text(code(label)),
                        Cell::value(num(pk), pk_ev),
                        api_cell("sk_bytes"),
                        Cell::value(format!("{}{suffix}", num(sig)), sig_ev),
                    ]);
                }
            }
            out.table(t);
            out.blank();
            if nominal {
                out.line("Signatures marked `≈ nominal` have a variable length: the API reports a capacity, actual signatures vary, and the catalog gives the specification's representative size.");
                out.blank();
            }
        }
        Category::Kex => {
            out.line(format!("Bandwidth counts all specified protocol messages and each required public key once, following the curated `performance/kex_bandwidth.csv` catalog; raw message lengths are the API figures of the timing records.{}", see_audit("the accounting")));
            out.blank();
            let mut t = Table::new([
                "instance",
                "passes",
                "messages (bytes; raw API)",
                "protocol-message bytes",
                "public key A / B",
                "bandwidth (bytes)",
                "long-term sk (API cap)",
                "shared secret",
            ]);
            let catalog = Some(Evidence::Side("kex_bandwidth.csv".into()));
            for label in labels {
                let Some(r) = api_sizes(v, cand, label) else {
                    continue;
                };
                let api = &r.rec.sizes;
                let api_ev = Some(r.evidence(&v.id));
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
                let bw_ev = bw.and(catalog.clone());
                let (proto, pks, total) = match bw {
                    Some(b) => (
                        b.protocol_message_bytes.to_string(),
                        format!("{} / {}", b.pk_a_bytes, b.pk_b_bytes),
                        (b.protocol_message_bytes + b.pk_a_bytes + b.pk_b_bytes).to_string(),
                    ),
                    None => (DASH.into(), DASH.into(), DASH.into()),
                };
                let ss = api.get("ss_actual_bytes").or(api.get("ss_bytes")).copied();
                t.row(vec![
                    Cell::text(code(label)),
                    Cell::value(passes, api_ev.clone()),
                    Cell::value(msgs, api_ev.clone()),
                    Cell::value(proto, bw_ev.clone()),
                    Cell::value(pks, bw_ev.clone()),
                    Cell::value(total, bw_ev),
                    Cell::value(num(api.get("sk_bytes").copied()), api_ev.clone()),
                    Cell::value(num(ss), api_ev),
                ]);
            }
            out.table(t);
            out.blank();
        }
        Category::Hash => {}
    }
    out
}
