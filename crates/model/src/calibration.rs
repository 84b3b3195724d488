//! A calibration file (`calibrate/<id>/<label>__<op>.json`, method §6.2): the driver process
//! of the one timed call ([`Process`]) with the parent's figures after it — `t1_s` (the
//! call's seconds, `null` when the process gave none), `setup_s` (the process's wall time less
//! the call), pqperf's `pqperf` object (counter, library) and the memory pass's `pqperf_mem`.
//!
//! The file is the process object with these keys appended, so [`Calibration`] reads and
//! writes it by hand: the process keys first (in their order as read), then the four keys in
//! that order. `measure::calibrate` writes it; the plan, the record of an operation that
//! reuses its calibration call, and the campaign's stale-evidence check read it.

use std::path::Path;

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::evidence_struct;
use crate::record::Process;

/// One calibration (see the module doc).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Calibration {
    /// The driver process of the one timed call (status, meta, the one trial, argv…).
    pub process: Process,
    /// Seconds of the timed call; `None` (written `null`) when the process gave none or was
    /// inconsistent with the kernel's accounting.
    pub t1_s: Option<f64>,
    /// Process wall time less `t1_s` (`null` without `t1_s`).
    pub setup_s: Option<f64>,
    /// pqperf's own keys (absent when it has none).
    pub pqperf: Option<CalibrationPqperf>,
    /// The memory pass of the process (`measure::runner::MemFigures` as JSON), when it ran.
    pub pqperf_mem: Option<Value>,
}

evidence_struct! {
    /// A calibration's `pqperf` object.
    pub struct CalibrationPqperf {
        /// The counter the driver named (with samples on).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub counter: Option<String>,
        /// The library the calibration timed: a rebuilt library makes it stale.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub library_sha256: Option<String>,
        /// Seconds of one warm call on the CPU: a second driver process after the
        /// reference's one call (its warm-ups first) timed `warm_calls` calls in one trial,
        /// its run-queue waits taken out (issue 41). The plan uses it; `t1_s` stays the
        /// single cold call (method §6.2).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub warm_call_s: Option<f64>,
        /// Calls of the warm trial.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub warm_calls: Option<u64>,
        /// Share of the warm trial's wall time spent waiting for the CPU (the load it ran
        /// at); the estimates' wall seconds of a call are `warm_call_s ÷ (1 − share)`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub warm_runq_share: Option<f64>,
    }
}

/// The keys [`Calibration`] adds after the process object, in their written order.
const OWN_KEYS: [&str; 4] = ["t1_s", "setup_s", "pqperf", "pqperf_mem"];

impl Calibration {
    /// A number of the parent's `kernel_check` of the process (`cpu_s`, `wall_s`,
    /// `run_delay_s`), when recorded.
    pub fn kernel_check(&self, key: &str) -> Option<f64> {
        self.process.extra.get("kernel_check")?.get(key)?.as_f64()
    }

    /// The counter the driver named, when recorded.
    pub fn counter(&self) -> Option<&str> {
        self.pqperf.as_ref()?.counter.as_deref()
    }

    /// The library the calibration timed, when recorded.
    pub fn library_sha256(&self) -> Option<&str> {
        self.pqperf.as_ref()?.library_sha256.as_deref()
    }

    /// Seconds of one warm call ([`CalibrationPqperf::warm_call_s`]), when measured.
    pub fn warm_call_s(&self) -> Option<f64> {
        self.pqperf
            .as_ref()?
            .warm_call_s
            .filter(|t| t.is_finite() && *t > 0.0)
    }

    /// Wall seconds of one warm call at the load the warm trial saw
    /// (`warm_call_s ÷ (1 − warm_runq_share)`, the share at most 0.9), when measured.
    pub fn warm_wall_call_s(&self) -> Option<f64> {
        let share = self.pqperf.as_ref()?.warm_runq_share.unwrap_or(0.0);
        let share = if share.is_finite() {
            share.clamp(0.0, 0.9)
        } else {
            0.0
        };
        Some(self.warm_call_s()? / (1.0 - share))
    }

    /// The seconds of one call the plan uses: the warm call's when the
    /// calibration measured it, else the single cold call's (`t1_s`); `None` without `t1_s`
    /// (a failed calibration plans nothing).
    pub fn call_s(&self) -> Option<f64> {
        let t1 = self.t1_s?;
        Some(self.warm_call_s().unwrap_or(t1))
    }
}

impl Serialize for Calibration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Value::Object(mut m) = serde_json::to_value(&self.process).map_err(S::Error::custom)?
        else {
            return Err(S::Error::custom("a process did not serialise to an object"));
        };
        m.insert(
            "t1_s".into(),
            serde_json::to_value(self.t1_s).map_err(S::Error::custom)?,
        );
        m.insert(
            "setup_s".into(),
            serde_json::to_value(self.setup_s).map_err(S::Error::custom)?,
        );
        if let Some(pq) = &self.pqperf {
            m.insert(
                "pqperf".into(),
                serde_json::to_value(pq).map_err(S::Error::custom)?,
            );
        }
        if let Some(mem) = &self.pqperf_mem {
            m.insert("pqperf_mem".into(), mem.clone());
        }
        m.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Calibration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut m = Map::<String, Value>::deserialize(d)?;
        let mut own = OWN_KEYS.map(|k| m.shift_remove(k).filter(|v| !v.is_null()));
        let mut take = |i: usize| own[i].take();
        let num = |v: Option<Value>, k: &str| -> Result<Option<f64>, D::Error> {
            match v {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .map(Some)
                    .ok_or_else(|| D::Error::custom(format!("{k}: expected a number"))),
            }
        };
        let t1_s = num(take(0), "t1_s")?;
        let setup_s = num(take(1), "setup_s")?;
        let pqperf = take(2)
            .map(serde_json::from_value::<CalibrationPqperf>)
            .transpose()
            .map_err(|e| D::Error::custom(format!("pqperf: {e}")))?;
        let pqperf_mem = take(3);
        let process = serde_json::from_value(Value::Object(m)).map_err(D::Error::custom)?;
        Ok(Calibration {
            process,
            t1_s,
            setup_s,
            pqperf,
            pqperf_mem,
        })
    }
}

/// The calibration at `path`, if it can be read and is one; `None` otherwise (a missing,
/// half-written or foreign file is no calibration: the calibrate phase makes it again).
pub fn read(path: &Path) -> Option<Calibration> {
    let text = std::fs::read_to_string(path).ok()?;
    crate::pyjson::from_str(path, &text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A calibration as `measure::calibrate` writes it is read into its parts and written
    /// back byte for byte; the process keeps keys it does not declare (`kernel_check`).
    #[test]
    fn a_calibration_round_trips() {
        let text = r#"{
 "status": "complete",
 "exit_code": 0,
 "meta": {
  "kex_passes": "2"
 },
 "trials": [
  {
   "measurements": 1,
   "seconds": 0.001,
   "cycles": null
  }
 ],
 "stderr": "",
 "command": [
  "pqperf-driver"
 ],
 "wall_s": 0.051,
 "disturbed_retries": null,
 "kernel_check": {
  "cpu_s": 0.1,
  "run_delay_s": 0.2
 },
 "t1_s": 0.001,
 "setup_s": 0.05,
 "pqperf": {
  "counter": "tsc",
  "library_sha256": "ab"
 },
 "pqperf_mem": {
  "stack_bytes": 10
 }
}
"#;
        let p = Path::new("c.json");
        let c: Calibration = crate::pyjson::from_str(p, text).unwrap();
        assert_eq!(c.t1_s, Some(0.001));
        assert_eq!(c.setup_s, Some(0.05));
        assert_eq!(c.counter(), Some("tsc"));
        assert_eq!(c.library_sha256(), Some("ab"));
        assert_eq!(c.kernel_check("run_delay_s"), Some(0.2));
        assert_eq!(c.process.meta.str("kex_passes"), Some("2"));
        assert_eq!(crate::pyjson::to_string(&c).unwrap(), text);
    }

    /// A failed calibration has `null` figures and no `pqperf` object; a figure that is not
    /// a number is refused.
    #[test]
    fn a_failed_calibration_keeps_its_nulls() {
        let c = Calibration {
            process: Process {
                status: "crashed".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert!(v["t1_s"].is_null() && v["setup_s"].is_null());
        assert!(v.get("pqperf").is_none() && v.get("pqperf_mem").is_none());
        let back: Calibration = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(back, c);
        let mut bad = v;
        bad["t1_s"] = "fast".into();
        assert!(serde_json::from_value::<Calibration>(bad).is_err());
    }
}
