//! The test-system registry `systems.csv` (`ID;Arch;Hostname;Description`, ids `<arch>_<n>`):
//! lookup by hostname and architecture, and registration of this machine.

use std::path::Path;

use pqperf_model::sidecsv::{CsvTable, SystemRow};

use crate::CampaignError;

const HEADER: &str = "ID;Arch;Hostname;Description";

/// Rows of the registry at `path` (empty if the file does not exist).
pub fn load(path: &Path) -> Result<Vec<SystemRow>, CampaignError> {
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let t = CsvTable::read(path, path).map_err(|e| CampaignError::msg(e.to_string()))?;
    t.systems().map_err(|e| CampaignError::msg(e.to_string()))
}

/// Short architecture name used in ids: `x86_64` → `x86`, `aarch64` → `arm`.
pub fn arch_prefix(arch: &str) -> &str {
    match arch {
        "x86_64" => "x86",
        "aarch64" => "arm",
        a => a,
    }
}

/// The system id for `hostname` + `arch`: the first matching row.
pub fn find(rows: &[SystemRow], hostname: &str, arch: &str) -> Option<String> {
    rows.iter()
        .find(|r| r.hostname == hostname && r.arch == arch)
        .map(|r| r.id.clone())
}

/// Ids of the systems in published data (the reference campaign's `x86_1` and `arm_1`): a
/// new registration never takes one unless it is asked for by name.
pub const PUBLISHED_IDS: [&str; 2] = ["x86_1", "arm_1"];

/// Registers this machine (if not registered yet) and returns its id: `<arch>_<n>` with the
/// next n that is neither registered nor a published id ([`PUBLISHED_IDS`]). The file is
/// created with its header when missing.
pub fn register(
    path: &Path,
    hostname: &str,
    arch: &str,
    description: &str,
) -> Result<String, CampaignError> {
    register_as(path, hostname, arch, description, None)
}

/// [`register`] with an explicit id (`--system ID --register DESC`), which may be a
/// published id; refused when another machine holds it.
pub fn register_as(
    path: &Path,
    hostname: &str,
    arch: &str,
    description: &str,
    want: Option<&str>,
) -> Result<String, CampaignError> {
    let rows = load(path)?;
    if let Some(id) = find(&rows, hostname, arch) {
        return Ok(id);
    }
    let prefix = arch_prefix(arch);
    let id = match want {
        Some(w) => {
            if rows.iter().any(|r| r.id == w) {
                return Err(CampaignError::msg(format!(
                    "{}: system id {w} is registered for another machine",
                    path.display()
                )));
            }
            if w.is_empty() || w.contains([';', '\n', '\r', '/']) {
                return Err(CampaignError::msg(format!("system id {w:?} is not usable")));
            }
            w.to_string()
        }
        None => {
            let n = (1..)
                .find(|n| {
                    let id = format!("{prefix}_{n}");
                    !rows.iter().any(|r| r.id == id) && !PUBLISHED_IDS.contains(&id.as_str())
                })
                .expect("a free number");
            format!("{prefix}_{n}")
        }
    };
    let mut text = if path.is_file() {
        std::fs::read_to_string(path)?
    } else {
        format!("{HEADER}\n")
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let clean = |s: &str| s.replace([';', '\n', '\r'], ",");
    text.push_str(&format!(
        "{id};{arch};{};{}\n",
        clean(hostname),
        clean(description)
    ));
    pqperf_model::fsutil::write_atomic(path, text.as_bytes())?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_assigns_next_id_and_finds_it_again() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("systems.csv");
        std::fs::write(
            &p,
            "# registry\nID;Arch;Hostname;Description\nx86_1;x86_64;blk;Intel\n",
        )
        .unwrap();
        let id = register(&p, "vm1", "x86_64", "a VM; not fixed").unwrap();
        assert_eq!(id, "x86_2");
        assert_eq!(register(&p, "vm1", "x86_64", "again").unwrap(), "x86_2");
        let rows = load(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].description, "a VM, not fixed");
        assert_eq!(find(&rows, "blk", "x86_64").as_deref(), Some("x86_1"));
        assert_eq!(find(&rows, "blk", "aarch64"), None);
        // A fresh registry never hands out a published id, unless asked for by name.
        let q = d.path().join("new.csv");
        assert_eq!(register(&q, "h", "aarch64", "d").unwrap(), "arm_2");
        assert_eq!(register(&q, "h2", "x86_64", "d").unwrap(), "x86_2");
        let r = d.path().join("asked.csv");
        assert_eq!(
            register_as(&r, "h", "x86_64", "d", Some("x86_1")).unwrap(),
            "x86_1"
        );
        let e = register_as(&r, "other", "x86_64", "d", Some("x86_1")).unwrap_err();
        assert!(
            e.to_string().contains("registered for another machine"),
            "{e}"
        );
    }
}
