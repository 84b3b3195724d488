//! Run-directory I/O: build.json, catalog.toml and campaign.json as typed values (campaign.json
//! changed under its lock), the commands noted in it, file walks and stale temporary files.

use std::path::{Path, PathBuf};

use pqperf_model::buildjson::BuildJson;
use pqperf_model::campaign::Campaign;
use pqperf_model::catalog::Catalog;
use pqperf_model::fsutil::write_atomic;
use pqperf_model::layout::RunLayout;
use pqperf_model::pyjson;

use crate::CampaignError;

type Res<T> = Result<T, CampaignError>;

/// The run's build.json (empty if missing), read by [`RunLayout::read_build`].
pub fn load_build(run: &Path) -> Res<BuildJson> {
    Ok(RunLayout::new(run).read_build()?)
}

/// The run's catalog (`catalog.toml`): `None` when there is none, an error naming the file
/// and line when it is malformed.
pub fn load_catalog(run: &Path) -> Res<Option<Catalog>> {
    let p = RunLayout::new(run).catalog();
    if !p.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&p)
        .map_err(|e| CampaignError::msg(format!("{}: {e}", p.display())))?;
    Catalog::parse(&text, &p)
        .map(Some)
        .map_err(|e| CampaignError::msg(e.to_string()))
}

pub(crate) fn remove_stale_temps(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            remove_stale_temps(&p);
        } else if name.starts_with('.') && (name.ends_with(".tmp") || name.contains(".tmp-")) {
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// The lock file of a run directory (see [`lock_run_dir`]).
pub use pqperf_model::layout::RUN_LOCK;

/// The lock a command holds on the run directory it writes, for as long as it runs
/// (released when dropped).
#[derive(Debug)]
pub struct RunLock {
    _lock: nix::fcntl::Flock<std::fs::File>,
}

/// A run directory locked for writing (as cargo's `Layout` holds its build-directory lock):
/// its [`RunLayout`] together with the [`RunLock`], so that what holds the paths holds the
/// lock, for as long as it lives. `pqperf_model::layout::RunLayout` itself stays free of
/// I/O (model uses no seam); this is the writers' view of it.
#[derive(Debug)]
pub struct LockedRun {
    layout: RunLayout,
    _lock: RunLock,
}

impl LockedRun {
    /// Locks the run directory `run` (see [`lock_run_dir`]).
    pub fn lock(run: &Path, shared: bool) -> Res<LockedRun> {
        lock_run_dir(run, shared)
    }

    /// The run directory's paths.
    pub fn layout(&self) -> &RunLayout {
        &self.layout
    }

    /// Read-modify-write of this run's campaign.json ([`update_campaign`]).
    pub fn update_campaign(&self, f: impl FnOnce(&mut Campaign)) -> Res<()> {
        update_campaign(self.layout.root(), f)
    }

    /// [`try_update_campaign`] of this run.
    pub fn try_update_campaign(&self, f: impl FnOnce(&mut Campaign) -> Res<()>) -> Res<()> {
        try_update_campaign(self.layout.root(), f)
    }
}

impl std::ops::Deref for LockedRun {
    type Target = RunLayout;
    fn deref(&self) -> &RunLayout {
        &self.layout
    }
}

/// Lock the run directory `run` (which must exist) for a command that writes it: exclusive,
/// or shared for one shard of a parallel campaign (`shared`: shards write disjoint
/// records, so they run side by side, while any other writer waits for all of them). When
/// another pqperf holds it, says so on stderr and waits, as cargo does. The lock is held as
/// long as the returned [`LockedRun`] lives.
pub fn lock_run_dir(run: &Path, shared: bool) -> Res<LockedRun> {
    let layout = RunLayout::new(run);
    let lock = flock_run_dir(run, &layout, shared)?;
    Ok(LockedRun {
        layout,
        _lock: lock,
    })
}

fn flock_run_dir(run: &Path, layout: &RunLayout, shared: bool) -> Res<RunLock> {
    use nix::fcntl::{Flock, FlockArg};
    let path = layout.run_lock();
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| pqperf_model::fsutil::io_err("opening the lock", &path, e))
    };
    let (now, wait) = if shared {
        (FlockArg::LockSharedNonblock, FlockArg::LockShared)
    } else {
        (FlockArg::LockExclusiveNonblock, FlockArg::LockExclusive)
    };
    let lock_err = |e: nix::errno::Errno| {
        CampaignError::Io(pqperf_model::fsutil::io_err(
            "locking",
            &path,
            std::io::Error::from(e),
        ))
    };
    match Flock::lock(open()?, now) {
        Ok(l) => Ok(RunLock { _lock: l }),
        Err((f, nix::errno::Errno::EWOULDBLOCK)) => {
            eprintln!(
                "waiting for the lock of run directory {} (another pqperf command writes it)",
                run.display()
            );
            Flock::lock(f, wait)
                .map(|l| RunLock { _lock: l })
                .map_err(|(_, e)| lock_err(e))
        }
        Err((_, e)) => Err(lock_err(e)),
    }
}

/// The run's campaign.json as its model type: empty when there is none, an error naming the
/// file when it cannot be read or is not a campaign.json.
pub fn read_campaign(run: &Path) -> Res<Campaign> {
    let p = RunLayout::new(run).campaign_json();
    if !p.exists() {
        return Ok(Campaign::default());
    }
    Ok(pyjson::read::<Campaign>(&p, &p)?)
}

/// Read-modify-write of campaign.json under `.campaign.lock`, through its model type: `f`
/// changes its own fields, every other key (and the key order as read) stays.
pub fn update_campaign(run: &Path, f: impl FnOnce(&mut Campaign)) -> Res<()> {
    try_update_campaign(run, |c| {
        f(c);
        Ok(())
    })
}

/// [`update_campaign`] with a change that can fail: nothing is written when `f` fails.
pub fn try_update_campaign(run: &Path, f: impl FnOnce(&mut Campaign) -> Res<()>) -> Res<()> {
    let layout = RunLayout::new(run);
    let _lock = pqperf_ffi::procinfo::lock_exclusive(&layout.campaign_lock())?;
    let mut c = read_campaign(run)?;
    f(&mut c)?;
    write_campaign(&layout.campaign_json(), &c)
}

/// Writes `c` to `path` (atomically, in the reference serialisation).
pub(crate) fn write_campaign(path: &Path, c: &Campaign) -> Res<()> {
    let text =
        pyjson::to_string(c).map_err(|e| CampaignError::msg(format!("{}: {e}", path.display())))?;
    write_atomic(path, text.as_bytes())?;
    Ok(())
}

/// Appends `command` (no paths) to the commands pqperf ran in this run directory
/// (`campaign.json` → `pqperf.commands`), once.
pub fn note_command(run: &Path, command: &str) -> Res<()> {
    update_campaign(run, |c| {
        let pq = c.pqperf_mut();
        pq.version = Some(env!("CARGO_PKG_VERSION").to_string());
        pq.note_command(command);
    })
}

pub(crate) fn has_records(run: &Path) -> bool {
    walk_files(&RunLayout::new(run).records_dir())
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "json"))
}

/// Every file below `dir`, sorted. Symbolic links are listed as they are, never followed (a
/// link to a directory is not descended into; `dir` itself, when a link, is the one entry).
pub fn walk_files(dir: &Path) -> Vec<PathBuf> {
    if dir
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        return vec![dir.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
