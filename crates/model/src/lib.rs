//! Shared data types of pqperf: catalog, build.json, timing and profile records, campaign,
//! KAT logs, side CSVs, Python-compatible JSON and number formatting, statistics.
//!
//! Every stage reads and writes evidence through these types, and the helpers every page and
//! table share (number formatting, label order, candidate category) live here once.
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | [`pyjson`] | Python-compatible JSON: `json.dumps(indent=1)+"\n"` writer ([`pyjson::to_string`]), float repr ([`pyjson::py_float_repr`]), parsing with `path:line:col` errors ([`pyjson::from_str`], [`pyjson::read`]), a file as a value if it parses ([`pyjson::read_value`]) |
//! | [`record`] | timing [`Record`] (schema 2) with [`Plan`], [`Process`], [`Trial`], pqperf additions under `pqperf` ([`record::PqperfRecordExt`]) |
//! | [`paths`] | [`paths::find_machine_path`]: absolute machine paths evidence must not carry; [`paths::redact_machine_paths`] for captured output on publish |
//! | [`profile`] | hash/DRNG [`Profile`] with share recomputation |
//! | [`buildjson`] | `build.json`: [`BuildJson`], [`BuildEntry`] (instances in build order) |
//! | [`campaign`] | `campaign.json`: [`Campaign`] (key order kept per system), pqperf's object in it ([`CampaignPqperf`]: counter, commands, CPU lease windows, noise floor, stale evidence kept, baseline reuse, merge); read and written through it |
//! | [`calibration`] | a calibration file (`calibrate/<id>/<label>__<op>.json`): [`calibration::Calibration`], the driver process plus `t1_s`, `setup_s`, `pqperf`, `pqperf_mem` |
//! | [`fields`] | [`Fields`]: open JSON objects in file order (environment, driver meta) |
//! | [`katlog`] | KAT logs ([`KatLog`]: header, manifest lines, RESULT status) and `<id>/kat.sha256` ([`KatManifest`]); [`katlog::sha256_hex`] |
//! | [`sidecsv`] | `;`-CSV side files ([`CsvTable`]) and their typed rows (systems, kat_issues, summary_notes, external_sizes, symmetric_survey, security_targets, kex_bandwidth, downloads) |
//! | [`robust`] | robust per-call estimate (the fenced mean of every operation, `mean_robust_v3`; earlier records' p50 / 20 % trimmed mean / `mean_robust_v2`) with its t-interval or seeded two-level bootstrap CI, stored under `pqperf.robust`; [`floor`] holds each sampled trial's fenced mean to its window's kernel CPU time |
//! | [`pynum`] | Python-compatible number primitives: CPython float `sum`, true int/int division, median, type-7 quantile (no evidence type: `robust`, `stats` and `envevidence` build on it) |
//! | [`stats`] | method.md §8 statistics from trials ([`RecordStats`]), process aggregates, per-call quantiles ([`stats::Quantiles`]) |
//! | [`dataset`] | [`Dataset`] loader for a dataset root (`performance/data/<sys>/…`, side CSVs, manifests), with per-file errors and stray-file listing |
//! | [`error`] | [`ModelError`]: every error names the file (relative), line/column and field |
//! | [`golden`] | [`golden::golden_dir`]: where tests find the golden fixtures |
//! | [`vocab`] | the shared vocabulary: candidate [`vocab::Category`], timed [`vocab::Operation`] (record key, driver call, size, order; KEX steps, hash sizes), timing [`vocab::Counter`] (evidence name, display name, unit, page sentence) |
//! | [`order`] | natural label order (operation order and category re-exported from [`vocab`]) |
//! | [`ordered`] | the [`evidence_struct!`] macro: typed structs that keep key order, nulls and unknown fields |
//! | [`catalog`] | the candidate catalog (TOML) |
//! | [`select`] | instance selection ([`select::Selection`]): `--only`, explicit `<id>/<label>` keys, `--defer`/`--deferred-only`; one `selects(id, label)`, one error naming the bad pattern |
//! | [`count`] | instruction-count evidence (`count/<id>/<label>__<op>.json`): [`count::CountEvidence`] |
//! | [`ct`] | constant-time check evidence (`ct/<id>/<label>.json`): [`ct::CtEvidence`] |
//! | [`fmt`] | number formatting of pages and site tables (Python `%g`/`%.Nf`/`str(float)`, cycles k/M/G, percentages, sizes, ranks) |
//! | [`fsutil`] | atomic writes |
//! | [`md`] | text into Markdown: [`md::escape_text`], [`md::code_span`], [`md::safe_url`], and [`md::structure_char`] (what `validate` refuses in names) |
//! | [`limits`] | bounds on evidence (samples per trial, bytes per file) and the bounded readers [`limits::read_bounded`] / [`limits::read_text`] every evidence reader uses |
//! | [`captured`] | captured candidate output stored capped, with control characters escaped ([`captured::escape_captured`]) |
//! | [`ab`] | comparison [`ab::Verdict`]s and the evidence of an interleaved A/B measurement (`pqperf ab`: [`ab::AbEvidence`]) |
//! | [`envevidence`] | environment evidence of driver processes (canary, steal, run-queue share, load: [`envevidence::ProcessEnv`]) and its per-record summary |
//! | [`layout`] | the run directory's tree, one accessor per file or folder ([`layout::RunLayout`]), and its one build.json reader |
//! | [`stream`] | input streams of driver processes: the reference seed, the per-process seed of pqperf's protocol ([`stream::process_seed`]), the per-call messages |
//! | [`provenance`] | what an ICCS import did (`<run>/imports/<id>.json`: command, submission digest, folder/instance/manifest identity), tree digests, catalog edits |
//!
//! # Round-trip guarantee
//!
//! Every evidence struct keeps unknown keys (`extra`) and the key order read (`key_order`), so
//! `pyjson::to_string(&pyjson::from_str::<Record>(..)?)` reproduces a reference file byte for
//! byte. Values built in code serialise in declaration order.
//!
//! # Schema versioning
//!
//! Records and profiles carry `schema` ([`record::RECORD_SCHEMA`] = 2 is the newest known).
//! Reading a file with a newer schema fails with [`ModelError::NewerSchema`] naming the file;
//! older or equal schemas are read as far as their fields allow. pqperf's own additions never
//! change reference fields: they live under the record key `pqperf`, so reference tools and
//! older pqperf versions keep reading the record (unknown keys are kept, not dropped).

#![forbid(unsafe_code)]

pub mod ab;
pub mod buildjson;
pub mod calibration;
pub mod campaign;
pub mod captured;
pub mod catalog;
pub mod count;
pub mod ct;
pub mod dataset;
pub mod envevidence;
pub mod error;
pub mod fields;
pub mod floor;
pub mod fmt;
pub mod fsutil;
pub mod golden;
pub mod iccsprovider;
pub mod katlog;
pub mod kernelcheck;
pub mod layout;
pub mod limits;
mod locate;
pub mod md;
pub mod order;
pub mod ordered;
pub mod paths;
pub mod profile;
pub mod provenance;
pub mod pyjson;
pub mod pynum;
pub mod record;
pub mod robust;
pub mod select;
pub mod sidecsv;
pub mod stats;
pub mod stream;
pub mod vocab;

pub use buildjson::{BuildEntry, BuildJson};
pub use campaign::{
    ArchConfig, BaselineReuse, Campaign, CampaignPqperf, HostCheck, HostState, LeaseWindow,
    Planning, Producer,
};
pub use dataset::{Dataset, Loaded, SystemData};
pub use error::ModelError;
pub use fields::Fields;
pub use katlog::{KatLog, KatManifest, ManifestEntry};
pub use profile::{Profile, ProfileCall, ProfileTotal};
pub use record::{Plan, Process, Record, Trial};
pub use sidecsv::CsvTable;
pub use stats::RecordStats;
