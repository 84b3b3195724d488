//! What the timing counter of a pqperf dataset really counts.
//!
//! Records written by pqperf carry `pqperf.counter` (`cycles`, `tsc`, `cntvct_el0`, …),
//! `pqperf.counter_hz` and `pqperf.cycles_are_core_cycles`. When the counter is a constant-rate
//! tick counter rather than core cycles, the pages must say "ticks" and name the counter and
//! its frequency. Golden (reference) records have no `pqperf` key: [`tick_counter`] is `None`
//! and the pages are unchanged.

use pqperf_model::vocab::{Counter, freq_text};
use serde_json::Value;

use crate::view::SystemView;

/// A non-cycle tick counter the records were taken with.
#[derive(Debug, Clone, PartialEq)]
pub struct TickCounter {
    /// The counter as recorded (`tsc`, `cntvct_el0`, or a name the model does not know).
    pub counter: Counter,
    /// Tick frequency (Hz), when recorded.
    pub hz: Option<f64>,
}

impl TickCounter {
    /// Display name: `TSC`, `CNTVCT_EL0`, else the id as recorded ([`Counter::display_name`]).
    pub fn name(&self) -> String {
        self.counter.display_name().to_string()
    }

    /// Short unit for column headers: `ticks (TSC)` ([`Counter::unit`]).
    pub fn unit(&self) -> String {
        self.counter.unit().into_owned()
    }

    /// `2.10 GHz` / `24.00 MHz` / `an unrecorded frequency`.
    pub fn freq(&self) -> String {
        freq_text(self.hz)
    }

    /// The sentence the pages show where they speak of cycles ([`Counter::sentence`]).
    pub fn sentence(&self) -> String {
        self.counter.sentence(self.hz).unwrap_or_default()
    }
}

/// The tick counter of a record's `pqperf` object, if it names a non-cycle counter. The
/// counter the measuring child named (`counter`) is the one source of truth for the kind;
/// `cycles_are_core_cycles` (the parent's probe in older records) is not consulted.
pub fn of_pqperf(ext: &serde_json::Map<String, Value>) -> Option<TickCounter> {
    let counter = Counter::parse(ext.get("counter").and_then(Value::as_str)?);
    if counter.is_core_cycles() {
        return None;
    }
    Some(TickCounter {
        counter,
        hz: ext.get("counter_hz").and_then(Value::as_f64),
    })
}

/// The tick counter of the system's records: the first record (sorted path order) whose
/// `pqperf` object names a non-cycle counter. `None` for golden records and cycle counters.
pub fn tick_counter(v: &SystemView) -> Option<TickCounter> {
    v.records
        .iter()
        .filter_map(|r| r.rec.pqperf.as_ref())
        .find_map(|p| of_pqperf(&p.extra))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counters() {
        let m = |v: Value| v.as_object().cloned().unwrap();
        assert_eq!(of_pqperf(&m(json!({"counter": "cycles"}))), None);
        // The child named a tick counter: the parent's contrary probe does not make it cycles.
        assert_eq!(
            of_pqperf(&m(
                json!({"counter": "tsc", "cycles_are_core_cycles": true})
            ))
            .map(|t| t.name()),
            Some("TSC".to_string())
        );
        assert_eq!(
            of_pqperf(&m(
                json!({"counter": "cycles", "cycles_are_core_cycles": false})
            )),
            None
        );
        let t = of_pqperf(&m(json!({"counter": "tsc", "counter_hz": 2.1e9}))).unwrap();
        assert_eq!(t.unit(), "ticks (TSC)");
        assert_eq!(
            t.sentence(),
            "Cycle counts are TSC ticks at 2.10 GHz (reference cycles), not core cycles: this host has no hardware cycle counter."
        );
        let a = of_pqperf(&m(json!({"counter": "cntvct_el0", "counter_hz": 2.4e7}))).unwrap();
        assert_eq!(a.freq(), "24.00 MHz");
        // A counter the model does not know stays displayable as recorded.
        let odd = of_pqperf(&m(json!({"counter": "hpet"}))).unwrap();
        assert_eq!(
            (odd.unit(), odd.freq()),
            (
                "ticks (hpet)".to_string(),
                "an unrecorded frequency".to_string()
            )
        );
    }
}
