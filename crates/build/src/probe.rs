//! Values of ICCS headers asked from the compiler, never matched in the header text.
//!
//! A generated translation unit includes the instance header (with the instance's include
//! folders and `-D` defines, exactly as a build passes them) and turns each requested macro
//! into a constant: `const char v[] = NAME;` for names, `const long long v = (NAME);` for
//! sizes. It is compiled to an object file — never linked, never run — and the constant's
//! bytes are read back from the object's symbol table. Whatever the macro goes through
//! (other macros in other headers, mode switches, `-D` parameter sets, string concatenation,
//! arithmetic, `sizeof`), the value is the compiler's.

use std::path::{Path, PathBuf};

use crate::flags::log_command;

/// Everything needed to compile a probe of one instance header.
#[derive(Debug, Clone)]
pub struct HeaderProbe {
    /// Compiler (`gcc`).
    pub cc: String,
    /// Working directory of the compiler (relative `-I` folders resolve from here).
    pub cwd: PathBuf,
    /// Folder for the generated source and object (created if missing; files are removed).
    pub scratch: PathBuf,
    /// Compiler arguments: flags, `-I<dir>`, `-D<def>` in build order.
    pub args: Vec<String>,
    /// Header to include (`SIG_AlgorithmInstance.h`), found through the `-I` folders.
    pub header: String,
}

/// Why a macro could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeFailure {
    /// What the preprocessor expands the macro to (when it got that far).
    pub expansion: Option<String>,
    /// First lines of the compiler's error output (or the reason).
    pub message: String,
}

impl std::fmt::Display for ProbeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(x) = &self.expansion {
            write!(f, "expands to `{x}`; ")?;
        }
        f.write_str(&self.message)
    }
}

/// One evaluation: the value (`None` when the macro is not defined) and the commands run
/// (`$ <argv>` lines followed by compiler output, for build logs).
#[derive(Debug, Clone)]
pub struct Probed<T> {
    /// The value, `None` when not defined, or why it could not be evaluated.
    pub value: Result<Option<T>, ProbeFailure>,
    /// The commands and compiler output.
    pub log: String,
}

const SYMBOL: &str = "pqperf_probe_value";

impl HeaderProbe {
    /// Evaluate `name` as a C string (e.g. `ALGORITHM_INSTANCE`).
    pub fn string(&self, name: &str) -> Probed<String> {
        let decl = format!(
            "__attribute__((used)) const char {SYMBOL}[] = {name};\n_Static_assert(sizeof({name}) > 1, \"{name} is an empty string\");\n"
        );
        let mut log = String::new();
        let value = self.compile(name, &decl, &mut log).map(|bytes| {
            bytes.map(|b| {
                let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                String::from_utf8_lossy(&b[..end]).into_owned()
            })
        });
        Probed { value, log }
    }

    /// Evaluate `name` as an integer constant expression (e.g. `DIGEST_BIT_LENGTH`).
    pub fn integer(&self, name: &str) -> Probed<i64> {
        let decl = format!("__attribute__((used)) const long long {SYMBOL} = ({name});\n");
        let mut log = String::new();
        let value = self.compile(name, &decl, &mut log).and_then(|bytes| {
            bytes
                .map(|b| {
                    <[u8; 8]>::try_from(b.as_slice())
                        .map(i64::from_le_bytes)
                        .map_err(|_| ProbeFailure {
                            expansion: None,
                            message: format!("{name}: constant of {} bytes", b.len()),
                        })
                })
                .transpose()
        });
        Probed { value, log }
    }

    /// True if the header declares the identifier `name` (a function or object; e.g.
    /// PQClean's `…_crypto_sign_signature_ctx`): a probe taking its address compiles.
    pub fn declares(&self, name: &str) -> Probed<bool> {
        let mut log = String::new();
        let body = format!(
            "/* pqperf header probe (generated): compiled to an object, never linked or run. */\n#include \"{}\"\n__attribute__((used)) static const void *const {SYMBOL} = (const void *)&{name};\n",
            self.header
        );
        let value = (|| {
            std::fs::create_dir_all(&self.scratch)
                .map_err(|e| format!("{}: {e}", self.scratch.display()))?;
            let src = self.scratch.join(format!("pqperf-probe-{name}.c"));
            let obj = self.scratch.join(format!("pqperf-probe-{name}.o"));
            std::fs::write(&src, body).map_err(|e| format!("{}: {e}", src.display()))?;
            let mut argv = vec![self.cc.clone()];
            argv.extend(self.args.iter().cloned());
            argv.extend(["-O0".into(), "-fno-lto".into(), "-w".into(), "-c".into()]);
            argv.push(src.to_string_lossy().into_owned());
            argv.push("-o".into());
            argv.push(obj.to_string_lossy().into_owned());
            let r = run(&self.scratch, &self.cwd, &argv, &mut log);
            let _ = std::fs::remove_file(&src);
            let _ = std::fs::remove_file(&obj);
            match r {
                Ok(()) => Ok(Some(true)),
                // gcc runs with LC_ALL=C: "'<name>' undeclared".
                Err(e) if e.contains(&format!("'{name}' undeclared")) => Ok(Some(false)),
                Err(e) => Err(e),
            }
        })()
        .map_err(|message| ProbeFailure {
            expansion: None,
            message,
        });
        Probed { value, log }
    }

    fn source(&self, name: &str, body: &str) -> String {
        format!(
            "/* pqperf header probe (generated): compiled to an object, never linked or run. */\n#include \"{}\"\n#ifdef {name}\n{body}#endif\n",
            self.header
        )
    }

    /// Compile the probe; `Ok(None)` when the macro is not defined after the includes.
    fn compile(
        &self,
        name: &str,
        decl: &str,
        log: &mut String,
    ) -> Result<Option<Vec<u8>>, ProbeFailure> {
        let fail = |message: String| ProbeFailure {
            expansion: None,
            message,
        };
        std::fs::create_dir_all(&self.scratch)
            .map_err(|e| fail(format!("{}: {e}", self.scratch.display())))?;
        let src = self.scratch.join(format!("pqperf-probe-{name}.c"));
        let obj = self.scratch.join(format!("pqperf-probe-{name}.o"));
        std::fs::write(&src, self.source(name, decl))
            .map_err(|e| fail(format!("{}: {e}", src.display())))?;
        let mut argv = vec![self.cc.clone()];
        argv.extend(self.args.iter().cloned());
        // The value must land in the object itself (no LTO bytecode), at any optimisation.
        argv.extend(["-O0".into(), "-fno-lto".into(), "-w".into(), "-c".into()]);
        argv.push(src.to_string_lossy().into_owned());
        argv.push("-o".into());
        argv.push(obj.to_string_lossy().into_owned());
        let out = run(&self.scratch, &self.cwd, &argv, log);
        let result = match out {
            Err(e) => Err(fail(e)),
            Ok(()) => read_symbol(&obj).map_err(fail),
        };
        let result = match result {
            Err(mut f) => {
                f.expansion = self.expansion(name, log);
                Err(f)
            }
            ok => ok,
        };
        let _ = std::fs::remove_file(&src);
        let _ = std::fs::remove_file(&obj);
        result
    }

    /// What the preprocessor makes of `name` (`gcc -E`), for error messages.
    fn expansion(&self, name: &str, log: &mut String) -> Option<String> {
        let src = self.scratch.join(format!("pqperf-probe-{name}-E.c"));
        let marker = "pqperf_probe_expansion:";
        std::fs::write(&src, self.source(name, &format!("{marker} {name}\n"))).ok()?;
        let mut argv = vec![self.cc.clone()];
        argv.extend(self.args.iter().cloned());
        argv.extend(["-E".into(), "-P".into()]);
        argv.push(src.to_string_lossy().into_owned());
        log.push_str(&log_command(&argv));
        log.push('\n');
        // Contained like every compiler run on submitted code (a header may include
        // `/dev/zero`): writes only below the scratch folder, a time and memory limit.
        let out = crate::compile::run_compiler(&self.scratch, &self.cwd, &argv);
        let _ = std::fs::remove_file(&src);
        if out.failure.is_some() {
            return None;
        }
        let text = out.stdout;
        text.lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix(marker))
            .map(|x| x.trim().to_string())
    }
}

/// Run the compiler contained (`compile::run_compiler`: writes only below `scratch`, a time
/// and memory limit), logging `$ argv` and its output; the error carries the first lines.
fn run(scratch: &Path, cwd: &Path, argv: &[String], log: &mut String) -> Result<(), String> {
    log.push_str(&log_command(argv));
    log.push('\n');
    let o = crate::compile::run_compiler(scratch, cwd, argv);
    let text = format!("{}{}", o.stdout, o.stderr);
    log.push_str(&text);
    let Some(failure) = o.failure else {
        return Ok(());
    };
    let first: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("error"))
        .take(3)
        .collect();
    Err(if first.is_empty() {
        format!("{} failed ({failure})", argv[0])
    } else {
        first.join(" | ")
    })
}

/// Bytes of the probe constant in an object file (`None` if the macro was not defined).
fn read_symbol(obj: &Path) -> Result<Option<Vec<u8>>, String> {
    use object::{Object, ObjectSection, ObjectSymbol, SectionKind};
    let data = std::fs::read(obj).map_err(|e| format!("{}: {e}", obj.display()))?;
    let f = object::File::parse(&*data).map_err(|e| format!("{}: {e}", obj.display()))?;
    let Some(sym) = f.symbols().find(|s| s.name() == Ok(SYMBOL)) else {
        return Ok(None);
    };
    let idx = sym
        .section_index()
        .ok_or_else(|| format!("{SYMBOL} has no section"))?;
    let sec = f.section_by_index(idx).map_err(|e| e.to_string())?;
    let size = sym.size() as usize;
    if sec.kind() == SectionKind::UninitializedData {
        return Ok(Some(vec![0; size]));
    }
    let bytes = sec.data().map_err(|e| e.to_string())?;
    let start = sym.address().wrapping_sub(sec.address()) as usize;
    bytes
        .get(start..start + size)
        .map(|b| Some(b.to_vec()))
        .ok_or_else(|| format!("{SYMBOL} lies outside its section"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(dir: &Path, header: &str, defines: &[&str]) -> HeaderProbe {
        let mut args = vec![format!("-I{}", dir.display())];
        args.extend(defines.iter().map(|d| format!("-D{d}")));
        HeaderProbe {
            cc: "gcc".into(),
            cwd: dir.to_path_buf(),
            scratch: dir.join("scratch"),
            args,
            header: header.into(),
        }
    }

    #[test]
    fn values_come_from_the_compiler() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(
            d.join("cfg.h"),
            "#ifndef MODE\n#define MODE 2\n#endif\n#if MODE == 1\n#define NAME_ \"X-\" \"128\"\n#define N_ 16\n#else\n#define NAME_ \"X-\" \"256\"\n#define N_ 32\n#endif\n#define PK (2 * N_ + sizeof(int))\n",
        )
        .unwrap();
        std::fs::write(
            d.join("inst.h"),
            "#include \"cfg.h\"\n#define ALGORITHM_INSTANCE NAME_ // the real name\n#define BAD UNDEFINED_NAME\n#define NEG (-(N_))\n",
        )
        .unwrap();
        let p = probe(d, "inst.h", &[]);
        let s = p.string("ALGORITHM_INSTANCE");
        assert_eq!(s.value, Ok(Some("X-256".into())), "{}", s.log);
        assert!(s.log.starts_with("$ gcc -I"), "{}", s.log);
        assert_eq!(p.integer("PK").value, Ok(Some(68)));
        assert_eq!(p.integer("NEG").value, Ok(Some(-32)));
        assert_eq!(p.string("MISSING").value, Ok(None));
        // A -D parameter set.
        let p1 = probe(d, "inst.h", &["MODE=1"]);
        assert_eq!(
            p1.string("ALGORITHM_INSTANCE").value,
            Ok(Some("X-128".into()))
        );
        assert_eq!(p1.integer("PK").value, Ok(Some(36)));
        // Not a string: the error says what it expands to.
        let e = p.string("BAD").value.unwrap_err();
        assert_eq!(e.expansion.as_deref(), Some("UNDEFINED_NAME"), "{e}");
        assert!(e.message.contains("error"), "{e}");
        // Declarations.
        std::fs::write(
            d.join("api.h"),
            "int NS_sign_ctx(const char *ctx);\n#define NS_SIGN_CTX_MACRO 1\n",
        )
        .unwrap();
        let a = probe(d, "api.h", &[]);
        assert_eq!(a.declares("NS_sign_ctx").value, Ok(Some(true)));
        assert_eq!(a.declares("NS_sign").value, Ok(Some(false)));
        assert!(
            probe(d, "broken-api.h", &[])
                .declares("NS_sign")
                .value
                .is_err()
        );
        // Scratch files are removed.
        assert_eq!(std::fs::read_dir(d.join("scratch")).unwrap().count(), 0);
        // A header that does not compile.
        std::fs::write(
            d.join("broken.h"),
            "#include \"nowhere.h\"\n#define ALGORITHM_INSTANCE \"Y\"\n",
        )
        .unwrap();
        let e = probe(d, "broken.h", &[])
            .string("ALGORITHM_INSTANCE")
            .value
            .unwrap_err();
        assert!(e.message.contains("nowhere.h"), "{e}");
    }
}
