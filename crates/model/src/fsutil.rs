//! Filesystem helpers shared by every stage: atomic writes (temp file + rename), directory
//! trees staged beside their target and swapped in with renames, I/O errors that name the
//! operation and the path, and the write-fault injection the crash tests use.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// An I/O error that names what was being done and to which path ("writing
/// runs/x/build.json: No space left on device (os error 28)"); the kind is kept.
pub fn io_err(op: &str, path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{op} {}: {e}", path.display()))
}

/// Environment variable of the write-fault injection used by the crash tests:
/// `N:kill` (SIGKILL this process when it starts its N-th file write, N ≥ 1) or `N:enospc`
/// (that write and every later one fails with "No space left on device"). Counted over
/// [`write_atomic`] and [`write_staged`] in this process; unset in normal use.
pub const FAULT_ENV: &str = "PQPERF_FAULT_AFTER_WRITES";

static WRITES: AtomicUsize = AtomicUsize::new(0);

/// Count one file write and apply the injected fault ([`FAULT_ENV`]) if it is due.
fn fault_point(path: &Path) -> std::io::Result<()> {
    let n = WRITES.fetch_add(1, Ordering::SeqCst) + 1;
    let Some(spec) = std::env::var_os(FAULT_ENV) else {
        return Ok(());
    };
    let spec = spec.to_string_lossy();
    let (at, what) = spec.split_once(':').unwrap_or((&spec, "kill"));
    let Ok(at) = at.trim().parse::<usize>() else {
        return Ok(());
    };
    if n < at {
        return Ok(());
    }
    match what {
        "enospc" => Err(io_err(
            "writing",
            path,
            std::io::Error::from(nix::errno::Errno::ENOSPC),
        )),
        _ => {
            let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
            // SIGKILL cannot be caught; should raise fail, stop as abruptly as it would.
            std::process::abort()
        }
    }
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A name for a temporary sibling of `path`, unique in this process.
fn temp_sibling(path: &Path, what: &str) -> std::io::Result<PathBuf> {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("no file name in {}", path.display())))?;
    Ok(parent_of(path).join(format!(
        ".{}.{}-{}-{}",
        name.to_string_lossy(),
        what,
        std::process::id(),
        SEQ.fetch_add(1, Ordering::SeqCst)
    )))
}

/// Write `bytes` to `path` atomically: the data goes to a temporary file in the same
/// directory, is flushed and synced, then renamed over `path`. Readers never see a torn
/// file, and a crash leaves either the old content or the new one. Parent directories are
/// created as needed. Errors name the operation and the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent_of(path);
    std::fs::create_dir_all(dir).map_err(|e| io_err("creating directory", dir, e))?;
    let tmp = temp_sibling(path, "tmp")?;
    let result = (|| {
        fault_point(path)?;
        let mut f = std::fs::File::create(&tmp).map_err(|e| io_err("creating", &tmp, e))?;
        f.write_all(bytes).map_err(|e| io_err("writing", path, e))?;
        f.sync_all().map_err(|e| io_err("syncing", path, e))?;
        std::fs::rename(&tmp, path).map_err(|e| io_err("renaming into place", path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Write a file inside a staging tree (see [`swap_dir`]): written in place (the tree is
/// not visible under its final name yet), without a sync of its own; parents created.
pub fn write_staged(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent_of(path);
    std::fs::create_dir_all(dir).map_err(|e| io_err("creating directory", dir, e))?;
    fault_point(path)?;
    std::fs::write(path, bytes).map_err(|e| io_err("writing", path, e))
}

/// Flush a staged tree to disk before it is swapped in (`syncfs` of its filesystem), so that
/// after a power loss the renamed tree is not made of empty files.
pub fn sync_tree(dir: &Path) -> std::io::Result<()> {
    let f = std::fs::File::open(dir).map_err(|e| io_err("opening", dir, e))?;
    nix::unistd::syncfs(&f).map_err(|e| io_err("syncing", dir, std::io::Error::from(e)))
}

/// A fresh, empty staging directory for `target` in the folder `holder` (on the filesystem
/// of `target`, so that it can be renamed over it; usually `target`'s parent):
/// `<holder>/.<name>.staging-<pid>-<n>`. Leftovers of an earlier process killed while
/// staging for the same target are removed first.
pub fn staging_dir(holder: &Path, target: &Path) -> std::io::Result<PathBuf> {
    remove_leftovers(holder, target);
    let name = target
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("no file name in {}", target.display())))?;
    let dir = temp_sibling(&holder.join(name), "staging")?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| io_err("removing", &dir, e))?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| io_err("creating directory", &dir, e))?;
    Ok(dir)
}

/// Remove staging or old trees of `target` in `holder` left by processes that no longer run.
pub fn remove_leftovers(holder: &Path, target: &Path) {
    let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let Ok(rd) = std::fs::read_dir(holder) else {
        return;
    };
    let prefix = format!(".{name}.");
    for e in rd.filter_map(Result::ok) {
        let n = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = n.strip_prefix(&prefix) else {
            continue;
        };
        let Some((kind, ids)) = rest.split_once('-') else {
            continue;
        };
        if !matches!(kind, "staging" | "old") {
            continue;
        }
        let pid: Option<u32> = ids.split('-').next().and_then(|p| p.parse().ok());
        let alive = pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists());
        if !alive && e.file_type().is_ok_and(|t| t.is_dir() && !t.is_symlink()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Put the complete tree `staged` in place of `target` with renames only: when `target`
/// exists the two are exchanged in one step (`renameat2(RENAME_EXCHANGE)`), so a reader or a
/// crash sees the old tree or the new one, never a mix or nothing; the old tree is then
/// removed (returned path no longer exists). Both must be on one filesystem.
pub fn swap_dir(staged: &Path, target: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(target).is_err() {
        return std::fs::rename(staged, target)
            .map_err(|e| io_err(&format!("renaming {} to", staged.display()), target, e));
    }
    exchange(staged, target)?;
    // `staged` now holds the old tree; give it a name that says so, then remove it.
    let name = target.file_name().unwrap_or_default();
    let old = temp_sibling(&parent_of(staged).join(name), "old")?;
    std::fs::rename(staged, &old).map_err(|e| io_err("renaming", staged, e))?;
    std::fs::remove_dir_all(&old).map_err(|e| io_err("removing the old tree", &old, e))
}

/// Exchange two paths atomically (both must exist).
pub fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
    renameat2(AT_FDCWD, a, AT_FDCWD, b, RenameFlags::RENAME_EXCHANGE).map_err(|e| {
        io_err(
            &format!("exchanging {} with", a.display()),
            b,
            std::io::Error::from(e),
        )
    })
}

/// Copy the directory tree `from` into `to` (created as needed), regular files by content.
/// Used to make writable copies of fixtures and datasets; symlinks are followed.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dst = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else {
            std::fs::copy(e.path(), &dst)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_content_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("pqperf-fsutil-{}", std::process::id()));
        let p = dir.join("sub/a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn swap_replaces_a_tree_whole_and_errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("sys");
        write_atomic(&target.join("old.txt"), b"old").unwrap();
        let st = staging_dir(dir.path(), &target).unwrap();
        write_staged(&st.join("a/new.txt"), b"new").unwrap();
        swap_dir(&st, &target).unwrap();
        assert!(!target.join("old.txt").exists());
        assert_eq!(std::fs::read(target.join("a/new.txt")).unwrap(), b"new");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["sys"]);
        // A file where a directory is needed: the error names the path.
        let e = write_atomic(&target.join("a/new.txt/x"), b"x").unwrap_err();
        assert!(e.to_string().contains("a/new.txt"), "{e}");
    }

    #[test]
    fn leftovers_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("site");
        // pid 0 is never a live process under /proc.
        let dead = dir.path().join(".site.staging-0-0");
        std::fs::create_dir_all(dead.join("x")).unwrap();
        let live = dir
            .path()
            .join(format!(".site.staging-{}-99", std::process::id()));
        std::fs::create_dir_all(&live).unwrap();
        remove_leftovers(dir.path(), &target);
        assert!(!dead.exists());
        assert!(live.exists());
    }
}
