//! From a parsed callgrind profile to the figures of the evidence: which parts are the
//! counted calls, per-call spreads, the cache figures and the estimated cycles, the
//! per-function table and the class attribution.

use std::collections::BTreeMap;

use pqperf_model::count::{CountFunction, PerCall, Spread};
use serde_json::{Map, Value};

use crate::callgrind::{Events, Part, Profile};
use crate::classify::classify;

/// The counted figures of one operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    /// Calls counted.
    pub calls: u64,
    /// Calls of the function in the whole process.
    pub calls_run: u64,
    /// Instructions per counted call, in order.
    pub instructions: Vec<u64>,
    /// Instructions per call.
    pub instructions_per_call: Spread,
    /// Estimated cycles per call.
    pub estimated_cycles_per_call: Spread,
    /// Cache figures, mean per call.
    pub per_call: PerCall,
    /// Functions, largest inclusive cost first.
    pub functions: Vec<CountFunction>,
    /// Class → instructions per call.
    pub classes: Map<String, Value>,
}

/// Estimated cycles of one cost vector (`callgrind-estimated-cycles-v1`).
pub fn estimated_cycles(ev: &Events, c: &[u64]) -> u64 {
    let g = |n: &str| ev.get(c, n);
    let ram = g("ILmr") + g("DLmr") + g("DLmw");
    let l1_miss = g("I1mr") + g("D1mr") + g("D1mw");
    let ll_hits = l1_miss.saturating_sub(ram);
    let l1_hits = (g("Ir") + g("Dr") + g("Dw")).saturating_sub(ll_hits + ram);
    l1_hits + 5 * ll_hits + 35 * ram
}

/// The parts that are calls of the counted function: every part dumped after it
/// (`--dump-after=<symbol>`) that collected something, in order.
pub fn call_parts<'a>(p: &'a Profile, symbol: &str) -> Vec<&'a Part> {
    let trigger = format!("--dump-after={symbol}");
    p.parts
        .iter()
        .filter(|x| x.trigger == trigger && x.collected())
        .collect()
}

/// The figures of the timed calls: of the calls of `t.last` in the process, the first
/// `t.preparation` were made by the driver's preparation and the last `t.memory_pass` by its
/// memory pass; the `iters` in between are the counted ones. Err names what does not fit.
pub fn analyse(p: &Profile, t: &crate::Target, iters: usize) -> Result<Counted, String> {
    let (symbol, preparation) = (t.dump.as_str(), t.preparation);
    let parts = call_parts(p, symbol);
    let stray: Vec<&Part> = p
        .parts
        .iter()
        .filter(|x| x.collected() && !parts.iter().any(|y| std::ptr::eq(*y, *x)))
        .collect();
    if let Some(s) = stray.first() {
        return Err(format!(
            "a profile part outside the calls of {symbol} collected {} instructions (trigger {:?})",
            s.total(0),
            s.trigger
        ));
    }
    if parts.len() != preparation + iters + t.memory_pass {
        return Err(format!(
            "{} calls of {symbol} in the process, {} expected ({preparation} in the preparation, {iters} counted, {} in the memory pass)",
            parts.len(),
            preparation + iters + t.memory_pass,
            t.memory_pass
        ));
    }
    let counted = &parts[preparation..preparation + iters];
    let ev = &p.events;
    let ir = ev.index("Ir").ok_or("the profile has no Ir event")?;
    let n = counted.len() as f64;
    let instructions: Vec<u64> = counted.iter().map(|x| x.total(ir)).collect();
    let cycles: Vec<u64> = counted
        .iter()
        .map(|x| estimated_cycles(ev, &x.totals))
        .collect();
    let mut sums = vec![0u64; ev.names.len()];
    for x in counted {
        for (i, s) in sums.iter_mut().enumerate() {
            *s += x.total(i);
        }
    }
    let mean = |names: &[&str]| -> f64 {
        names
            .iter()
            .map(|nm| ev.index(nm).map_or(0, |i| sums[i]))
            .sum::<u64>() as f64
            / n
    };
    let mut events = Map::new();
    for (i, name) in ev.names.iter().enumerate() {
        events.insert(name.clone(), Value::from(sums[i] as f64 / n));
    }
    let per_call = PerCall {
        data_reads: mean(&["Dr"]),
        data_writes: mean(&["Dw"]),
        l1_misses: mean(&["I1mr", "D1mr", "D1mw"]),
        ll_misses: mean(&["ILmr", "DLmr", "DLmw"]),
        events,
    };
    let (functions, classes) = functions_and_classes(counted, ir, &t.symbols);
    Ok(Counted {
        calls: iters as u64,
        calls_run: parts.len() as u64,
        instructions_per_call: Spread::of(&instructions).expect("iters > 0"),
        estimated_cycles_per_call: Spread::of(&cycles).expect("iters > 0"),
        instructions,
        per_call,
        functions,
        classes,
    })
}

/// Per function over `parts`: self and inclusive Ir (inclusive = the calls into it from
/// other functions, at least its self cost), calls; and per class the instructions of calls
/// from the candidate's code into it (the outermost classified frame), the candidate's share
/// being the rest. Every figure is per counted call.
fn functions_and_classes(
    parts: &[&Part],
    ir: usize,
    roots: &[String],
) -> (Vec<CountFunction>, Map<String, Value>) {
    let n = parts.len() as f64;
    let is_root = |name: &str| roots.iter().any(|r| r == name);
    let class_of = |name: &str, obj: &str| -> &'static str {
        if is_root(name) {
            "candidate"
        } else {
            classify(name, obj)
        }
    };
    // name → (object, self, inclusive in, calls in)
    let mut f: BTreeMap<String, (String, u64, u64, u64)> = BTreeMap::new();
    let mut by_class: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut total = 0u64;
    for p in parts {
        total += p.total(ir);
        // Only the counted function and what it reaches: the driver's frames above it carry
        // its cost on their arcs too.
        let below = reachable(p, roots, &|_| true);
        // The candidate's own code: what the counted function reaches through candidate
        // functions only (a helper's internals stay inside the helper's class).
        let own = reachable(p, roots, &|to| {
            let obj = p.functions.get(to).map(|c| c.object.as_str()).unwrap_or("");
            class_of(to, obj) == "candidate"
        });
        for (name, c) in p
            .functions
            .iter()
            .filter(|(n, _)| below.contains(n.as_str()))
        {
            let e = f
                .entry(name.clone())
                .or_insert_with(|| (c.object.clone(), 0, 0, 0));
            e.1 += c.self_cost.get(ir).copied().unwrap_or(0);
        }
        for ((from, to), a) in &p.arcs {
            // With several counted functions (a whole key exchange) each one's inclusive cost
            // and calls are on the arcs from the driver's frames into it.
            if roots.len() > 1 && is_root(to) && !below.contains(from.as_str()) {
                if let Some(e) = f.get_mut(to) {
                    e.2 += a.cost.get(ir).copied().unwrap_or(0);
                    e.3 += a.calls;
                }
                continue;
            }
            if from == to || !below.contains(from.as_str()) {
                continue;
            }
            let cost = a.cost.get(ir).copied().unwrap_or(0);
            let obj_of = |nm: &str| p.functions.get(nm).map(|c| c.object.as_str()).unwrap_or("");
            if let Some(e) = f.get_mut(to) {
                e.2 += cost;
                e.3 += a.calls;
            }
            let (cf, ct) = (class_of(from, obj_of(from)), class_of(to, obj_of(to)));
            if cf == "candidate" && ct != "candidate" && own.contains(from.as_str()) {
                *by_class.entry(ct).or_default() += cost;
            }
        }
    }
    // One counted function: its inclusive cost is everything collected (its callers' arcs are
    // left out above), and each part is one call of it.
    if let [symbol] = roots
        && let Some(e) = f.get_mut(symbol)
    {
        e.2 = total;
        e.3 = parts.len() as u64;
    }
    let mut functions: Vec<CountFunction> = f
        .into_iter()
        .filter(|(_, (_, s, i, _))| *s > 0 || *i > 0)
        .map(|(name, (obj, s, i, calls))| CountFunction {
            class: class_of(&name, &obj).to_string(),
            inclusive_per_call: i.max(s) as f64 / n,
            self_per_call: s as f64 / n,
            calls_per_call: calls as f64 / n,
            function: name,
        })
        .collect();
    functions.sort_by(|a, b| {
        b.inclusive_per_call
            .total_cmp(&a.inclusive_per_call)
            .then(a.function.cmp(&b.function))
    });
    let mut classes = Map::new();
    let attributed: u64 = by_class.values().sum();
    for c in pqperf_model::count::CLASSES {
        let v = if *c == "candidate" {
            total.saturating_sub(attributed)
        } else {
            by_class.get(c).copied().unwrap_or(0)
        };
        if v > 0 {
            classes.insert(c.to_string(), Value::from(v as f64 / n));
        }
    }
    (functions, classes)
}

/// The functions the `roots` reach through the part's call arcs into functions that `follow`
/// accepts, the roots included.
fn reachable<'a>(
    p: &'a Part,
    roots: &'a [String],
    follow: &dyn Fn(&str) -> bool,
) -> std::collections::BTreeSet<&'a str> {
    let mut seen: std::collections::BTreeSet<&str> = roots.iter().map(String::as_str).collect();
    let mut todo: Vec<&str> = seen.iter().copied().collect();
    while let Some(x) = todo.pop() {
        for (from, to) in p.arcs.keys() {
            if from == x && follow(to) && seen.insert(to.as_str()) {
                todo.push(to.as_str());
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_of_the_hand_written_profile() {
        let p = crate::callgrind::parse(crate::callgrind::tests::SAMPLE).unwrap();
        // Two calls of `op`, no preparation call, the last is the memory pass.
        let t = |prep| crate::Target {
            symbols: vec!["op".into()],
            last: "op".into(),
            dump: "op".into(),
            preparation: prep,
            memory_pass: 1,
        };
        let c = analyse(&p, &t(0), 1).unwrap();
        assert_eq!(c.instructions, vec![1000]);
        assert_eq!(c.calls_run, 2);
        // ram = 4+2+0; l1 misses = 10+5+1 → ll hits 10; l1 hits = 1400 − 16.
        assert_eq!(c.estimated_cycles_per_call.min, 1384 + 50 + 210);
        assert_eq!(c.per_call.l1_misses, 16.0);
        assert_eq!(c.per_call.ll_misses, 6.0);
        assert_eq!(c.classes["sm3"], 800.0);
        assert_eq!(c.classes["libc"], 50.0);
        assert_eq!(c.classes["candidate"], 150.0);
        let op = c.functions.iter().find(|f| f.function == "op").unwrap();
        assert_eq!((op.inclusive_per_call, op.self_per_call), (1000.0, 150.0));
        let sm3 = &c.functions[1];
        assert_eq!(
            (sm3.function.as_str(), sm3.calls_per_call),
            ("sm3_compress", 2.0)
        );
        // The wrong number of calls is said, not guessed around.
        let e = analyse(&p, &t(1), 1).unwrap_err();
        assert!(
            e.contains("2 calls of op in the process, 3 expected"),
            "{e}"
        );
    }
}
