//! Records the git commit pqperf is built from (HEAD when the build ran) as
//! `PQPERF_GIT_COMMIT`: `unknown` without git or outside a repository.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).filter(|s| s.len() == 40);
    // Rerun when HEAD moves (a commit, a checkout).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        for f in ["HEAD", "logs/HEAD"] {
            let p = std::path::Path::new(&dir).join(f);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    let value = commit.unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=PQPERF_GIT_COMMIT={value}");
}
