//! Object-file analysis with the `object` crate: defined and undefined symbols per object
//! (also inside static archives), a symbol-level call/reference graph built from relocations,
//! reachability from API entry points, and constant scans for well-known symmetric primitives.
//!
//! Graph rules (relocatable ELF objects as gcc writes them):
//! * a node is a defined symbol with a size (function or data object) of one object;
//! * a relocation inside a node's byte range is an edge to its target: an undefined symbol is
//!   resolved by name against the global definitions of all inputs (objects before archive
//!   members, first definition wins, as the linker does); a section symbol plus addend is
//!   mapped to the node containing that offset (also tried with `+4` for PC-relative forms);
//! * calls between functions of one section need no relocation when the callee is local
//!   (`static`), so a reached node also reaches every *local* function node of its section
//!   (a file-level over-approximation for static helpers; global callees always carry a
//!   relocation under `-fPIC`).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSection, ObjectSymbol, RelocationTarget, SectionIndex, SymbolKind};

use crate::ProfileError;

/// One relocatable object (a `.o` file or an archive member).
#[derive(Debug, Clone)]
pub struct ObjInfo {
    /// `path` or `archive.a(member.o)`.
    pub name: String,
    /// True for a member of a static archive (linked only when needed).
    pub from_archive: bool,
    /// Global (or weak) defined symbols.
    pub defined: BTreeSet<String>,
    /// Undefined symbols referenced.
    pub undefined: BTreeSet<String>,
    nodes: Vec<Node>,
    /// Section data of allocated sections, for constant scans (by section index).
    section_data: HashMap<usize, Vec<u8>>,
}

#[derive(Debug, Clone)]
struct Node {
    name: String,
    global: bool,
    is_func: bool,
    section: usize,
    start: u64,
    end: u64,
    /// Edges: (target name if undefined/global, or local node index).
    edges: Vec<Edge>,
}

#[derive(Debug, Clone)]
enum Edge {
    Global(String),
    Local(usize),
}

/// Read all objects of the given inputs (`.o` files and `.a` archives).
pub fn read_inputs(paths: &[PathBuf]) -> Result<Vec<ObjInfo>, ProfileError> {
    let mut out = Vec::new();
    for p in paths {
        let data = std::fs::read(p).map_err(|e| ProfileError::io(p, e))?;
        if data.starts_with(b"!<arch>\n") {
            let ar = ArchiveFile::parse(&*data)
                .map_err(|e| ProfileError::Object(format!("{}: {e}", p.display())))?;
            for m in ar.members() {
                let m = m.map_err(|e| ProfileError::Object(format!("{}: {e}", p.display())))?;
                let mname = String::from_utf8_lossy(m.name()).to_string();
                let mdata = m
                    .data(&*data)
                    .map_err(|e| ProfileError::Object(format!("{}({mname}): {e}", p.display())))?;
                // Archives may hold non-object members (e.g. Rust metadata): skip those.
                if let Ok(o) = read_object(&format!("{}({mname})", p.display()), mdata, true) {
                    out.push(o);
                }
            }
        } else {
            out.push(read_object(&p.display().to_string(), &data, false)?);
        }
    }
    Ok(out)
}

fn read_object(name: &str, data: &[u8], from_archive: bool) -> Result<ObjInfo, ProfileError> {
    let file =
        object::File::parse(data).map_err(|e| ProfileError::Object(format!("{name}: {e}")))?;
    let mut defined = BTreeSet::new();
    let mut undefined = BTreeSet::new();
    let mut nodes: Vec<Node> = Vec::new();
    // symbol index -> node index (for defined sized symbols) / section index (section syms)
    let mut sym_node: HashMap<usize, usize> = HashMap::new();
    let mut sym_section: HashMap<usize, usize> = HashMap::new();
    let mut sym_undef: HashMap<usize, String> = HashMap::new();
    for sym in file.symbols() {
        let sname = sym.name().unwrap_or("").to_string();
        if sym.is_undefined() {
            if !sname.is_empty() {
                undefined.insert(sname.clone());
                sym_undef.insert(sym.index().0, sname);
            }
            continue;
        }
        if sym.kind() == SymbolKind::Section {
            if let Some(si) = sym.section_index() {
                sym_section.insert(sym.index().0, si.0);
            }
            continue;
        }
        let Some(si) = sym.section_index() else {
            continue;
        };
        let global = sym.is_global();
        if global && !sname.is_empty() {
            defined.insert(sname.clone());
        }
        if matches!(
            sym.kind(),
            SymbolKind::Text | SymbolKind::Data | SymbolKind::Unknown
        ) {
            let size = sym.size().max(1);
            sym_node.insert(sym.index().0, nodes.len());
            nodes.push(Node {
                name: sname,
                global,
                is_func: sym.kind() == SymbolKind::Text,
                section: si.0,
                start: sym.address(),
                end: sym.address() + size,
                edges: Vec::new(),
            });
        }
    }
    let mut section_data = HashMap::new();
    for section in file.sections() {
        let sidx = section.index().0;
        if let Ok(d) = section.data()
            && !d.is_empty()
            && section.kind() != object::SectionKind::Metadata
        {
            section_data.insert(sidx, d.to_vec());
        }
        // Relocations of this section attach to the nodes containing their offsets.
        for (offset, reloc) in section.relocations() {
            let from = nodes
                .iter()
                .position(|n| n.section == sidx && n.start <= offset && offset < n.end);
            let Some(from) = from else { continue };
            let edge = match reloc.target() {
                RelocationTarget::Symbol(si) => {
                    if let Some(n) = sym_undef.get(&si.0) {
                        Some(Edge::Global(n.clone()))
                    } else if let Some(&ni) = sym_node.get(&si.0) {
                        Some(Edge::Local(ni))
                    } else if let Some(&sec) = sym_section.get(&si.0) {
                        node_at(&nodes, sec, reloc.addend()).map(Edge::Local)
                    } else {
                        None
                    }
                }
                RelocationTarget::Section(SectionIndex(sec)) => {
                    node_at(&nodes, sec, reloc.addend()).map(Edge::Local)
                }
                _ => None,
            };
            if let Some(e) = edge {
                nodes[from].edges.push(e);
            }
        }
    }
    Ok(ObjInfo {
        name: name.to_string(),
        from_archive,
        defined,
        undefined,
        nodes,
        section_data,
    })
}

fn node_at(nodes: &[Node], section: usize, addend: i64) -> Option<usize> {
    for a in [addend, addend + 4] {
        if a < 0 {
            continue;
        }
        let a = a as u64;
        if let Some(i) = nodes
            .iter()
            .position(|n| n.section == section && n.start <= a && a < n.end)
        {
            return Some(i);
        }
    }
    None
}

/// Result of a reachability walk.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    /// Reached symbol names (defined nodes and unresolved externals), sorted.
    pub symbols: BTreeSet<String>,
    /// External names referenced but defined by no input (libc, the provider …).
    pub external: BTreeSet<String>,
    /// Objects with at least one reached node.
    pub objects: BTreeSet<String>,
    /// Constant signatures found in reached code and data, per object name.
    pub constants: BTreeMap<String, BTreeSet<&'static str>>,
    /// Reached defined symbols per object name.
    pub by_object: BTreeMap<String, BTreeSet<String>>,
}

/// Walk the graph from `entries` (global symbol names).
pub fn reach(objs: &[ObjInfo], entries: &[String]) -> Reach {
    // Global definitions: plain objects first, then archive members, first one wins.
    let mut defs: HashMap<&str, (usize, usize)> = HashMap::new();
    for pass_archive in [false, true] {
        for (oi, o) in objs.iter().enumerate() {
            if o.from_archive != pass_archive {
                continue;
            }
            for (ni, n) in o.nodes.iter().enumerate() {
                if n.global && !n.name.is_empty() {
                    defs.entry(n.name.as_str()).or_insert((oi, ni));
                }
            }
        }
    }
    let mut seen: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut queue: VecDeque<(usize, usize)> = VecDeque::new();
    let mut out = Reach::default();
    let push_name = |name: &str, queue: &mut VecDeque<(usize, usize)>, out: &mut Reach| {
        if let Some(&(oi, ni)) = defs.get(name) {
            queue.push_back((oi, ni));
        } else {
            out.external.insert(name.to_string());
            out.symbols.insert(name.to_string());
        }
    };
    for e in entries {
        push_name(e, &mut queue, &mut out);
    }
    let mut sections_expanded: BTreeSet<(usize, usize)> = BTreeSet::new();
    while let Some((oi, ni)) = queue.pop_front() {
        if !seen.insert((oi, ni)) {
            continue;
        }
        let o = &objs[oi];
        let n = &o.nodes[ni];
        if !n.name.is_empty() {
            out.symbols.insert(n.name.clone());
            out.by_object
                .entry(o.name.clone())
                .or_default()
                .insert(n.name.clone());
        }
        out.objects.insert(o.name.clone());
        for e in &n.edges {
            match e {
                Edge::Global(name) => push_name(name, &mut queue, &mut out),
                Edge::Local(t) => queue.push_back((oi, *t)),
            }
        }
        // Local functions of the same section may be called without a relocation.
        if n.is_func && sections_expanded.insert((oi, n.section)) {
            for (ti, t) in o.nodes.iter().enumerate() {
                if t.is_func && !t.global && t.section == n.section {
                    queue.push_back((oi, ti));
                }
            }
        }
    }
    // Reached data tables and reached code (constants may be immediates) are scanned.
    for &(oi, ni) in &seen {
        let o = &objs[oi];
        let n = &o.nodes[ni];
        if let Some(d) = o.section_data.get(&n.section) {
            let s = (n.start as usize).min(d.len());
            let e = (n.end as usize).min(d.len());
            let mut found = BTreeSet::new();
            scan_constants(&d[s..e], &mut found);
            if !found.is_empty() {
                out.constants
                    .entry(o.name.clone())
                    .or_default()
                    .extend(found);
            }
        }
    }
    out
}

/// Byte signatures of well-known primitives (little-endian words as stored on x86-64 and
/// AArch64, plus byte tables).
const SIGNATURES: &[(&str, &[u8])] = &[
    // Keccak-f[1600] round constant RC[1] = 0x0000000000008082 followed by RC[2]
    (
        "Keccak",
        &[
            0x82, 0x80, 0, 0, 0, 0, 0, 0, 0x8a, 0x80, 0, 0, 0, 0, 0, 0x80,
        ],
    ),
    // SHA-256 K[0..2] = 428a2f98 71374491 (32-bit little-endian)
    ("SHA-256", &[0x98, 0x2f, 0x8a, 0x42, 0x91, 0x44, 0x37, 0x71]),
    // SHA-512 K[0] = 428a2f98d728ae22 (64-bit little-endian)
    ("SHA-512", &[0x22, 0xae, 0x28, 0xd7, 0x98, 0x2f, 0x8a, 0x42]),
    // SM3 IV words 7380166f 4914b2b9 (little-endian)
    ("SM3", &[0x6f, 0x16, 0x80, 0x73, 0xb9, 0xb2, 0x14, 0x49]),
    // AES S-box prefix
    ("AES", &[0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5]),
    // SM4 S-box prefix
    ("SM4", &[0xd6, 0x90, 0xe9, 0xfe, 0xcc, 0xe1, 0x3d, 0xb7]),
    // ChaCha/Salsa "expand 32-byte k"
    ("ChaCha", b"expand 32-byte k"),
];

fn scan_constants(bytes: &[u8], found: &mut BTreeSet<&'static str>) {
    for (name, sig) in SIGNATURES {
        if bytes.len() >= sig.len() && bytes.windows(sig.len()).any(|w| w == *sig) {
            found.insert(name);
        }
    }
}

/// Symbols (from `candidates`) that some input object references as undefined and that
/// some input defines: the set worth wrapping with `-Wl,--wrap=`.
pub fn wrappable(objs: &[ObjInfo], candidates: &[&str]) -> Vec<String> {
    let mut referenced = BTreeSet::new();
    let mut defined = BTreeSet::new();
    for o in objs {
        referenced.extend(o.undefined.iter().cloned());
        defined.extend(o.defined.iter().cloned());
    }
    candidates
        .iter()
        .filter(|s| referenced.contains(**s) && defined.contains(**s))
        .map(|s| s.to_string())
        .collect()
}

/// Per object: which of `names` it defines (used to tell a provider's helpers from a
/// candidate's own copies).
pub fn definers<'a>(objs: &'a [ObjInfo], names: &[&str]) -> BTreeMap<String, Vec<&'a str>> {
    let mut m: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for n in names {
        for o in objs {
            if o.defined.contains(*n) {
                m.entry(n.to_string()).or_default().push(o.name.as_str());
            }
        }
    }
    m
}

/// Convenience: is `path` an archive?
pub fn is_archive(path: &Path) -> bool {
    std::fs::read(path)
        .map(|d| d.starts_with(b"!<arch>\n"))
        .unwrap_or(false)
}
