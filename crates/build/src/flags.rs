//! Compiler flag sets (spec iccs-api-and-kat.md §5.4, method.md §2.5) and shell quoting of
//! logged command lines.

/// A recorded flag set; its name is what build.json's `flags` field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlagSet {
    /// Guide reference flags `-std=c99 -Wpedantic -Wall -Wextra -O2` + harness additions.
    Guide,
    /// Guide performance flags for this architecture (optimized variants) + `-fPIC`.
    GuidePerformance,
    /// Harness default `-O2 -std=gnu11 …` + permissive set: the fallback.
    HarnessDefault,
}

/// Harness additions appended to the guide reference flags.
pub const HARNESS_ADDITIONS: &[&str] = &[
    "-fPIC",
    "-D_GNU_SOURCE",
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=incompatible-pointer-types",
    "-Wno-error=int-conversion",
    "-Wno-error=implicit-int",
];

/// Guide reference flags (x86 and ARM).
pub const GUIDE_REFERENCE: &[&str] = &["-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-O2"];

/// Guide performance flags, x86-64.
pub const GUIDE_PERFORMANCE_X86: &[&str] = &[
    "-O3",
    "-march=x86-64",
    "-mavx2",
    "-mtune=native",
    "-flto",
    "-fomit-frame-pointer",
    "-std=c99",
    "-Wpedantic",
    "-Wall",
    "-Wextra",
];

/// Guide performance flags, AArch64 (from the reference campaign, quoting the ARM guide).
pub const GUIDE_PERFORMANCE_ARM: &[&str] = &[
    "-O3",
    "-march=armv8.2-a+sve",
    "-flto",
    "-fomit-frame-pointer",
    "-std=c99",
    "-Wpedantic",
    "-Wall",
    "-Wextra",
];

/// Harness default flags (with the permissive set).
pub const HARNESS_DEFAULT: &[&str] = &[
    "-O2",
    "-fPIC",
    "-std=gnu11",
    "-Wall",
    "-Wno-unused",
    "-Wno-unknown-pragmas",
    "-fno-strict-aliasing",
    "-fwrapv",
    "-fno-omit-frame-pointer",
    "-D_GNU_SOURCE",
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=incompatible-pointer-types",
    "-Wno-error=int-conversion",
    "-Wno-error=implicit-int",
];

impl FlagSet {
    /// build.json name (`guide`, `guide-performance`, `harness-default`).
    pub fn name(self) -> &'static str {
        match self {
            FlagSet::Guide => "guide",
            FlagSet::GuidePerformance => "guide-performance",
            FlagSet::HarnessDefault => "harness-default",
        }
    }

    /// Parse a build.json name.
    pub fn parse(s: &str) -> Option<FlagSet> {
        match s {
            "guide" => Some(FlagSet::Guide),
            "guide-performance" => Some(FlagSet::GuidePerformance),
            "harness-default" => Some(FlagSet::HarnessDefault),
            _ => None,
        }
    }

    /// The first flag set for a variant: guide reference for `reference`, guide
    /// performance for `optimized-*`.
    pub fn for_variant(variant: &str) -> FlagSet {
        if variant == "reference" {
            FlagSet::Guide
        } else {
            FlagSet::GuidePerformance
        }
    }

    /// C compiler flags of the set on `arch` (`x86_64`, `aarch64`). `None` when the guide
    /// has no performance configuration for the architecture.
    pub fn cflags(self, arch: &str) -> Option<Vec<String>> {
        let v: Vec<&str> = match self {
            FlagSet::Guide => GUIDE_REFERENCE
                .iter()
                .chain(HARNESS_ADDITIONS)
                .copied()
                .collect(),
            FlagSet::GuidePerformance => {
                let base = match arch {
                    "x86_64" => GUIDE_PERFORMANCE_X86,
                    "aarch64" => GUIDE_PERFORMANCE_ARM,
                    _ => return None,
                };
                base.iter().copied().chain(["-fPIC"]).collect()
            }
            FlagSet::HarnessDefault => HARNESS_DEFAULT.to_vec(),
        };
        Some(v.into_iter().map(str::to_string).collect())
    }

    /// True if the set uses link-time optimisation (link must get the flags too).
    pub fn lto(self) -> bool {
        matches!(self, FlagSet::GuidePerformance)
    }
}

/// Add an instance's own flag to a flag set's flags. A `-march=BASE+ext…` flag (an ISA
/// extension a PQClean implementation requires, e.g. `+sha3` on AArch64) is merged into the
/// set's `-march` when it has one, keeping the set's base and extensions
/// (`-march=armv8.2-a+sve` + `-march=armv8.2-a+sha3` → `-march=armv8.2-a+sve+sha3`), since a
/// second `-march` would silently replace the guide's; otherwise the flag is appended once.
pub fn add_instance_flag(cflags: &mut Vec<String>, flag: &str) {
    if cflags.iter().any(|f| f == flag) {
        return;
    }
    if let Some(extra) = flag.strip_prefix("-march=")
        && let Some(pos) = cflags.iter().position(|f| f.starts_with("-march="))
    {
        let mut merged = cflags[pos].clone();
        for ext in extra.split('+').skip(1) {
            if !merged.split('+').skip(1).any(|e| e == ext) {
                merged.push('+');
                merged.push_str(ext);
            }
        }
        cflags[pos] = merged;
        return;
    }
    cflags.push(flag.to_string());
}

/// Quote one argument like Python's `shlex.quote`.
pub fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\"'\"'"))
    }
}

/// `$ <shell-quoted argv>` as logged.
pub fn log_command(argv: &[String]) -> String {
    let parts: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
    format!("$ {}", parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_strings() {
        let g = FlagSet::Guide.cflags("x86_64").unwrap().join(" ");
        assert!(g.starts_with("-std=c99 -Wpedantic -Wall -Wextra -O2 -fPIC -D_GNU_SOURCE"));
        let p = FlagSet::GuidePerformance
            .cflags("x86_64")
            .unwrap()
            .join(" ");
        assert_eq!(
            p,
            "-O3 -march=x86-64 -mavx2 -mtune=native -flto -fomit-frame-pointer -std=c99 -Wpedantic -Wall -Wextra -fPIC"
        );
        assert!(FlagSet::GuidePerformance.cflags("riscv64").is_none());
        assert_eq!(
            FlagSet::for_variant("optimized-avx2"),
            FlagSet::GuidePerformance
        );
        assert_eq!(
            FlagSet::parse("harness-default"),
            Some(FlagSet::HarnessDefault)
        );
    }

    #[test]
    fn march_extensions_merge_into_the_set() {
        let mut arm = FlagSet::GuidePerformance.cflags("aarch64").unwrap();
        add_instance_flag(&mut arm, "-march=armv8.2-a+sha3");
        add_instance_flag(&mut arm, "-march=armv8.2-a+sve");
        assert_eq!(
            arm.iter()
                .filter(|f| f.starts_with("-march="))
                .collect::<Vec<_>>(),
            ["-march=armv8.2-a+sve+sha3"]
        );
        let mut guide = FlagSet::Guide.cflags("aarch64").unwrap();
        add_instance_flag(&mut guide, "-march=armv8.2-a+sha3");
        add_instance_flag(&mut guide, "-march=armv8.2-a+sha3");
        assert_eq!(guide.last().unwrap(), "-march=armv8.2-a+sha3");
        assert_eq!(guide.iter().filter(|f| f.starts_with("-march")).count(), 1);
        let mut x86 = FlagSet::Guide.cflags("x86_64").unwrap();
        add_instance_flag(&mut x86, "-mavx2");
        assert_eq!(x86.last().unwrap(), "-mavx2");
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("-DX=1"), "-DX=1");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\"'\"'s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(
            log_command(&["gcc".into(), "-DN=\"x y\"".into()]),
            "$ gcc '-DN=\"x y\"'"
        );
    }
}
