//! The options of a campaign, checked once. The CLI builds one [`CampaignOptions`] from its
//! arguments (every value checked there, errors naming the option); the parallel launcher
//! writes it as JSON ([`CampaignOptions::write`]) and its shard children read the same type
//! back ([`CampaignOptions::read`], checked again on reading); what measuring one unit needs
//! of it is [`CampaignOptions::unit`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqperf_measure::plan::{self, Planning};
use pqperf_measure::{DriverExe, UnitSettings};
use pqperf_model::select::Selection;

use crate::CampaignError;

type Res<T> = Result<T, CampaignError>;

/// Default hard timeout of a calibration run, seconds (`--calibration-timeout`): 15 minutes.
/// A calibration times one call; a call longer than the reference operation budget (900 s)
/// cannot be measured within that budget anyway, and a candidate that hangs in calibration
/// costs the campaign at most this per operation (the reference method's 6 h, issue 36).
pub const DEFAULT_CALIBRATION_TIMEOUT_S: f64 = 900.0;

/// `--target-ci PCT`: the half-width of the robust 95 % interval a campaign measures each
/// operation to, checked once ([`TargetCi::from_percent`]) and converted once
/// ([`TargetCi::fraction`]); the CLI's parser, the shard children's options file and the
/// demo all go through it. In a file it is the percentage, checked again on reading.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct TargetCi {
    pct: f64,
}

impl TargetCi {
    /// The target of pqperf's own campaigns and the demo when none is given (±1 %).
    pub const DEFAULT: TargetCi = TargetCi { pct: 1.0 };

    /// The target `pct` percent; refused unless above 0 and at most 100.
    pub fn from_percent(pct: f64) -> Result<TargetCi, String> {
        if pct.is_finite() && pct > 0.0 && pct <= 100.0 {
            Ok(TargetCi { pct })
        } else {
            Err("a percentage above 0 and at most 100".into())
        }
    }

    /// The half-width in percent, as given (`1` = ±1 %).
    pub fn percent(self) -> f64 {
        self.pct
    }

    /// The half-width as a fraction (`0.01` = ±1 %), as the measuring side uses it.
    pub fn fraction(self) -> f64 {
        self.pct / 100.0
    }
}

impl TryFrom<f64> for TargetCi {
    type Error = String;

    fn try_from(pct: f64) -> Result<TargetCi, String> {
        TargetCi::from_percent(pct).map_err(|why| format!("--target-ci {pct}: {why}"))
    }
}

impl From<TargetCi> for f64 {
    fn from(t: TargetCi) -> f64 {
        t.pct
    }
}

/// Options of a campaign invocation, checked: the one type the CLI builds, the parallel
/// launcher hands its children (a JSON file, so no option is lost in re-typed flags) and the
/// phases read. Fields marked "this process" are not written to the file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignOptions {
    /// Run directory.
    pub run_dir: PathBuf,
    /// Benchmark CPU (the leased one once a measuring phase runs).
    pub cpu: usize,
    /// `--cpu auto`: measuring phases lease a free CPU of the allowed set instead of `cpu`.
    pub cpu_auto: bool,
    /// The instances the phases work on: `--only`, `--defer`, `--deferred-only`
    /// (`--shard` is applied on top, [`crate::select::selected`]). In a file: its patterns
    /// (a selection of explicit keys, [`Selection::keys`], is not written).
    #[serde(with = "selection_patterns")]
    pub select: Selection,
    /// `--system`.
    pub system: Option<String>,
    /// `--shard K/N` (`slurm` resolved).
    pub shard: Option<(usize, usize)>,
    /// Planning constants (`--trial-target`, `--op-budget`).
    pub planning: Planning,
    /// Measure although the host has problems.
    pub allow_unfixed_host: bool,
    /// Per-call samples in the driver.
    pub samples: bool,
    /// Stack bytes painted by the driver's memory pass.
    pub stack_region: u64,
    /// The measuring protocol: `Some`: `--target-ci PCT`, short trials in fresh processes
    /// until the robust interval is that narrow or the budget is spent
    /// (`pqperf_measure::decide`); `None` (the default here): the reference protocol. It
    /// needs the per-call samples (`samples`).
    pub target_ci: Option<TargetCi>,
    /// `--iccs-baseline`: `campaign all` times the ICCS helper baseline even when no selected
    /// candidate links the helpers.
    pub iccs_baseline: bool,
    /// The driver executable (it runs in `run_dir`: [`CampaignOptions::driver`]).
    pub driver: PathBuf,
    /// The systems registry (`systems.csv`).
    pub systems_csv: PathBuf,
    /// Register this machine with this description if it is not registered.
    pub register: Option<String>,
    /// Published datasets (`performance/data`) whose records give prior costs for sharding.
    pub prior_data: Option<PathBuf>,
    /// Hard timeout of a calibration run ([`DEFAULT_CALIBRATION_TIMEOUT_S`]; the reference
    /// method's 6 h let one hanging candidate cost a campaign 6 h per operation).
    pub calibration_timeout: Duration,
    /// Probe attempts of the host check (reference 3; 5 s apart).
    pub probe_attempts: usize,
    /// Destination root of `publish` (dataset root: `performance/data/<ID>/…`).
    pub publish_to: Option<PathBuf>,
    /// Directory of the profile and hash-cost locks (default: the run dir's parent; the CPU
    /// leases are host-wide, see [`crate::lease`]).
    pub lock_dir: Option<PathBuf>,
    /// `--redo`: do the phase's units again although their evidence exists and is current.
    pub redo: bool,
    /// `--keep-stale`: keep evidence whose library is no longer the built one (said in the
    /// log and in campaign.json `pqperf.stale_kept`) instead of doing it again.
    pub keep_stale: bool,
    /// The containment of candidate code (`--no-sandbox`, `--mem-limit`) the parallel
    /// launcher ran under, which its children apply; `None`: this process's own flags.
    #[serde(default)]
    pub containment: Option<ContainmentData>,
    /// `--stream-key HEX`: an earlier run's stream key, reused so that this run's processes
    /// get the same stream seeds (pairing in `compare`; its inputs were published with that
    /// run, so they are predictable). `None`: a fresh key from the operating system, drawn
    /// once per pqperf process ([`CampaignOptions::stream_key`]) and never written to a
    /// file candidate code could read while it runs.
    #[serde(default, with = "key_hex")]
    pub stream_key: Option<[u8; pqperf_model::stream::KEY_BYTES]>,
    /// `--independent-streams`: the reference protocol gives every driver process its own
    /// input stream from the stream key (as `--target-ci` always does) instead of the
    /// reference's fixed seed (`UnitSettings::independent_streams`).
    #[serde(default)]
    pub independent_streams: bool,
    /// This process: `Some(s)` bounds a profiled verify/dec operation's input preparation to
    /// `s` × its profiled calls' time (`pqperf_profile::phase::ProfileOptions::prep_share`; the
    /// demo); `None`: every profiled call an input of its own.
    #[serde(skip)]
    pub profile_prep_share: Option<f64>,
    /// This process: echo log lines to stdout.
    #[serde(skip, default = "echo_default")]
    pub echo: bool,
    /// This process: the command line as the evidence shows it (the CLI's flags included,
    /// paths by their file name), noted in campaign.json `pqperf.commands` so that the
    /// published "commands run" can be repeated; `None`: `pqperf campaign <phase>` (a shard
    /// child's command is its launcher's).
    #[serde(skip)]
    pub command: Option<String>,
    /// This process: take the run directory's lock shared, not exclusive (the demo runs its
    /// valgrind phases, ct and count, beside its measuring phases in one run directory:
    /// they write disjoint files, and campaign.json through its own lock).
    #[serde(skip)]
    pub shared_run_lock: bool,
    /// This process: a non-measuring phase that runs beside the measuring phases of the same
    /// run directory (the demo's ct and count, on other CPUs): it records its host check,
    /// command and log lines, but leaves the run's host facts (the environment at start and
    /// end, the counter's facts) to the measuring phases, which describe the benchmark CPU.
    #[serde(skip)]
    pub beside_measuring: bool,
}

fn echo_default() -> bool {
    true
}

/// The fresh stream key of this pqperf process (drawn at its first use).
static FRESH_KEY: std::sync::OnceLock<[u8; pqperf_model::stream::KEY_BYTES]> =
    std::sync::OnceLock::new();

/// The stream key of a measuring command given `--stream-key` as `given`: that key, else this
/// pqperf process's fresh key from the operating system (one for every unit it measures and
/// both sides of an `ab`; [`CampaignOptions::stream_key`], `crate::ab`). Fails only when the
/// operating system gives no randomness, which ends the process: a predictable key would be
/// worse.
pub fn stream_key_of(
    given: Option<[u8; pqperf_model::stream::KEY_BYTES]>,
) -> [u8; pqperf_model::stream::KEY_BYTES] {
    given.unwrap_or_else(|| {
        *FRESH_KEY.get_or_init(|| {
            pqperf_model::stream::fresh_key()
                .unwrap_or_else(|e| panic!("no randomness for the stream key (/dev/urandom): {e}"))
        })
    })
}

/// A stream key in the options file: 64 hex characters or absent.
mod key_hex {
    use pqperf_model::stream::KEY_BYTES;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        k: &Option<[u8; KEY_BYTES]>,
        ser: S,
    ) -> Result<S::Ok, S::Error> {
        match k {
            Some(k) => ser.serialize_some(&pqperf_model::stream::key_hex(k)),
            None => ser.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<[u8; KEY_BYTES]>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|s| pqperf_model::stream::parse_key_hex(&s).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// A [`Selection`] in the options file: its patterns, compiled again on reading (errors
/// name the option).
mod selection_patterns {
    use pqperf_model::select::Selection;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Patterns {
        only: Option<String>,
        defer: Option<String>,
        deferred_only: bool,
    }

    pub fn serialize<S: Serializer>(s: &Selection, ser: S) -> Result<S::Ok, S::Error> {
        Patterns {
            only: s.only_pattern().map(String::from),
            defer: s.defer_pattern().map(String::from),
            deferred_only: s.deferred_only(),
        }
        .serialize(ser)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Selection, D::Error> {
        let p = Patterns::deserialize(d)?;
        Selection::only(p.only.as_deref())
            .and_then(|s| s.with_defer(p.defer.as_deref(), p.deferred_only))
            .map_err(serde::de::Error::custom)
    }
}

impl CampaignOptions {
    /// Reference defaults for `run_dir`.
    pub fn new(run_dir: &Path) -> Res<Self> {
        let run_dir = run_dir.to_path_buf();
        Ok(CampaignOptions {
            driver: DriverExe::locate()?,
            systems_csv: run_dir
                .parent()
                .unwrap_or(Path::new("."))
                .join("systems.csv"),
            run_dir,
            cpu: default_cpu(),
            cpu_auto: false,
            select: Selection::all(),
            system: None,
            shard: None,
            planning: plan::reference_planning(),
            allow_unfixed_host: false,
            samples: true,
            stack_region: pqperf_measure::driver::DEFAULT_STACK_REGION,
            target_ci: None,
            iccs_baseline: false,
            register: None,
            prior_data: None,
            calibration_timeout: Duration::from_secs_f64(DEFAULT_CALIBRATION_TIMEOUT_S),
            probe_attempts: 3,
            publish_to: None,
            lock_dir: None,
            redo: false,
            keep_stale: false,
            containment: None,
            stream_key: None,
            independent_streams: false,
            profile_prep_share: None,
            echo: true,
            command: None,
            shared_run_lock: false,
            beside_measuring: false,
        })
    }

    /// What measuring one unit needs of these options (the one place they are turned into
    /// the measuring side's terms: the target as a fraction, the driver in the run directory).
    pub fn unit(&self) -> UnitSettings {
        UnitSettings {
            run_dir: self.run_dir.clone(),
            cpu: self.cpu,
            samples: self.samples,
            stack_region: self.stack_region,
            driver: self.driver(),
            calibration_timeout: self.calibration_timeout,
            planning: self.planning.clone(),
            target_ci: self.target_ci.map(TargetCi::fraction),
            stream_key: self.stream_key(),
            independent_streams: self.independent_streams,
        }
    }

    /// The stream key of this run: `--stream-key`, else this process's fresh key (one for
    /// every unit it measures and both sides of an `ab`). Fails only when the operating
    /// system gives no randomness, which ends the process: a predictable key would be worse.
    pub fn stream_key(&self) -> [u8; pqperf_model::stream::KEY_BYTES] {
        stream_key_of(self.stream_key)
    }

    /// Whether this run's stream key was given (`--stream-key`) rather than drawn fresh.
    pub fn stream_key_reused(&self) -> bool {
        self.stream_key.is_some()
    }

    /// The driver executable, working in the run directory.
    pub fn driver(&self) -> DriverExe {
        DriverExe {
            exe: self.driver.clone(),
            cwd: self.run_dir.clone(),
        }
    }

    /// The layout of the run directory (`run_dir`).
    pub fn layout(&self) -> pqperf_model::layout::RunLayout {
        pqperf_model::layout::RunLayout::new(&self.run_dir)
    }

    /// Folder of the profile and hash-cost lock files (`lock_dir`, else the run directory's
    /// parent).
    pub fn lock_dir(&self) -> PathBuf {
        self.lock_dir.clone().unwrap_or_else(|| {
            self.run_dir
                .parent()
                .unwrap_or(Path::new("."))
                .to_path_buf()
        })
    }

    /// Write these options to `path` (JSON, atomically): the parallel launcher's file for
    /// its children.
    pub fn write(&self, path: &Path) -> Res<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| CampaignError::msg(format!("{}: {e}", path.display())))?;
        pqperf_model::fsutil::write_atomic(path, text.as_bytes())?;
        Ok(())
    }

    /// Read options written by [`CampaignOptions::write`], checked again (the target, the
    /// patterns); errors name the file.
    pub fn read(path: &Path) -> Res<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| pqperf_model::fsutil::io_err("reading", path, e))?;
        serde_json::from_str(&text)
            .map_err(|e| CampaignError::msg(format!("{}: {e}", path.display())))
    }
}

/// The highest CPU this process may use (reference default is 2; on a small machine the last
/// CPU keeps CPU 0 for the system).
pub fn default_cpu() -> usize {
    pqperf_ffi::affinity::get_affinity()
        .ok()
        .and_then(|v| v.last().copied())
        .unwrap_or(0)
}

/// The process-wide containment policy (`pqperf_ffi::untrusted::Policy`) as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainmentData {
    /// Namespaces, Landlock and resource limits on.
    pub sandbox: bool,
    /// RLIMIT_AS bytes (`None`: unlimited).
    pub address_space: Option<u64>,
}

impl ContainmentData {
    /// The policy in force in this process.
    pub fn in_force() -> ContainmentData {
        let p = pqperf_ffi::untrusted::policy();
        ContainmentData {
            sandbox: p.sandbox,
            address_space: p.limits.address_space,
        }
    }

    /// Makes this the process-wide policy (before any candidate code runs); the other limits
    /// keep their defaults, as on the command line.
    pub fn apply(self) {
        pqperf_ffi::untrusted::set_policy(pqperf_ffi::untrusted::Policy {
            sandbox: self.sandbox,
            limits: pqperf_ffi::sandbox::Limits {
                address_space: self.address_space,
                ..Default::default()
            },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--target-ci` is checked and converted in one place: the shard children's options file
    /// gets the same refusal as the command line, and the fraction is the percent / 100.
    #[test]
    fn target_ci_is_checked_and_converted_once() {
        assert_eq!(TargetCi::from_percent(1.0).unwrap().fraction(), 0.01);
        assert_eq!(TargetCi::DEFAULT.percent(), 1.0);
        for bad in [0.0, -1.0, 100.5, f64::NAN, f64::INFINITY] {
            assert!(TargetCi::from_percent(bad).is_err(), "{bad}");
        }
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("options.json");
        let mut o = CampaignOptions::new(&d.path().join("run")).unwrap();
        o.target_ci = Some(TargetCi::from_percent(2.5).unwrap());
        o.write(&file).unwrap();
        assert_eq!(
            CampaignOptions::read(&file).unwrap().unit().target_ci,
            Some(0.025)
        );
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        v["target_ci"] = serde_json::json!(0.0);
        std::fs::write(&file, v.to_string()).unwrap();
        let e = CampaignOptions::read(&file).unwrap_err().to_string();
        assert!(
            e.contains("--target-ci 0: a percentage above 0 and at most 100"),
            "{e}"
        );
    }

    /// What the launcher writes its children read back as the same options; the patterns are
    /// compiled again (a bad one is named with its option), the process's own fields are not
    /// written.
    #[test]
    fn the_options_file_reads_back_the_same_options() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("options.json");
        let mut o = CampaignOptions::new(&d.path().join("run")).unwrap();
        o.select = Selection::only(Some("^ml-dsa-44/"))
            .and_then(|s| s.with_defer(Some("^sign-30/"), true))
            .unwrap();
        o.shard = Some((2, 3));
        o.planning = plan::planning(0.25, 7.0);
        o.calibration_timeout = Duration::from_millis(1500);
        o.containment = Some(ContainmentData {
            sandbox: false,
            address_space: Some(1 << 30),
        });
        o.command = Some("pqperf campaign all".into());
        o.write(&file).unwrap();
        let back = CampaignOptions::read(&file).unwrap();
        let json = |o: &CampaignOptions| serde_json::to_value(o).unwrap();
        assert_eq!(json(&back), json(&o));
        assert_eq!(back.select.only_pattern(), Some("^ml-dsa-44/"));
        assert_eq!(back.select.defer_pattern(), Some("^sign-30/"));
        assert!(back.select.deferred_only());
        assert_eq!(back.command, None);
        assert!(back.echo);
        // No key in the file unless one was given (a fresh key is never written).
        assert_eq!(back.stream_key, None);
        assert!(json(&o)["stream_key"].is_null());
        assert_eq!(
            o.stream_key(),
            back.stream_key(),
            "one fresh key per process"
        );
        o.stream_key = Some([7; 32]);
        o.write(&file).unwrap();
        let back = CampaignOptions::read(&file).unwrap();
        assert_eq!(back.stream_key(), [7; 32]);
        assert!(back.stream_key_reused());
        let mut v = json(&o);
        v["select"]["only"] = serde_json::json!("(");
        std::fs::write(&file, v.to_string()).unwrap();
        let e = CampaignOptions::read(&file).unwrap_err().to_string();
        assert!(e.contains("--only \"(\""), "{e}");
    }
}
