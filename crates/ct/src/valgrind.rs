//! Running a driver under `valgrind --tool=memcheck --xml=yes` and reading its XML report
//! (protocol 4, parsed with `roxmltree`) into findings grouped by kind and source location.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pqperf_model::ct::CtFinding;

/// `valgrind --version` (`valgrind-3.19.0`), or `None` when valgrind cannot run.
pub fn version(valgrind: &str) -> Option<String> {
    Command::new(valgrind)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The memcheck options. The XML report goes to the child's private result channel
/// (`--xml-fd`, filled in by [`run`]): valgrind keeps its own descriptors out of the
/// guest's reach, so the candidate can neither forge nor spoil the report through a file.
pub fn memcheck_args() -> Vec<String> {
    [
        "--tool=memcheck",
        "--error-limit=no",
        "--num-callers=16",
        "--leak-check=no",
        "--track-origins=no",
        "--vgdb=no",
        "--xml=yes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// How a valgrind run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Exit code of the driver (None: killed or timed out).
    pub code: Option<i32>,
    /// True when the timeout killed it.
    pub timed_out: bool,
    /// Wall seconds of the run.
    pub seconds: f64,
    /// The last lines of stderr (valgrind's own messages, driver messages).
    pub stderr_tail: String,
    /// The XML report (from the result channel).
    pub xml: String,
    /// Why the report cannot be taken as complete (`None`: it arrived whole, closing tag
    /// included): a drain timeout (a process kept the channel open), the size cap, no
    /// closing tag.
    pub incomplete: Option<String>,
}

/// Run `valgrind <args> --xml-fd=<result channel> <exe> <op>` in `cwd`, contained like every
/// child that runs candidate code (`pqperf_ffi::untrusted`: own session killed at the end or
/// at `timeout`, namespaces, Landlock writes only in `cwd` and its scratch directory,
/// rlimits, size-capped output). `exe_and_op` follows the valgrind options.
pub fn run(
    valgrind: &str,
    cwd: &Path,
    args: &[String],
    exe_and_op: &[String],
    timeout: Duration,
) -> RunOutcome {
    use pqperf_ffi::untrusted::{self, ChildSpec, RESULT_FD_ENV};
    // The result descriptor's number is known only in the child (announced in the
    // environment), so a shell puts it on valgrind's command line and execs valgrind.
    let mut sh_args = vec![
        "-c".to_string(),
        format!("exec \"$0\" --xml-fd=\"${RESULT_FD_ENV}\" \"$@\""),
        valgrind.to_string(),
    ];
    sh_args.extend(args.iter().cloned());
    sh_args.extend(exe_and_op.iter().cloned());
    let spec = ChildSpec {
        program: "/bin/sh".into(),
        args: sh_args,
        cwd: cwd.to_path_buf(),
        timeout,
        writable: vec![cwd.to_path_buf()],
        ..Default::default()
    };
    let t0 = Instant::now();
    let o = untrusted::run(&spec);
    let text = o.stderr.text();
    let lines: Vec<&str> = text.lines().collect();
    let mut tail = lines[lines.len().saturating_sub(5)..].join("\n");
    if let Some(e) = &o.spawn_error {
        tail = e.clone();
    }
    let xml = String::from_utf8_lossy(&o.result).into_owned();
    let incomplete = if o.drain_timeout {
        Some("valgrind's XML report did not arrive complete (a process kept its channel open past the drain limit)".to_string())
    } else if o.result_truncated {
        Some("valgrind's XML report exceeded the result channel's size limit".to_string())
    } else if !xml.contains("</valgrindoutput>") {
        Some("valgrind's XML report is incomplete (no closing </valgrindoutput>)".to_string())
    } else {
        None
    };
    RunOutcome {
        incomplete,
        code: o.status.and_then(|s| s.code()),
        timed_out: o.timed_out,
        seconds: t0.elapsed().as_secs_f64(),
        stderr_tail: tail,
        xml,
    }
}

/// The first pass of an operation (`<exe> <op> probe`, natively, contained like the
/// valgrind run): the draws of the generator and the public outputs it reported on the
/// result channel ([`crate::driver::Probe`]).
pub fn probe(
    cwd: &Path,
    exe: &str,
    op: &str,
    timeout: Duration,
) -> Result<crate::driver::Probe, String> {
    use pqperf_ffi::untrusted::{self, ChildSpec};
    let o = untrusted::run(&ChildSpec {
        program: cwd.join(exe),
        args: vec![op.to_string(), "probe".to_string()],
        cwd: cwd.to_path_buf(),
        timeout,
        writable: vec![cwd.to_path_buf()],
        ..Default::default()
    });
    if let Some(e) = o.spawn_error {
        return Err(e);
    }
    if o.timed_out {
        return Err(format!("timeout after {} s", timeout.as_secs()));
    }
    if o.drain_timeout || o.result_truncated {
        return Err("its report did not arrive complete".into());
    }
    match o.code() {
        Some(0) => crate::driver::Probe::parse(&o.result),
        c => Err(format!("exit status {c:?}")),
    }
}

/// One stack frame of a valgrind error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    /// The object file (`<obj>`).
    pub obj: String,
    /// The function (`<fn>`).
    pub func: String,
    /// The source directory (`<dir>`).
    pub dir: String,
    /// The source file (`<file>`).
    pub file: String,
    /// The source line (`<line>`), when known.
    pub line: Option<u64>,
}

/// One distinct error of the report with its occurrence count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct XmlError {
    /// valgrind's id of the error (`<unique>`), the key of its count.
    pub unique: String,
    /// valgrind's error kind (`<kind>`: `UninitCondition`, `UninitValue`, …).
    pub kind: String,
    /// The stack, innermost frame first.
    pub frames: Vec<Frame>,
    /// How often it occurred (`<errorcounts>`).
    pub count: u64,
}

/// Parse a memcheck XML report: the `<error>`s with their `<errorcounts>`. A report cut
/// short (the process was killed) is parsed up to its last complete error.
pub fn parse_xml(text: &str) -> Result<Vec<XmlError>, String> {
    let owned;
    let text = if text.contains("</valgrindoutput>") {
        text
    } else {
        // Killed runs leave an unterminated document: keep the complete errors.
        let cut = text.rfind("</error>").map(|i| i + "</error>".len());
        owned = match cut {
            Some(i) => format!("{}\n</valgrindoutput>\n", &text[..i]),
            None => return Ok(Vec::new()),
        };
        &owned
    };
    let doc = roxmltree::Document::parse(text).map_err(|e| format!("valgrind XML: {e}"))?;
    let root = doc.root_element();
    let child_text = |n: roxmltree::Node, name: &str| -> String {
        n.children()
            .find(|c| c.has_tag_name(name))
            .and_then(|c| c.text())
            .unwrap_or("")
            .to_string()
    };
    let mut errors: Vec<XmlError> = Vec::new();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for n in root.children().filter(|n| n.is_element()) {
        if n.has_tag_name("error") {
            let mut e = XmlError {
                unique: child_text(n, "unique"),
                kind: child_text(n, "kind"),
                count: 1,
                ..Default::default()
            };
            if let Some(stack) = n.children().find(|c| c.has_tag_name("stack")) {
                for f in stack.children().filter(|c| c.has_tag_name("frame")) {
                    e.frames.push(Frame {
                        obj: child_text(f, "obj"),
                        func: child_text(f, "fn"),
                        dir: child_text(f, "dir"),
                        file: child_text(f, "file"),
                        line: child_text(f, "line").parse().ok(),
                    });
                }
            }
            errors.push(e);
        } else if n.has_tag_name("errorcounts") {
            for p in n.children().filter(|c| c.has_tag_name("pair")) {
                if let Ok(c) = child_text(p, "count").parse::<u64>() {
                    counts.insert(child_text(p, "unique"), c);
                }
            }
        }
    }
    for e in &mut errors {
        if let Some(c) = counts.get(&e.unique) {
            e.count = *c;
        }
    }
    Ok(errors)
}

/// The finding kind of a memcheck error kind.
pub fn kind_name(kind: &str) -> String {
    match kind {
        "UninitCondition" => "conditional jump".into(),
        "UninitValue" => "memory index".into(),
        "SyscallParam" => "syscall param".into(),
        other => format!("other ({other})"),
    }
}

/// A frame's `file:line`, relative to `tree` when the source lies inside it, else the file
/// name alone (system and toolchain sources); `obj` basename when there is no line.
pub fn frame_location(f: &Frame, tree: &Path) -> String {
    let Some(line) = f.line.filter(|_| !f.file.is_empty()) else {
        let obj = Path::new(&f.obj)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "?".into());
        return format!("({obj})");
    };
    let full = Path::new(&f.dir).join(&f.file);
    let shown = match full.strip_prefix(tree) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => Path::new(&f.file)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    format!("{shown}:{line}")
}

/// Group errors by (kind, location, function) of their first frame with source (skipping
/// valgrind's own preload objects), counts summed, in order of first appearance. Leak
/// reports (the driver does not free its buffers) are not findings and are dropped.
pub fn group(errors: &[XmlError], tree: &Path) -> Vec<CtFinding> {
    let mut out: Vec<CtFinding> = Vec::new();
    for e in errors.iter().filter(|e| !e.kind.starts_with("Leak_")) {
        // The innermost frame in the candidate's own sources (not the driver), else the
        // innermost with a line (compiler intrinsics headers, libc), else the first.
        let in_tree = |f: &&Frame| {
            f.line.is_some()
                && !f.file.starts_with(".pqperf-ct-")
                && Path::new(&f.dir).join(&f.file).starts_with(tree)
        };
        let top = e
            .frames
            .iter()
            .find(in_tree)
            .or_else(|| {
                e.frames
                    .iter()
                    .find(|f| f.line.is_some() && !f.obj.contains("vgpreload"))
            })
            .or_else(|| e.frames.first());
        let (location, function) = match top {
            Some(f) => (frame_location(f, tree), f.func.clone()),
            None => ("(no stack)".to_string(), String::new()),
        };
        let kind = kind_name(&e.kind);
        if let Some(g) = out
            .iter_mut()
            .find(|g| g.kind == kind && g.location == location && g.function == function)
        {
            g.count += e.count;
            continue;
        }
        let stack = e
            .frames
            .iter()
            .filter(|f| !f.obj.contains("vgpreload"))
            .take(4)
            .map(|f| format!("{} ({})", f.func, frame_location(f, tree)))
            .collect();
        out.push(CtFinding {
            kind,
            location,
            function,
            count: e.count,
            stack,
            accepted: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"<?xml version="1.0"?>
<valgrindoutput>
<protocolversion>4</protocolversion>
<error>
  <unique>0x0</unique>
  <tid>1</tid>
  <kind>UninitCondition</kind>
  <what>Conditional jump or move depends on uninitialised value(s)</what>
  <stack>
    <frame><ip>0x1</ip><obj>/w/a.out</obj><fn>f</fn><dir>/w/src/x</dir><file>a.c</file><line>12</line></frame>
    <frame><ip>0x2</ip><obj>/w/a.out</obj><fn>main</fn><dir>/w</dir><file>d.c</file><line>3</line></frame>
  </stack>
</error>
<error>
  <unique>0x1</unique>
  <tid>1</tid>
  <kind>UninitValue</kind>
  <what>Use of uninitialised value of size 8</what>
  <stack>
    <frame><ip>0x3</ip><obj>/usr/lib/x86_64-linux-gnu/valgrind/vgpreload_memcheck-amd64-linux.so</obj><fn>memcmp</fn><dir>/b/shared</dir><file>vg_replace_strmem.c</file><line>9</line></frame>
    <frame><ip>0x4</ip><obj>/w/a.out</obj><fn>g</fn><dir>/w/src/x</dir><file>b.c</file><line>7</line></frame>
  </stack>
</error>
<errorcounts>
  <pair><count>5</count><unique>0x0</unique></pair>
  <pair><count>2</count><unique>0x1</unique></pair>
</errorcounts>
</valgrindoutput>
"#;

    #[test]
    fn parses_and_groups() {
        let errs = parse_xml(SAMPLE).unwrap();
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].count, 5);
        let g = group(&errs, Path::new("/w"));
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].kind, "conditional jump");
        assert_eq!(g[0].location, "src/x/a.c:12");
        assert_eq!(g[0].function, "f");
        assert_eq!(g[0].stack, vec!["f (src/x/a.c:12)", "main (d.c:3)"]);
        assert_eq!(g[1].kind, "memory index");
        assert_eq!(g[1].location, "src/x/b.c:7");
        assert_eq!(g[1].count, 2);
    }

    #[test]
    fn truncated_report_keeps_complete_errors() {
        let cut = &SAMPLE[..SAMPLE.find("<errorcounts>").unwrap()];
        let errs = parse_xml(cut).unwrap();
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[1].count, 1);
        assert!(
            parse_xml("<?xml version=\"1.0\"?>\n<valgrindoutput>")
                .unwrap()
                .is_empty()
        );
        assert!(parse_xml("<valgrindoutput><error></valgrindoutput>").is_err());
    }
}
