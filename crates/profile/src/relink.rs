//! Profiling builds: relink an instance's objects with the wrappers (method.md §10.2).
//!
//! The build stage (`pqperf-build`) logs every command it runs as `$ <shell-quoted argv>` in
//! `build/<id>.log`, run in the instance's work folder `build/src/<id>/<label>/`. As the
//! reference `relink.sh` does with `make -n`, the *last* link command of the instance (the
//! one that produced `lib/<id>/lib<label>.so`) is taken from there and rewritten:
//!
//! 1. the version script is replaced by a copy that also exports the `ngcc_hashprof_*`
//!    control functions;
//! 2. `-o lib/<id>/lib<label>.so` becomes `-o hashprof/lib/<id>/lib<label>.so` plus the
//!    wrapper object and one `-Wl,--wrap=<sym>` per wrapped symbol;
//! 3. the wrapped symbols are those of the instance's API kind (ICCS helpers and DRNG, or
//!    PQClean's randombytes and common SHAKE/SHA-3/SHA-2/AES code) that some input object
//!    references as undefined and some input defines (read with the `object` crate).
//!
//! The candidate's own library is untouched. `--wrap` only redirects references that cross
//! object files, so calls inside the object that defines a helper are not seen (and never
//! counted twice); LTO builds cannot be wrapped reliably, hence reference builds only.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ProfileError;
use crate::objscan;
use crate::wrapc;

/// API kind of an instance, as far as wrapping is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrapKind {
    /// ICCS API: `pseudohash`, `pseudoXOF`, `sm3hash`, `get_random_number`.
    Iccs,
    /// PQClean namespaced API: `PQCLEAN_randombytes` and the common symmetric code.
    Nist,
}

/// The link step of an instance as the build stage ran it.
#[derive(Debug, Clone)]
pub struct LinkCommand {
    /// argv of the link.
    pub argv: Vec<String>,
    /// Working folder the link ran in.
    pub cwd: PathBuf,
}

impl LinkCommand {
    /// Input objects and archives of the link (absolute paths).
    pub fn inputs(&self) -> Vec<PathBuf> {
        self.argv
            .iter()
            .skip(1)
            .filter(|a| !a.starts_with('-') && (a.ends_with(".o") || a.ends_with(".a")))
            .map(|a| {
                let p = Path::new(a);
                if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    self.cwd.join(p)
                }
            })
            .collect()
    }

    /// The version script argument's path (absolute), if any.
    pub fn version_script(&self) -> Option<PathBuf> {
        self.argv.iter().find_map(|a| {
            a.strip_prefix("-Wl,--version-script=").map(|p| {
                let p = Path::new(p);
                if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    self.cwd.join(p)
                }
            })
        })
    }
}

/// Split a `$ ` log line produced by the build stage's POSIX shell quoting.
pub fn shell_split(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => cur.push(ch),
                            Some(ch) => {
                                cur.push('\\');
                                cur.push(ch);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(ch) => cur.push(ch),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(ch) = chars.next() {
                    cur.push(ch);
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

/// Find the last link command that produced `lib<label>.so` for candidate `id` in the build
/// log text.
pub fn find_link_command(log: &str, id: &str, label: &str) -> Option<Vec<String>> {
    let want = pqperf_model::layout::RunLayout::library_rel(id, label);
    let mut found = None;
    for line in log.lines() {
        let Some(cmd) = line.strip_prefix("$ ") else {
            continue;
        };
        if !cmd.contains("-shared") || !cmd.contains(&want) {
            continue;
        }
        let Ok(argv) = shell_split(cmd) else { continue };
        let out_ok = argv
            .iter()
            .position(|a| a == "-o")
            .and_then(|i| argv.get(i + 1))
            .is_some_and(|o| o.ends_with(&want));
        if out_ok && argv.iter().any(|a| a == "-shared") {
            found = Some(argv);
        }
    }
    found
}

/// The link command of an instance from a run directory's build log.
pub fn link_command(run_dir: &Path, id: &str, label: &str) -> Result<LinkCommand, ProfileError> {
    let layout = pqperf_model::layout::RunLayout::new(run_dir);
    let log_path = layout.build_log(id);
    let log = std::fs::read_to_string(&log_path).map_err(|e| ProfileError::io(&log_path, e))?;
    let argv = find_link_command(&log, id, label).ok_or_else(|| {
        ProfileError::Other(format!(
            "relink: no link command for {id}/{label} in {}",
            log_path.display()
        ))
    })?;
    let cwd = layout.build_scratch(id, label);
    if !cwd.is_dir() {
        return Err(ProfileError::Other(format!(
            "relink: work folder {} is gone (rebuild the instance)",
            cwd.display()
        )));
    }
    Ok(LinkCommand { argv, cwd })
}

/// A finished profiling build.
#[derive(Debug, Clone)]
pub struct Relinked {
    /// The instrumented library (absolute).
    pub library: PathBuf,
    /// Symbols wrapped.
    pub wrapped: Vec<String>,
    /// argv of the relink (for the log).
    pub argv: Vec<String>,
    /// Link inputs (objects and archives), for the survey.
    pub inputs: Vec<PathBuf>,
}

/// Relink `link` into `out_lib` with the wrappers for `kind`; temporary files go to
/// `scratch`.
pub fn relink(
    link: &LinkCommand,
    kind: WrapKind,
    scratch: &Path,
    out_lib: &Path,
) -> Result<Relinked, ProfileError> {
    // The link runs in the instance's work folder: every path we add must be absolute.
    std::fs::create_dir_all(scratch).map_err(|e| ProfileError::io(scratch, e))?;
    let scratch = &std::fs::canonicalize(scratch).map_err(|e| ProfileError::io(scratch, e))?;
    let out_lib = &absolute(out_lib)?;
    let inputs = link.inputs();
    let objs = objscan::read_inputs(&inputs)?;
    let candidates: Vec<&str> = match kind {
        WrapKind::Iccs => wrapc::ICCS_SYMBOLS.to_vec(),
        WrapKind::Nist => wrapc::nist_symbols(),
    };
    let wrapped = objscan::wrappable(&objs, &candidates);
    std::fs::create_dir_all(scratch).map_err(|e| ProfileError::io(scratch, e))?;
    let wrap_o = wrapc::compile_wrap_object(&link.argv[0], scratch, &wrapped, &[])?;
    // Version script with the control exports added to the global list.
    let map_path = scratch.join("exports.map");
    let map = match link.version_script() {
        Some(p) => {
            let text = std::fs::read_to_string(&p).map_err(|e| ProfileError::io(&p, e))?;
            add_exports(&text)
        }
        None => String::new(),
    };
    if !map.is_empty() {
        std::fs::write(&map_path, &map).map_err(|e| ProfileError::io(&map_path, e))?;
    }
    if let Some(d) = out_lib.parent() {
        std::fs::create_dir_all(d).map_err(|e| ProfileError::io(d, e))?;
    }
    let tmp_lib = out_lib.with_extension("so.tmp");
    let mut argv: Vec<String> = Vec::with_capacity(link.argv.len() + wrapped.len() + 4);
    // The wrapper object goes before the first input, so that its `__real_` references are
    // seen before any archive (the provider) is scanned.
    let first_input = link
        .argv
        .iter()
        .skip(1)
        .position(|a| !a.starts_with('-') && (a.ends_with(".o") || a.ends_with(".a")))
        .map(|p| p + 1)
        .unwrap_or(1);
    let mut i = 0;
    while i < link.argv.len() {
        let a = &link.argv[i];
        if i == first_input {
            argv.push(wrap_o.display().to_string());
        }
        if a.starts_with("-Wl,--version-script=") && !map.is_empty() {
            argv.push(format!("-Wl,--version-script={}", map_path.display()));
        } else if a == "-o" && i + 1 < link.argv.len() {
            argv.push("-o".into());
            argv.push(tmp_lib.display().to_string());
            argv.extend(wrapc::wrap_link_args(&wrapped));
            i += 1;
        } else {
            argv.push(a.clone());
        }
        i += 1;
    }
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&link.cwd)
        .output()
        .map_err(|e| ProfileError::Tool(format!("{}: {e}", argv[0])))?;
    if !out.status.success() {
        return Err(ProfileError::Tool(format!(
            "relink failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    std::fs::rename(&tmp_lib, out_lib).map_err(|e| ProfileError::io(out_lib, e))?;
    Ok(Relinked {
        library: out_lib.to_path_buf(),
        wrapped,
        argv,
        inputs,
    })
}

fn absolute(p: &Path) -> Result<PathBuf, ProfileError> {
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    let cwd = std::env::current_dir().map_err(|e| ProfileError::io(p, e))?;
    Ok(cwd.join(p))
}

/// Insert the control exports after the `global:` line of a version script.
pub fn add_exports(map: &str) -> String {
    let mut out = String::new();
    let mut done = false;
    for line in map.lines() {
        out.push_str(line);
        out.push('\n');
        if !done && line.trim() == "global:" {
            for e in wrapc::CONTROL_EXPORTS {
                out.push_str(&format!("    {e};\n"));
            }
            done = true;
        }
    }
    if !done {
        // No global section: export the controls in a version node of their own.
        out.push_str("PQPERF_HASHPROF {\n  global:\n");
        for e in wrapc::CONTROL_EXPORTS {
            out.push_str(&format!("    {e};\n"));
        }
        out.push_str("};\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_quoted() {
        assert_eq!(
            shell_split("gcc -DN=\"x y\" 'a b' 'it'\"'\"'s' c").unwrap(),
            vec!["gcc", "-DN=x y", "a b", "it's", "c"]
        );
        assert_eq!(shell_split("a  ''").unwrap(), vec!["a", ""]);
    }

    #[test]
    fn finds_last_link() {
        let log = "# sign-90/x (reference, flags guide)\n$ gcc -c a.c -o .pqperf-obj/a.o\n\
                   $ gcc -shared -fPIC a.o /r/provider/libp.a -o /r/lib/sign-90/libx.so -lm\n\
                   # exit status 1\n$ gcc -shared -fPIC b.o -o /r/lib/sign-90/libx.so -lm\n\
                   $ gcc -shared c.o -o /r/lib/sign-90/libxy.so\n";
        let argv = find_link_command(log, "sign-90", "x").unwrap();
        assert!(argv.contains(&"b.o".to_string()));
        assert!(find_link_command(log, "sign-90", "z").is_none());
    }

    #[test]
    fn exports_added() {
        let m = "NGCC_1 {\n  global:\n    sig_sign;\n  local:\n    *;\n};\n";
        let out = add_exports(m);
        assert!(out.contains("  global:\n    ngcc_hashprof_tick_source;\n"));
        assert!(out.contains("    sig_sign;\n"));
    }
}
