//! Reading callgrind's output (format version 1, `--combine-dumps=yes`): one [`Part`] per
//! dump, each with its trigger, its `totals:` line, the self cost of every function and the
//! inclusive cost of every call arc (`calls=` lines). Name compression (`(12) name`, then
//! `(12)`) is resolved per kind (objects, files, functions), across parts, as callgrind
//! writes it; recursion levels (`name'2`) are folded into the base name.

use std::collections::{BTreeMap, HashMap};

/// The events of a profile (`events:` line), with the index of the ones pqperf uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Events {
    /// Event names in callgrind's order (`Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw`).
    pub names: Vec<String>,
}

impl Events {
    /// The index of event `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The value of event `name` in `costs` (0 when the event is absent).
    pub fn get(&self, costs: &[u64], name: &str) -> u64 {
        self.index(name)
            .and_then(|i| costs.get(i).copied())
            .unwrap_or(0)
    }
}

/// One function's own cost in a part.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FnCost {
    /// The object it belongs to (`ob=`).
    pub object: String,
    /// Its own (self) cost per event.
    pub self_cost: Vec<u64>,
}

/// One call arc (caller → callee) in a part: how often, and the inclusive cost of the calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arc {
    /// Calls.
    pub calls: u64,
    /// Inclusive cost of those calls per event.
    pub cost: Vec<u64>,
}

/// One dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Part {
    /// `desc: Trigger: …` (`--dump-after=sig_sign`, `Program termination`).
    pub trigger: String,
    /// The part's `totals:` (else `summary:`) per event.
    pub totals: Vec<u64>,
    /// Functions by base name.
    pub functions: BTreeMap<String, FnCost>,
    /// Call arcs by (caller, callee) base names.
    pub arcs: BTreeMap<(String, String), Arc>,
}

impl Part {
    /// Cost of event `i` in the totals.
    pub fn total(&self, i: usize) -> u64 {
        self.totals.get(i).copied().unwrap_or(0)
    }

    /// Whether anything was collected in this part.
    pub fn collected(&self) -> bool {
        self.totals.iter().any(|&c| c > 0)
    }
}

/// A whole callgrind output file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// `creator:` (`callgrind-3.19.0`).
    pub creator: String,
    /// The events.
    pub events: Events,
    /// The parts in file order.
    pub parts: Vec<Part>,
}

/// A line the parser could not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("callgrind output line {line}: {what}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub what: String,
}

/// The base name of a function entry: recursion suffixes (`'2`) dropped.
pub fn base(name: &str) -> &str {
    match name.rfind('\'') {
        Some(i) if name[i + 1..].chars().all(|c| c.is_ascii_digit()) && i + 1 < name.len() => {
            &name[..i]
        }
        _ => name,
    }
}

/// Name tables of the three compressed kinds.
#[derive(Default)]
struct Names {
    tables: [HashMap<String, String>; 3],
}

impl Names {
    /// Resolve `(id) name` / `(id)` / `name` in table `kind` (0 objects, 1 files, 2 functions).
    fn resolve(&mut self, kind: usize, raw: &str, line: usize) -> Result<String, ParseError> {
        let raw = raw.trim();
        let Some(rest) = raw.strip_prefix('(') else {
            return Ok(raw.to_string());
        };
        let (id, name) = rest.split_once(')').ok_or(ParseError {
            line,
            what: format!("unterminated name id {raw:?}"),
        })?;
        let name = name.trim();
        if name.is_empty() {
            self.tables[kind]
                .get(id)
                .cloned()
                .ok_or_else(|| ParseError {
                    line,
                    what: format!("name id ({id}) used before it was defined"),
                })
        } else {
            self.tables[kind].insert(id.to_string(), name.to_string());
            Ok(name.to_string())
        }
    }
}

fn numbers(s: &str, line: usize) -> Result<Vec<u64>, ParseError> {
    s.split_whitespace()
        .map(|t| {
            t.parse::<u64>().map_err(|_| ParseError {
                line,
                what: format!("not a count: {t:?}"),
            })
        })
        .collect()
}

fn add(into: &mut Vec<u64>, v: &[u64]) {
    if into.len() < v.len() {
        into.resize(v.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(v) {
        *a += b;
    }
}

/// Whether `line` is a cost line: a position (number, `+n`, `-n` or `*`) then counts.
fn is_cost_line(line: &str) -> bool {
    line.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-' || c == '*')
}

/// Parse callgrind output text (one file; `--combine-dumps=yes` gives every dump in it).
pub fn parse(text: &str) -> Result<Profile, ParseError> {
    let mut prof = Profile::default();
    let mut names = Names::default();
    let mut part: Option<Part> = None;
    let mut object = String::new();
    let mut func = String::new();
    let mut callee: Option<String> = None;
    let mut callee_object: Option<String> = None;
    // After a `calls=` line: the next cost line is the arc's inclusive cost.
    let mut pending_calls: Option<u64> = None;
    let mut saw_header = false;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end();
        if line.is_empty() || line.starts_with('#') {
            if line.starts_with("# callgrind format") {
                saw_header = true;
            }
            continue;
        }
        if let Some(calls) = pending_calls.take() {
            if !is_cost_line(line) {
                return Err(ParseError {
                    line: n,
                    what: "a calls= line not followed by its cost line".into(),
                });
            }
            let mut it = line.splitn(2, char::is_whitespace);
            let _pos = it.next();
            let cost = numbers(it.next().unwrap_or(""), n)?;
            let p = part.get_or_insert_with(Part::default);
            let to = callee.take().ok_or(ParseError {
                line: n,
                what: "calls= without cfn=".into(),
            })?;
            let to_object = callee_object.take().unwrap_or_else(|| object.clone());
            p.functions.entry(to.clone()).or_insert_with(|| FnCost {
                object: to_object,
                ..Default::default()
            });
            let arc = p.arcs.entry((func.clone(), to)).or_default();
            arc.calls += calls;
            add(&mut arc.cost, &cost);
            continue;
        }
        if is_cost_line(line) {
            let mut it = line.splitn(2, char::is_whitespace);
            let _pos = it.next();
            let cost = numbers(it.next().unwrap_or(""), n)?;
            let p = part.get_or_insert_with(Part::default);
            let f = p.functions.entry(func.clone()).or_insert_with(|| FnCost {
                object: object.clone(),
                ..Default::default()
            });
            add(&mut f.self_cost, &cost);
            continue;
        }
        let (key, value) = match line.split_once([':', '=']) {
            Some(kv) => kv,
            None => {
                return Err(ParseError {
                    line: n,
                    what: format!("unknown line {line:?}"),
                });
            }
        };
        match key {
            "version" if value.trim() != "1" => {
                return Err(ParseError {
                    line: n,
                    what: format!("format version {} (1 expected)", value.trim()),
                });
            }
            "creator" => prof.creator = value.trim().to_string(),
            "part" => {
                if let Some(p) = part.take() {
                    prof.parts.push(p);
                }
                part = Some(Part::default());
            }
            "events" => {
                let ev: Vec<String> = value.split_whitespace().map(str::to_string).collect();
                if !prof.events.names.is_empty() && prof.events.names != ev {
                    return Err(ParseError {
                        line: n,
                        what: "the events change between parts".into(),
                    });
                }
                prof.events.names = ev;
            }
            "desc" => {
                if let Some(t) = value.trim().strip_prefix("Trigger:") {
                    part.get_or_insert_with(Part::default).trigger = t.trim().to_string();
                }
            }
            "totals" => {
                part.get_or_insert_with(Part::default).totals = numbers(value, n)?;
            }
            "summary" => {
                let p = part.get_or_insert_with(Part::default);
                if p.totals.is_empty() {
                    p.totals = numbers(value, n)?;
                }
            }
            "ob" => object = names.resolve(0, value, n)?,
            "cob" => callee_object = Some(names.resolve(0, value, n)?),
            "fl" | "fi" | "fe" | "cfi" | "cfl" => {
                names.resolve(1, value, n)?;
            }
            "fn" => {
                func = base(&names.resolve(2, value, n)?).to_string();
                callee = None;
                part.get_or_insert_with(Part::default)
                    .functions
                    .entry(func.clone())
                    .or_insert_with(|| FnCost {
                        object: object.clone(),
                        ..Default::default()
                    });
            }
            "cfn" => callee = Some(base(&names.resolve(2, value, n)?).to_string()),
            "calls" => {
                let count = value.split_whitespace().next().unwrap_or("");
                pending_calls = Some(count.parse().map_err(|_| ParseError {
                    line: n,
                    what: format!("calls= without a count: {value:?}"),
                })?);
            }
            "jump" | "jcnd" | "pid" | "cmd" | "thread" | "positions" | "timeframe (BB)" => {}
            _ => {}
        }
    }
    if pending_calls.is_some() {
        return Err(ParseError {
            line: text.lines().count(),
            what: "the file ends after a calls= line".into(),
        });
    }
    if let Some(p) = part.take() {
        prof.parts.push(p);
    }
    if !saw_header && prof.events.names.is_empty() {
        return Err(ParseError {
            line: 1,
            what: "not callgrind output (no header, no events: line)".into(),
        });
    }
    if prof.events.names.is_empty() {
        return Err(ParseError {
            line: 1,
            what: "no events: line".into(),
        });
    }
    Ok(prof)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Two dumps written by hand in callgrind's format: `op` (the counted function) calls
    /// `sm3_compress` twice and `memcpy` once; names compressed, recursion suffix on the
    /// second part's `op'2`, the second part defines nothing new.
    pub(crate) const SAMPLE: &str = "# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 42
cmd:  ./driver lib.so sign
part: 1

desc: I1 cache: 32768 B, 64 B, 8-way associative
desc: Trigger: --dump-after=op

positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 1000 300 100 10 5 1 4 2 0

ob=(1) ./driver
fl=(1) main.rs
fn=(1) driver_loop
cob=(2) ./lib.so
cfi=(2) sig.c
cfn=(2) op
calls=1 12
5 1000 300 100 10 5 1 4 2 0

ob=(2)
fl=(2)
fn=(2)
12 100 20 10 2 1 0 1 0
+3 50 10
cob=(3) /lib/libc.so.6
cfi=(3) memcpy.S
cfn=(3) memcpy
calls=1 0
13 50 25 25 1 1 1 1 0
cfi=(4) sm3.c
cfn=(4) sm3_compress
calls=2 7
14 800 245 65 7 3 0 3 2

ob=(3)
fl=(3)
fn=(3)
0 50 25 25 1 1 1 1

ob=(2)
fl=(4)
fn=(4)
7 800 245 65 7 3 0 3 2
totals: 1000 300 100 10 5 1 4 2 0
part: 2
desc: Trigger: --dump-after=op
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 1001 300 100

ob=(2)
fl=(2)
fn=(5) op'2
12 151 20 10
cfn=(4)
calls=2 7
14 850 280 90

fn=(4)
7 850 280 90
totals: 1001 300 100
part: 3
desc: Trigger: Program termination
summary: 0
totals: 0
";

    #[test]
    fn parses_parts_functions_and_arcs() {
        let p = parse(SAMPLE).unwrap();
        assert_eq!(p.creator, "callgrind-3.19.0");
        assert_eq!(p.events.names.len(), 9);
        assert_eq!(p.parts.len(), 3);
        let a = &p.parts[0];
        assert_eq!(a.trigger, "--dump-after=op");
        assert_eq!(a.totals, vec![1000, 300, 100, 10, 5, 1, 4, 2, 0]);
        // Self cost of `op`: two cost lines (the second with omitted trailing events).
        assert_eq!(
            a.functions["op"].self_cost,
            vec![150, 30, 10, 2, 1, 0, 1, 0]
        );
        assert_eq!(a.functions["op"].object, "./lib.so");
        assert_eq!(a.functions["memcpy"].object, "/lib/libc.so.6");
        let arc = &a.arcs[&("op".to_string(), "sm3_compress".to_string())];
        assert_eq!((arc.calls, arc.cost[0]), (2, 800));
        assert_eq!(
            a.arcs[&("driver_loop".to_string(), "op".to_string())].cost[0],
            1000
        );
        // Part 2 reuses the compressed names and folds the recursion suffix.
        let b = &p.parts[1];
        assert_eq!(b.totals, vec![1001, 300, 100]);
        assert_eq!(b.functions["op"].self_cost[0], 151);
        assert_eq!(
            b.arcs[&("op".to_string(), "sm3_compress".to_string())].cost[0],
            850
        );
        assert!(!p.parts[2].collected());
        assert_eq!(p.events.get(&a.totals, "DLmr"), 2);
    }

    #[test]
    fn bad_input_names_the_line() {
        let e = parse("# callgrind format\nversion: 1\nevents: Ir\nfn=(7)\n").unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.what.contains("(7)"), "{e}");
        let e = parse("# callgrind format\nversion: 1\nevents: Ir\nfn=a\ncfn=b\ncalls=1 0\nfn=c\n")
            .unwrap_err();
        assert_eq!(e.line, 7);
        let e = parse("# callgrind format\nversion: 1\nevents: Ir\nfn=a\n1 x\n").unwrap_err();
        assert!(e.what.contains("\"x\""), "{e}");
        assert!(parse("hello\n").is_err());
        assert_eq!(base("f'2"), "f");
        assert_eq!(base("operator'"), "operator'");
    }
}
