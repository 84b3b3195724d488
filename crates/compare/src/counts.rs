//! `pqperf compare A B --counter instructions`: the gate on instruction counts
//! (`count/<id>/<label>__<op>.json`, see docs/counting.md). Counts are deterministic, so the
//! ratio B/A of the mean instructions per call is exact: A–A is exactly 1 ("no change") on any
//! host under any load, and a change of the work is "slower" or "faster" when it reaches the
//! threshold ([`DEFAULT_THRESHOLD`]). Two counts compare only when they were made in the same
//! testbed (valgrind, its options, compiler, flags, C library, machine) and with the same
//! seeds; the mean is taken over the calls both sides counted (call k has the same seeded
//! input on both sides). Otherwise the row says "not comparable" and why.

use std::path::Path;

use pqperf_model::count::CountEvidence;
use pqperf_model::dataset::Dataset;
use serde::Serialize;

use crate::CompareError;

/// Default threshold: a change of at least 0.5 % of the instructions per call is slower or
/// faster (smaller exact changes are reported with their ratio as "no change").
pub const DEFAULT_THRESHOLD: f64 = 0.005;

/// One operation on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CountRow {
    /// `<id>/<label>` of side A.
    pub instance: String,
    /// `<id>/<label>` of side B (differs with `--map`).
    pub instance_b: String,
    /// Operation key.
    pub operation: String,
    /// Mean instructions per call of A.
    pub a: Option<f64>,
    /// Mean instructions per call of B.
    pub b: Option<f64>,
    /// B ÷ A.
    pub ratio: Option<f64>,
    /// `slower`, `faster`, `no change`, `not comparable`, `not counted`.
    pub verdict: String,
    /// Why (not comparable / not counted), or the exact change.
    pub note: String,
}

/// The comparison of two sides' counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CountComparison {
    /// The counter compared (`instructions`).
    pub counter: String,
    /// The threshold (fraction).
    pub threshold: f64,
    /// How the counts were made: `callgrind`, or the method the evidence names (the qemu
    /// plugin), `callgrind / <method>` when the sides differ.
    pub method: String,
    /// Rows, in A's order.
    pub rows: Vec<CountRow>,
    /// Operations counted only in A / only in B.
    pub only_a: Vec<String>,
    /// Operations counted only in B.
    pub only_b: Vec<String>,
}

impl CountComparison {
    /// Any row slower.
    pub fn any_slower(&self) -> bool {
        self.rows.iter().any(|r| r.verdict == "slower")
    }

    /// Rows with a ratio.
    pub fn comparable(&self) -> usize {
        self.rows.iter().filter(|r| r.ratio.is_some()).count()
    }
}

/// The count evidence of a run directory or a dataset system.
pub fn load_counts(path: &Path, system: Option<&str>) -> Result<Vec<CountEvidence>, CompareError> {
    let ds = Dataset::load(path).map_err(|e| CompareError::Load(e.to_string()))?;
    let sys = match (system, ds.systems.as_slice()) {
        (Some(id), _) => ds
            .system(id)
            .ok_or_else(|| CompareError::Load(format!("{}: no system {id:?}", path.display())))?,
        (None, [one]) => one,
        (None, []) => {
            return Err(CompareError::Load(format!(
                "{}: neither a run directory nor a dataset with a system",
                path.display()
            )));
        }
        (None, _) => {
            return Err(CompareError::Load(format!(
                "{}: several systems; choose one with --system",
                path.display()
            )));
        }
    };
    Ok(sys.count.iter().map(|c| c.value.clone()).collect())
}

/// Why two counts of one operation cannot be compared exactly (None: they can).
fn incomparable(a: &CountEvidence, b: &CountEvidence) -> Option<String> {
    let (ta, tb) = (&a.testbed, &b.testbed);
    // The counting tool as the evidence names it: its method (the qemu plugin), else valgrind.
    let tool = |e: &CountEvidence| -> String {
        e.method
            .as_deref()
            .and_then(|m| m.split_whitespace().next())
            .unwrap_or("valgrind")
            .to_string()
    };
    let (tool_a, tool_b) = (tool(a), tool(b));
    let tool_name = if tool_a == tool_b {
        tool_a.clone()
    } else {
        format!("{tool_a} / {tool_b}")
    };
    let options = format!("{tool_name} options");
    let fields = [
        (
            "method",
            a.method == b.method && a.architecture == b.architecture,
        ),
        (tool_name.as_str(), ta.valgrind == tb.valgrind),
        (options.as_str(), ta.flags.len() == tb.flags.len()),
        ("ASLR", ta.aslr == tb.aslr),
        ("compiler", ta.compiler == tb.compiler),
        ("build flags", ta.build_flags == tb.build_flags),
        ("C library", ta.libc == tb.libc),
        ("machine", ta.machine == tb.machine),
    ];
    // The options name the counted symbol, which differs between two libraries' namespaces:
    // compare them without it.
    let strip = |f: &[String]| -> Vec<String> {
        f.iter()
            .filter(|x| !x.starts_with("--toggle-collect=") && !x.starts_with("--dump-after="))
            .cloned()
            .collect()
    };
    let mut diff: Vec<&str> = fields
        .iter()
        .filter(|(_, same)| !same)
        .map(|(n, _)| *n)
        .collect();
    if strip(&ta.flags) != strip(&tb.flags) && !diff.contains(&options.as_str()) {
        diff.push(options.as_str());
    }
    if a.seeds != b.seeds {
        diff.push("seeds");
    }
    if a.calls != b.calls && (a.instructions.is_empty() || b.instructions.is_empty()) {
        diff.push("calls counted");
    }
    (!diff.is_empty()).then(|| format!("testbed differs: {}", diff.join(", ")))
}

/// Compare the counts of `a` and `b` (`map`: A label → B label).
pub fn compare_counts(
    a: &[CountEvidence],
    b: &[CountEvidence],
    threshold: f64,
    map: &[(String, String)],
) -> CountComparison {
    let key = |e: &CountEvidence| format!("{}/{} {}", e.candidate, e.label, e.operation);
    let b_label = |l: &str| -> Option<String> {
        if map.is_empty() {
            Some(l.to_string())
        } else {
            map.iter().find(|(x, _)| x == l).map(|(_, y)| y.clone())
        }
    };
    let mut rows = Vec::new();
    let mut only_a = Vec::new();
    let mut used_b = vec![false; b.len()];
    for x in a {
        let Some(bl) = b_label(&x.label) else {
            continue;
        };
        let found = b.iter().enumerate().find(|(_, y)| {
            y.candidate == x.candidate && y.label == bl && y.operation == x.operation
        });
        let Some((j, y)) = found else {
            only_a.push(key(x));
            continue;
        };
        used_b[j] = true;
        // Over the calls both sides counted (the same seeded inputs, call by call).
        let k = x.instructions.len().min(y.instructions.len());
        let (ia, ib) = (x.instructions_over(k), y.instructions_over(k));
        let mut row = CountRow {
            instance: format!("{}/{}", x.candidate, x.label),
            instance_b: format!("{}/{}", y.candidate, y.label),
            operation: x.operation.clone(),
            a: ia,
            b: ib,
            ratio: None,
            verdict: String::new(),
            note: String::new(),
        };
        match (ia, ib) {
            (Some(va), Some(vb)) => match incomparable(x, y) {
                Some(why) => {
                    row.verdict = "not comparable".into();
                    row.note = why;
                }
                None => {
                    let r = if va == vb { 1.0 } else { vb / va };
                    row.ratio = Some(r);
                    row.verdict = if va == vb {
                        "no change".into()
                    } else if r >= 1.0 + threshold {
                        "slower".into()
                    } else if r <= 1.0 - threshold {
                        "faster".into()
                    } else {
                        "no change".into()
                    };
                    row.note = if va == vb {
                        "identical counts".into()
                    } else {
                        format!("{:+} instructions per call", vb - va)
                    };
                }
            },
            _ => {
                row.verdict = "not counted".into();
                let why = |e: &CountEvidence| {
                    format!("{} {}", e.status, e.reason.as_deref().unwrap_or_default())
                };
                row.note = if ia.is_none() {
                    format!("A: {}", why(x))
                } else {
                    format!("B: {}", why(y))
                };
            }
        }
        rows.push(row);
    }
    let only_b = b
        .iter()
        .zip(&used_b)
        .filter(|(y, used)| !**used && (map.is_empty() || map.iter().any(|(_, bl)| *bl == y.label)))
        .map(|(y, _)| key(y))
        .collect();
    let method_of = |v: &[CountEvidence]| -> Vec<String> {
        let mut m: Vec<String> = v
            .iter()
            .filter(|e| e.status == "counted")
            .map(|e| {
                e.method
                    .as_deref()
                    .and_then(|m| m.split_whitespace().next())
                    .unwrap_or("callgrind")
                    .to_string()
            })
            .collect();
        m.sort();
        m.dedup();
        m
    };
    let mut methods = method_of(a);
    methods.extend(method_of(b));
    methods.sort();
    methods.dedup();
    let method = if methods.is_empty() {
        "callgrind".to_string()
    } else {
        methods.join(" / ")
    };
    CountComparison {
        counter: "instructions".into(),
        threshold,
        method,
        rows,
        only_a,
        only_b,
    }
}

/// What a count row says of the timing verdict of the same operation: identical instructions
/// per call mean a timing change there is the code's layout or the host, not the work; a
/// changed count means the work changed, by its exact ratio.
pub fn work_note(r: &CountRow) -> Option<String> {
    match (r.verdict.as_str(), r.ratio) {
        ("not comparable" | "not counted", _) => {
            Some(format!("counts {}: {}", r.verdict, r.note))
        }
        (_, Some(1.0)) => Some(
            "instructions per call identical: a timing change here is the code's layout or the host, not the work"
                .into(),
        ),
        (_, Some(x)) => Some(format!(
            "the work changed: instructions per call ×{x:.4} ({})",
            r.note
        )),
        _ => None,
    }
}

/// Adds to every timing row of `c` what the counts of the same operation say ([`work_note`]).
pub fn attach(c: &mut crate::Comparison, counts: &CountComparison) {
    for r in &mut c.rows {
        let inst = format!("{}/{}", r.candidate, r.label_a);
        r.work = counts
            .rows
            .iter()
            .find(|k| k.instance == inst && k.operation == r.op)
            .and_then(work_note);
    }
}

/// The comparison as Markdown.
pub fn markdown(c: &CountComparison) -> String {
    let mut s = format!(
        "# Instruction counts B/A ({}, instructions per call; threshold {} %)\n\n\
         Counts are deterministic: the ratio is exact and A–A is 1. They measure work done, \
         not time (a vector instruction does more than a scalar one).\n\n\
         | instance | operation | A | B | B/A | verdict | note |\n|---|---|---|---|---|---|---|\n",
        c.method,
        pqperf_model::pyjson::py_float_repr(c.threshold * 100.0)
    );
    let num = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.1}"));
    for r in &c.rows {
        let inst = if r.instance == r.instance_b {
            r.instance.clone()
        } else {
            format!("{} → {}", r.instance, r.instance_b)
        };
        s.push_str(&format!(
            "| {inst} | {} | {} | {} | {} | {} | {} |\n",
            r.operation,
            num(r.a),
            num(r.b),
            r.ratio.map_or("–".to_string(), |x| format!("{x:.6}")),
            r.verdict,
            r.note
        ));
    }
    for (side, v) in [("A", &c.only_a), ("B", &c.only_b)] {
        if !v.is_empty() {
            s.push_str(&format!("\nOnly in {side}: {}\n", v.join(", ")));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use pqperf_model::count::Spread;

    fn ev(label: &str, instr: u64) -> CountEvidence {
        let s = Spread::of(&[instr]).unwrap();
        CountEvidence {
            schema: 1,
            candidate: "sign-90".into(),
            label: label.into(),
            operation: "sign".into(),
            status: "counted".into(),
            calls: 1,
            calls_run: 2,
            instructions_per_call: Some(s),
            estimated_cycles_per_call: Some(s),
            ..Default::default()
        }
    }

    #[test]
    fn a_a_is_exactly_no_change_and_a_change_has_its_exact_ratio() {
        let a = vec![ev("X", 100_000)];
        let c = compare_counts(&a, &a, DEFAULT_THRESHOLD, &[]);
        assert_eq!(c.rows[0].ratio, Some(1.0));
        assert_eq!(c.rows[0].verdict, "no change");
        assert!(!c.any_slower());
        let b = vec![ev("X", 101_000)];
        let c = compare_counts(&a, &b, DEFAULT_THRESHOLD, &[]);
        assert_eq!(c.rows[0].ratio, Some(1.01));
        assert_eq!(c.rows[0].verdict, "slower");
        assert!(c.any_slower());
        let c = compare_counts(&b, &a, DEFAULT_THRESHOLD, &[]);
        assert_eq!(c.rows[0].verdict, "faster");
        // Below the threshold: the exact change is said, the verdict is no change.
        let c = compare_counts(&a, &[ev("X", 100_100)], DEFAULT_THRESHOLD, &[]);
        assert_eq!(
            (c.rows[0].verdict.as_str(), c.rows[0].note.as_str()),
            ("no change", "+100 instructions per call")
        );
        // Another testbed: not comparable.
        let mut other = ev("X", 100_000);
        other.testbed.compiler = "gcc 14".into();
        let c = compare_counts(&a, &[other], DEFAULT_THRESHOLD, &[]);
        assert_eq!(c.rows[0].verdict, "not comparable");
        assert!(c.rows[0].note.contains("compiler"), "{:?}", c.rows[0]);
        // Emulated counts: the message names the tool of the evidence, not valgrind.
        let qemu = |version: &str| {
            let mut e = ev("X", 100_000);
            e.method = Some("qemu-tcg-plugin (qemu-aarch64 version 7.2.22)".into());
            e.architecture = Some("aarch64".into());
            e.testbed.valgrind = version.into();
            e
        };
        let c = compare_counts(&[qemu("7.2.22")], &[qemu("8.0")], DEFAULT_THRESHOLD, &[]);
        assert_eq!(
            c.rows[0].note, "testbed differs: qemu-tcg-plugin",
            "{:?}",
            c.rows[0]
        );
        assert!(!c.rows[0].note.contains("valgrind"));
        assert!(markdown(&c).starts_with("# Instruction counts B/A (qemu-tcg-plugin,"));
        let c = compare_counts(&a, &[qemu("7.2.22")], DEFAULT_THRESHOLD, &[]);
        assert!(
            c.rows[0]
                .note
                .starts_with("testbed differs: method, valgrind / qemu-tcg-plugin"),
            "{:?}",
            c.rows[0]
        );
        assert!(markdown(&c).starts_with("# Instruction counts B/A (callgrind / qemu-tcg-plugin,"));
        // --map pairs labels.
        let c = compare_counts(
            &a,
            &[ev("Y", 100_000)],
            DEFAULT_THRESHOLD,
            &[("X".into(), "Y".into())],
        );
        assert_eq!(c.rows[0].verdict, "no change");
        assert!(markdown(&c).contains("sign-90/X → sign-90/Y"));
    }
}

#[cfg(test)]
mod work_tests {
    use super::*;

    fn row(verdict: &str, ratio: Option<f64>) -> CountRow {
        CountRow {
            instance: "sign-90/T".into(),
            instance_b: "sign-90/T".into(),
            operation: "sign".into(),
            a: Some(100.0),
            b: ratio.map(|r| 100.0 * r),
            ratio,
            verdict: verdict.into(),
            note: "+20 instructions per call".into(),
        }
    }

    #[test]
    fn identical_counts_say_layout_or_host_and_changed_counts_say_work() {
        let same = work_note(&row("no change", Some(1.0))).unwrap();
        assert!(same.contains("layout or the host"), "{same}");
        let more = work_note(&row("slower", Some(1.2))).unwrap();
        assert!(
            more.starts_with("the work changed") && more.contains("×1.2000"),
            "{more}"
        );
        let small = work_note(&row("no change", Some(1.001))).unwrap();
        assert!(small.starts_with("the work changed"), "{small}");
        let not = work_note(&row("not comparable", None)).unwrap();
        assert!(not.starts_with("counts not comparable"), "{not}");
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use crate::{Options, Side, Verdict, compare};
    use pqperf_model::count::Spread;
    use pqperf_model::record::{PqperfRecordExt, Record};
    use pqperf_model::robust::Robust;

    /// A timing record of `op` (library `lib`): 5 processes of 400 calls around `work`
    /// ticks, ±2 % by a fixed pattern.
    fn rec(lib: &str, op: &str, work: f64) -> Record {
        let trials: Vec<Vec<u64>> = (0..5u64)
            .map(|p| {
                (0..400u64)
                    .map(|i| (work * (1.0 + 0.0004 * ((p * 7 + i * 13) % 50) as f64)) as u64)
                    .collect()
            })
            .collect();
        Record {
            candidate: "sign-90".into(),
            label: "T".into(),
            operation: op.into(),
            median_trial_seconds: Some(work / 2.5e9),
            library_sha256: Some(lib.into()),
            pqperf: Some(PqperfRecordExt {
                robust: Robust::compute(&trials, op, 2.5e9),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn side(recs: Vec<Record>) -> Side {
        Side {
            shown: "x".into(),
            system_dir: "x".into(),
            records: recs,
            noise_floor: Some(0.0),
        }
    }

    fn count(op: &str, instr: u64) -> CountEvidence {
        let s = Spread::of(&[instr, instr]).unwrap();
        CountEvidence {
            schema: 1,
            candidate: "sign-90".into(),
            label: "T".into(),
            operation: op.into(),
            status: "counted".into(),
            calls: 2,
            calls_run: 3,
            instructions: vec![instr, instr],
            instructions_per_call: Some(s),
            estimated_cycles_per_call: Some(s),
            ..Default::default()
        }
    }

    #[test]
    fn a_timing_change_with_identical_counts_is_layout_or_host_not_the_work() {
        // Synthetic records: sign 10 % slower in B, keygen unchanged; B's library differs.
        let a = side(vec![
            rec("a", "keygen", 100_000.0),
            rec("a", "sign", 200_000.0),
        ]);
        let b = side(vec![
            rec("b", "keygen", 100_000.0),
            rec("b", "sign", 220_000.0),
        ]);
        let mut c = compare(&a, &b, &Options::default()).unwrap();
        let sign = |c: &crate::Comparison| c.rows.iter().find(|r| r.op == "sign").unwrap().clone();
        assert_eq!(sign(&c).verdict, Verdict::Slower, "{:?}", sign(&c));
        // Both sides counted, the counts identical: the slower timing is the layout or the
        // host; the timing verdict itself stays (a layout change is a cost the user pays).
        let ca = vec![count("keygen", 14_319), count("sign", 18_274)];
        let cc = compare_counts(&ca, &ca, DEFAULT_THRESHOLD, &[]);
        attach(&mut c, &cc);
        let s = sign(&c);
        assert_eq!(s.verdict, Verdict::Slower);
        let w = s.work.as_deref().unwrap();
        assert!(
            w.contains("identical") && w.contains("layout or the host, not the work"),
            "{w}"
        );
        let md = crate::render::markdown(&c);
        assert!(md.contains("layout or the host"), "{md}");
        let json = serde_json::to_value(&c).unwrap();
        assert!(json["rows"].as_array().unwrap().iter().any(|r| {
            r["work"]
                .as_str()
                .is_some_and(|w| w.contains("layout or the host"))
        }));
        // The counts changed by the same 10 %: the work changed, with its exact ratio.
        let cb = vec![count("keygen", 14_319), count("sign", 20_101)];
        let cc = compare_counts(&ca, &cb, DEFAULT_THRESHOLD, &[]);
        attach(&mut c, &cc);
        let w = sign(&c).work.unwrap();
        assert!(
            w.starts_with("the work changed") && w.contains("×1.1000"),
            "{w}"
        );
        // Only one side counted: nothing is said of the work.
        let cc = compare_counts(&ca, &[], DEFAULT_THRESHOLD, &[]);
        attach(&mut c, &cc);
        assert!(sign(&c).work.is_none());
    }
}
