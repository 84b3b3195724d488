//! Instruction counts of an emulated run (AArch64 under qemu-user): the count phase when the
//! driver starts through an emulator (`PQPERF_EMULATOR`), where valgrind cannot run the
//! guest's code. See `docs/counting.md` ("Emulated AArch64") and
//! `docs/aarch64-and-fleets.md`.
//!
//! pqperf builds its own TCG plugin (`plugin/pqperf_icount.c`, its own declarations of the
//! documented plugin API) with the host C compiler into `<run>/build/count-plugin/`, probes
//! once that the emulator loads it, and runs the lean driver under
//! `setarch -R <emulator> -plugin pqperf_icount.so,ino=…,off=…,out=out/icount.txt`, contained
//! like every child that runs candidate code, with the same seeded input stream
//! ([`crate::COUNT_STREAM`]), scratch layout and environment as the callgrind counter. The
//! plugin counts the guest instructions executed while the operation's API function is on
//! the call stack (entered at its address, left at the caller's return address), one line per
//! call; the parent keeps the calls between the driver's preparation and its memory pass, as
//! for callgrind. Emulation is deterministic: the same library and inputs give the same
//! figures in every run.
//!
//! Where the emulator cannot load the plugin (a static qemu without plugin support, a
//! compiler that cannot build it), every unit's evidence says `not available: <reason>`
//! (status `refused`): counts are extra evidence, never a reason to fail a campaign.

use std::path::{Path, PathBuf};
use std::time::Instant;

use pqperf_measure::instance::Instance;
use pqperf_model::count::{COUNT_SCHEMA, CountEvidence, CountFunction, Spread, Testbed};
use pqperf_model::layout::RunLayout;

use crate::{COUNT_STREAM, CountError, CountOptions, CountSummary, Unit};

/// The plugin's C source (compiled at run time with the host C compiler).
pub const PLUGIN_SOURCE: &str = include_str!("../plugin/pqperf_icount.c");

/// The method name in the evidence.
pub const METHOD: &str = "qemu-tcg-plugin";

/// The prefix of every reason why the emulated counter cannot count.
pub const NOT_AVAILABLE: &str = "not available";

/// `<emulator> --version` (first line), or None when it does not run.
pub fn emulator_version(emulator: &str) -> Option<String> {
    std::process::Command::new(emulator)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim().to_string())
        })
        .filter(|l| !l.is_empty())
}

/// The host C compilers tried for the plugin, in order: `$PQPERF_HOST_CC`, `gcc`, `cc`.
fn host_compilers() -> Vec<String> {
    let mut v = Vec::new();
    if let Ok(cc) = std::env::var("PQPERF_HOST_CC")
        && !cc.trim().is_empty()
    {
        v.push(cc.trim().to_string());
    }
    v.extend(["gcc".to_string(), "cc".to_string()]);
    v
}

/// The first 12 hex digits of the plugin source's sha256 (names the built plugin, so a
/// changed source is rebuilt).
pub fn plugin_tag() -> String {
    pqperf_model::katlog::sha256_hex(PLUGIN_SOURCE.as_bytes())[..12].to_string()
}

/// Builds the plugin into `dir` (kept when already built from this source) and returns its
/// path; Err: why it cannot be built (every compiler's message).
pub fn build_plugin(dir: &Path) -> Result<PathBuf, String> {
    let so = dir.join(format!("pqperf_icount-{}.so", plugin_tag()));
    if so.is_file() {
        return Ok(so);
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let src = dir.join("pqperf_icount.c");
    pqperf_model::fsutil::write_atomic(&src, PLUGIN_SOURCE.as_bytes())
        .map_err(|e| format!("{}: {e}", src.display()))?;
    let tmp = dir.join(format!(".pqperf_icount-{}.so.tmp", std::process::id()));
    let mut why = Vec::new();
    for cc in host_compilers() {
        let o = std::process::Command::new(&cc)
            .args(["-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-o"])
            .arg(&tmp)
            .arg(&src)
            .env("LC_ALL", "C")
            .output();
        match o {
            Ok(o) if o.status.success() => {
                std::fs::rename(&tmp, &so).map_err(|e| format!("{}: {e}", so.display()))?;
                return Ok(so);
            }
            Ok(o) => why.push(format!(
                "{cc}: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("failed")
            )),
            Err(e) => why.push(format!("{cc}: {e}")),
        }
    }
    let _ = std::fs::remove_file(&tmp);
    Err(format!(
        "the TCG plugin could not be built with the host C compiler ({})",
        why.join("; ")
    ))
}

/// The emulator command: its program (resolved on `PATH`) and its own arguments.
#[derive(Debug, Clone)]
pub struct Emulator {
    /// The program, as named in `PQPERF_EMULATOR`.
    pub name: String,
    /// Its absolute path.
    pub path: PathBuf,
    /// Its arguments before `-plugin`.
    pub args: Vec<String>,
    /// `--version`'s first line (`qemu-aarch64 version 7.2.22 (…)`).
    pub version: String,
}

impl Emulator {
    /// From an argv prefix (`PQPERF_EMULATOR`); Err: why it cannot run.
    pub fn from_prefix(prefix: &[String]) -> Result<Emulator, String> {
        let (name, args) = prefix
            .split_first()
            .ok_or_else(|| "no emulator named".to_string())?;
        let path =
            crate::lookup(name).ok_or_else(|| format!("the emulator {name} is not on PATH"))?;
        let version = emulator_version(&path.to_string_lossy())
            .ok_or_else(|| format!("the emulator {name} does not run (`{name} --version`)"))?;
        Ok(Emulator {
            name: name.clone(),
            path,
            args: args.to_vec(),
            version,
        })
    }
}

/// The plugin as loaded: its path and tag, once probed.
#[derive(Debug, Clone)]
struct Plugin {
    path: PathBuf,
    tag: String,
}

/// Builds the plugin and checks once that the emulator loads it (the driver started without
/// arguments prints its usage; the plugin writes its header on loading). Err: the reason,
/// starting with "not available".
fn probe(opts: &CountOptions, emu: &Emulator) -> Result<Plugin, String> {
    let dir = RunLayout::new(&opts.run_dir)
        .build_dir()
        .join("count-plugin");
    let path = build_plugin(&dir).map_err(|e| format!("{NOT_AVAILABLE}: {e}"))?;
    let work = tempfile::Builder::new()
        .prefix("pqperf-count-probe-")
        .tempdir()
        .map_err(|e| format!("{NOT_AVAILABLE}: scratch folder: {e}"))?;
    let out = work.path().join("probe.txt");
    let o = std::process::Command::new(&emu.path)
        .args(&emu.args)
        .arg("-plugin")
        .arg(format!(
            "{},ino=0,off=0,out={}",
            path.display(),
            out.display()
        ))
        .arg(&opts.driver)
        .current_dir(work.path())
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| format!("{NOT_AVAILABLE}: cannot start {}: {e}", emu.name))?;
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    if text.starts_with("pqperf-icount 1\n") {
        return Ok(Plugin {
            path,
            tag: plugin_tag(),
        });
    }
    let stderr = String::from_utf8_lossy(&o.stderr);
    let said = stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("usage:"))
        .take(2)
        .collect::<Vec<_>>()
        .join(" / ");
    Err(format!(
        "{NOT_AVAILABLE}: the emulator ({}) did not load the TCG plugin (static builds of qemu-user have no plugin support){}",
        emu.version,
        if said.is_empty() {
            String::new()
        } else {
            format!(": {}", pqperf_model::captured::escape_captured(&said))
        }
    ))
}

/// The offset of the defined symbol `name` (dynamic, else in the full symbol table) from the load base of the AArch64 shared
/// library `elf` (its `st_value` less the page-aligned address of the lowest loadable
/// segment). Err: why not (not an AArch64 ELF64 library, symbol absent).
pub fn symbol_offset(elf: &[u8], name: &str) -> Result<u64, String> {
    let u16_at = |o: usize| -> Result<u64, String> {
        elf.get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as u64)
            .ok_or_else(|| "truncated ELF file".to_string())
    };
    let u32_at = |o: usize| -> Result<u64, String> {
        elf.get(o..o + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()) as u64)
            .ok_or_else(|| "truncated ELF file".to_string())
    };
    let u64_at = |o: usize| -> Result<u64, String> {
        elf.get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
            .ok_or_else(|| "truncated ELF file".to_string())
    };
    if elf.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
        return Err("not a little-endian ELF64 file".into());
    }
    const EM_AARCH64: u64 = 183;
    if u16_at(18)? != EM_AARCH64 {
        return Err(format!(
            "not an AArch64 library (ELF machine {})",
            u16_at(18)?
        ));
    }
    let us = |v: u64| usize::try_from(v).map_err(|_| "ELF offset out of range".to_string());
    // Lowest loadable segment.
    let (phoff, phentsize, phnum) = (us(u64_at(32)?)?, us(u16_at(54)?)?, us(u16_at(56)?)?);
    let mut low: Option<u64> = None;
    for i in 0..phnum {
        let p = phoff + i * phentsize;
        if u32_at(p)? == 1 {
            let vaddr = u64_at(p + 16)?;
            let align = u64_at(p + 48)?.max(1);
            let page = vaddr - vaddr % align;
            low = Some(low.map_or(page, |l: u64| l.min(page)));
        }
    }
    let low = low.ok_or("no loadable segment")?;
    let (shoff, shentsize, shnum) = (us(u64_at(40)?)?, us(u16_at(58)?)?, us(u16_at(60)?)?);
    // The dynamic symbols first, then the full symbol table (local functions such as the
    // helpers a library links in hidden).
    const SHT_DYNSYM: u64 = 11;
    const SHT_SYMTAB: u64 = 2;
    for (kind, i) in [SHT_DYNSYM, SHT_SYMTAB]
        .into_iter()
        .flat_map(|k| (0..shnum).map(move |i| (k, i)))
    {
        let s = shoff + i * shentsize;
        if u32_at(s + 4)? != kind {
            continue;
        }
        let (off, size, link, entsize) = (
            us(u64_at(s + 24)?)?,
            us(u64_at(s + 32)?)?,
            us(u32_at(s + 40)?)?,
            us(u64_at(s + 56)?)?.max(24),
        );
        let strtab = shoff + link * shentsize;
        let str_off = us(u64_at(strtab + 24)?)?;
        for k in 0..size / entsize {
            let sym = off + k * entsize;
            let name_at = str_off + us(u32_at(sym)?)?;
            let end = elf
                .get(name_at..)
                .and_then(|r| r.iter().position(|&b| b == 0))
                .ok_or("truncated ELF string table")?;
            if &elf[name_at..name_at + end] == name.as_bytes() && u16_at(sym + 6)? != 0 {
                let value = u64_at(sym + 8)?;
                return value
                    .checked_sub(low)
                    .ok_or_else(|| format!("{name} lies below the library's first segment"));
            }
        }
    }
    Err(format!("the library defines no symbol {name}"))
}

/// One call as the plugin reported it: instructions, and those of the second function with
/// its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginCall {
    /// Instructions executed inside the counted function during the call.
    pub instructions: u64,
    /// Instructions inside the second function (`sub=`) during the call.
    pub sub_instructions: u64,
    /// Calls of the second function during the call.
    pub sub_calls: u64,
}

/// Parses the plugin's output file; Err: why it holds no counts.
pub fn parse_output(text: &str) -> Result<Vec<PluginCall>, String> {
    if !text.starts_with("pqperf-icount 1\n") {
        return Err("the plugin wrote no output (not loaded?)".into());
    }
    let mut calls = Vec::new();
    let mut end = false;
    for l in text.lines().skip(1) {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["target", t] if *t != "aarch64" => {
                return Err(format!("the emulator's target is {t}, not aarch64"));
            }
            ["target", _] | ["entry", _] => {}
            ["call", a, b, c] => {
                let n = |s: &str| s.parse::<u64>().map_err(|_| format!("bad line {l:?}"));
                calls.push(PluginCall {
                    instructions: n(a)?,
                    sub_instructions: n(b)?,
                    sub_calls: n(c)?,
                });
            }
            ["unresolved"] => {
                return Err("the library's mapping was never seen (not loaded?)".into());
            }
            ["open"] => return Err("the process ended inside the counted function".into()),
            ["overflow"] => return Err("more calls than the plugin records".into()),
            ["end"] => end = true,
            _ => return Err(format!("unexpected line {l:?}")),
        }
    }
    if !end {
        return Err("the output ends early (the emulator was killed?)".into());
    }
    Ok(calls)
}

/// Counts every unit under the emulator (the [`crate::run`] of an emulated run).
pub(crate) fn run(
    opts: &CountOptions,
    units: Vec<Unit>,
    kept: usize,
) -> Result<CountSummary, CountError> {
    let t0 = Instant::now();
    let emu = Emulator::from_prefix(&opts.emulator);
    let plugin = match &emu {
        Ok(e) => probe(opts, e),
        Err(why) => Err(format!("{NOT_AVAILABLE}: {why}")),
    };
    if opts.progress
        && let Err(why) = &plugin
    {
        eprintln!("count: {why}");
    }
    let libc = crate::libc_version();
    let setarch = crate::lookup("setarch");
    let evidence = crate::each_unit(opts, &units, |u| {
        let inst = &opts.instances[u.inst];
        let mut ev = unit(opts, &emu, &plugin, &libc, setarch.as_deref(), inst, u);
        if let Some(r) = &ev.reason {
            ev.reason = Some(pqperf_model::paths::redact_machine_paths(r).0);
        }
        ev
    });
    let mut out = CountSummary {
        kept,
        ..Default::default()
    };
    // The caller writes the evidence (`crate::run`, with its timing cross-check) or keeps it
    // in memory (`crate::count`, the gate).
    out.evidence = evidence;
    out.seconds = t0.elapsed().as_secs_f64();
    Ok(out)
}

/// One unit's evidence.
fn unit(
    opts: &CountOptions,
    emu: &Result<Emulator, String>,
    plugin: &Result<Plugin, String>,
    libc: &str,
    setarch: Option<&Path>,
    inst: &Instance,
    u: &Unit,
) -> CountEvidence {
    let e = &inst.entry;
    let extra = |k: &str| {
        e.extra
            .get(k)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let tool = match emu {
        Ok(e) => e.version.clone(),
        Err(_) => opts.emulator.join(" "),
    };
    let mut ev = CountEvidence {
        schema: COUNT_SCHEMA,
        candidate: e.candidate.clone(),
        label: e.label.clone(),
        operation: u.opkey.clone(),
        status: "failed".into(),
        library_sha256: e.library_sha256.clone(),
        seeds: vec![pqperf_model::stream::seed_hex(
            &pqperf_model::stream::process_seed(COUNT_STREAM),
        )],
        architecture: Some("aarch64".into()),
        method: Some(format!("{METHOD} ({tool})")),
        testbed: Testbed {
            valgrind: tool.clone(),
            flags: Vec::new(),
            aslr: if setarch.is_some() {
                "off (setarch -R)".into()
            } else {
                "on (setarch not found)".into()
            },
            compiler: extra("compiler"),
            build_flags: extra("build_flags"),
            libc: libc.to_string(),
            machine: "aarch64".into(),
        },
        utc: pqperf_measure::record::utc_now(),
        ..Default::default()
    };
    let refuse = |mut ev: CountEvidence, why: String| {
        ev.status = "refused".into();
        ev.reason = Some(why);
        ev
    };
    let target = match crate::target_of(&inst.api, inst.category, &u.op) {
        Ok(t) if t.is_several() => {
            return refuse(
                ev,
                "a whole key exchange spans several API functions, which the plugin does not count together (its steps are counted)".into(),
            );
        }
        Ok(t) => t,
        Err(why) => return refuse(ev, why),
    };
    let (symbol, prep, mem) = (target.last.clone(), target.preparation, target.memory_pass);
    ev.symbol = symbol.clone();
    let (emu, plugin) = match (emu, plugin) {
        (Ok(e), Ok(p)) => (e, p),
        (_, Err(why)) | (Err(why), _) => return refuse(ev, why.clone()),
    };
    let Some(lib_rel) = e.library.as_deref() else {
        ev.reason = Some("build.json names no library".into());
        return ev;
    };
    let lib = opts.run_dir.join(lib_rel);
    let bytes = match std::fs::read(&lib) {
        Ok(b) => b,
        Err(err) => {
            ev.reason = Some(format!("{lib_rel}: {err}"));
            return ev;
        }
    };
    let sha = pqperf_model::katlog::sha256_hex(&bytes);
    if e.library_sha256.as_deref().is_some_and(|s| s != sha) {
        ev.reason = Some(format!(
            "{lib_rel} is not the library build.json names (sha256 {sha}): run build"
        ));
        return ev;
    }
    ev.library_sha256 = Some(sha);
    let offsets = symbol_offset(&bytes, &symbol).and_then(|off| match &opts.sub_symbol {
        None => Ok((off, None)),
        Some(s) => symbol_offset(&bytes, s).map(|o| (off, Some(o))),
    });
    let (off, sub) = match offsets {
        Ok(o) => o,
        Err(why) => return refuse(ev, format!("{lib_rel}: {why}")),
    };
    ev.testbed.flags = plugin_flags(&plugin.tag);
    let first = if opts.auto_calls { 1 } else { opts.calls };
    let mut seconds = 0.0;
    let run1 = attempt(
        opts, emu, plugin, setarch, inst, u, &lib, off, sub, first, &mut ev,
    );
    let Some(mut calls) = run1 else { return ev };
    seconds += ev.seconds;
    let mut iters = first;
    let select = |c: &[PluginCall], iters: u64| -> Result<Vec<PluginCall>, String> {
        let want = prep + iters as usize + mem;
        if c.len() != want {
            return Err(format!(
                "{} calls of {symbol} in the process, {want} expected ({prep} in the preparation, {iters} counted, {mem} in the memory pass)",
                c.len()
            ));
        }
        Ok(c[prep..prep + iters as usize].to_vec())
    };
    let mut counted = match select(&calls, iters) {
        Ok(c) => c,
        Err(why) => {
            ev.reason = Some(why);
            return ev;
        }
    };
    if opts.auto_calls {
        let want = crate::calls_for(counted[0].instructions, opts.calls);
        if want > 1 {
            let Some(c) = attempt(
                opts, emu, plugin, setarch, inst, u, &lib, off, sub, want, &mut ev,
            ) else {
                return ev;
            };
            seconds += ev.seconds;
            calls = c;
            iters = want;
            counted = match select(&calls, iters) {
                Ok(c) => c,
                Err(why) => {
                    ev.reason = Some(why);
                    return ev;
                }
            };
        }
    }
    let ins: Vec<u64> = counted.iter().map(|c| c.instructions).collect();
    let spread = Spread::of(&ins);
    let n = ins.len() as f64;
    let mean = spread.map_or(0.0, |s| s.mean);
    ev.seconds = seconds;
    ev.status = "counted".into();
    ev.calls = iters;
    ev.calls_run = calls.len() as u64;
    ev.instructions = ins;
    ev.instructions_per_call = spread;
    let mut funcs = vec![CountFunction {
        function: symbol.clone(),
        class: "candidate".into(),
        inclusive_per_call: mean,
        self_per_call: mean,
        calls_per_call: 1.0,
    }];
    if let (Some(s), Some(_)) = (&opts.sub_symbol, sub) {
        let si = counted.iter().map(|c| c.sub_instructions).sum::<u64>() as f64 / n;
        let sc = counted.iter().map(|c| c.sub_calls).sum::<u64>() as f64 / n;
        funcs[0].self_per_call = mean - si;
        funcs.push(CountFunction {
            function: s.clone(),
            class: crate::classify::classify(s, "").to_string(),
            inclusive_per_call: si,
            self_per_call: si,
            calls_per_call: sc,
        });
    }
    ev.functions = funcs;
    ev
}

/// The testbed's flags: the plugin and its source tag. The counted offsets (which differ
/// between two builds of a library, like callgrind's `--toggle-collect` symbol) and the
/// inode and output path (which differ between hosts) are in `command` only, so that
/// `compare --counter instructions` compares two builds.
fn plugin_flags(tag: &str) -> Vec<String> {
    vec!["-plugin".to_string(), format!("pqperf_icount-{tag}.so")]
}

/// One emulated, contained driver process counting `iters` calls; None when it gave no
/// counts (`ev` then says why).
#[allow(clippy::too_many_arguments)]
fn attempt(
    opts: &CountOptions,
    emu: &Emulator,
    plugin: &Plugin,
    setarch: Option<&Path>,
    inst: &Instance,
    u: &Unit,
    lib: &Path,
    off: u64,
    sub: Option<u64>,
    iters: u64,
    ev: &mut CountEvidence,
) -> Option<Vec<PluginCall>> {
    use pqperf_ffi::untrusted::{self, ChildSpec, RESULT_FD_ENV};
    use std::os::unix::fs::MetadataExt;
    let fail = |ev: &mut CountEvidence, why: String| {
        ev.reason = Some(why);
        None
    };
    let work = match tempfile::Builder::new().prefix("pqperf-count-").tempdir() {
        Ok(w) => w,
        Err(e) => return fail(ev, format!("scratch folder: {e}")),
    };
    let w = work.path();
    let prepared = (|| -> Result<(PathBuf, PathBuf, u64), String> {
        let abs = |p: &Path| std::fs::canonicalize(p).map_err(|e| format!("{}: {e}", p.display()));
        let driver = abs(&opts.driver)?;
        let library = abs(lib)?;
        let ino = std::fs::metadata(&library)
            .map_err(|e| format!("{}: {e}", library.display()))?
            .ino();
        std::os::unix::fs::symlink(&driver, w.join("d")).map_err(|e| format!("link: {e}"))?;
        std::os::unix::fs::symlink(&library, w.join("l.so")).map_err(|e| format!("link: {e}"))?;
        for d in ["out", "tmp"] {
            std::fs::create_dir(w.join(d)).map_err(|e| format!("scratch folder {d}: {e}"))?;
        }
        Ok((driver, library, ino))
    })();
    let (driver, library, ino) = match prepared {
        Ok(p) => p,
        Err(why) => return fail(ev, why),
    };
    let args = crate::counting_args(inst, u, iters);
    let mut plugin_arg = format!("{},ino={ino},off={off:x}", plugin.path.display());
    if let Some(s) = sub {
        plugin_arg.push_str(&format!(",sub={s:x}"));
    }
    plugin_arg.push_str(",out=out/icount.txt");
    let mut sh = vec![
        "-c".to_string(),
        format!(
            "fd=$(printf %04d \"${RESULT_FD_ENV}\") && exec /usr/bin/env -i {RESULT_FD_ENV}=$fd LC_ALL=C TMPDIR=tmp \"$@\""
        ),
        "sh".to_string(),
    ];
    if let Some(s) = setarch {
        sh.push(s.to_string_lossy().into_owned());
        sh.push("-R".into());
    }
    sh.push(emu.path.to_string_lossy().into_owned());
    sh.extend(emu.args.iter().cloned());
    sh.push("-plugin".into());
    sh.push(plugin_arg);
    sh.push("./d".into());
    sh.extend(args.to_argv());
    let parent = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
    let spec = ChildSpec {
        program: "/bin/sh".into(),
        args: sh,
        cwd: w.to_path_buf(),
        timeout: opts.timeout,
        writable: vec![w.join("out"), w.join("tmp")],
        readable: vec![
            parent(&driver),
            library,
            parent(&plugin.path),
            parent(&emu.path),
        ],
        ..Default::default()
    };
    let t0 = Instant::now();
    let o = untrusted::run(&spec);
    ev.seconds = t0.elapsed().as_secs_f64();
    let mut command = vec![emu.name.clone()];
    command.extend(emu.args.iter().cloned());
    command.push("-plugin".into());
    command.push(format!(
        "pqperf_icount-{}.so,off={off:x}{},out=out/icount.txt",
        plugin.tag,
        sub.map(|s| format!(",sub={s:x}")).unwrap_or_default()
    ));
    command.push(pqperf_measure::runner::DRIVER_BIN.into());
    command.extend(args.to_argv());
    ev.command = command;
    if let Some(e) = o.spawn_error {
        return fail(ev, format!("cannot start the emulator: {e}"));
    }
    if o.timed_out {
        return fail(ev, format!("timeout after {} s", opts.timeout.as_secs()));
    }
    let complete = o.result_lines().iter().any(|l| l == "STATUS\tcomplete");
    if o.code() != Some(0) || !complete {
        let tail = o.stderr.tail_chars(400);
        return fail(
            ev,
            format!(
                "the driver under {} ended with exit status {:?}{}: {}",
                emu.name,
                o.code(),
                if complete {
                    ""
                } else {
                    " without STATUS complete"
                },
                pqperf_model::captured::escape_captured(&tail)
            ),
        );
    }
    let text = std::fs::read_to_string(w.join("out/icount.txt")).unwrap_or_default();
    match parse_output(&text) {
        Ok(c) => Some(c),
        Err(why) => fail(ev, format!("plugin output: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_output_is_read_strictly() {
        let ok = "pqperf-icount 1\ntarget aarch64\nentry 0x1a0\ncall 10 0 0\ncall 12 5 1\nend\n";
        assert_eq!(
            parse_output(ok).unwrap(),
            vec![
                PluginCall {
                    instructions: 10,
                    sub_instructions: 0,
                    sub_calls: 0
                },
                PluginCall {
                    instructions: 12,
                    sub_instructions: 5,
                    sub_calls: 1
                }
            ]
        );
        assert!(parse_output("").is_err());
        assert!(parse_output("pqperf-icount 1\ntarget aarch64\ncall 1 0 0\n").is_err());
        assert!(parse_output("pqperf-icount 1\ntarget x86_64\nend\n").is_err());
        assert!(parse_output("pqperf-icount 1\nunresolved\nend\n").is_err());
        assert!(parse_output("pqperf-icount 1\ncall 1 0 0\nopen\nend\n").is_err());
        assert_eq!(plugin_flags("abc"), ["-plugin", "pqperf_icount-abc.so"]);
    }

    #[test]
    fn symbols_of_a_non_aarch64_file_are_refused() {
        let me = std::fs::read("/proc/self/exe").unwrap();
        let e = symbol_offset(&me, "main").unwrap_err();
        assert!(e.contains("not an AArch64") || e.contains("ELF"), "{e}");
        assert!(symbol_offset(b"nope", "x").is_err());
    }
}
