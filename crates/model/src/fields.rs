//! [`Fields`]: a free-form JSON object in file order (environment snapshots, driver `meta`,
//! profile `meta`), with typed accessors.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON object kept verbatim in file order.
///
/// Used where the set of keys is open (the environment snapshot differs between arm_1 and
/// x86_1; driver `meta` holds every `key=value` the driver printed, all as strings).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Fields(pub Map<String, Value>);

impl Fields {
    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// `key` as a string (only if it is a JSON string).
    pub fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    /// `key` as an unsigned integer: a JSON integer, or a string of decimal digits (the driver
    /// prints every `meta` value as a string).
    pub fn u64(&self, key: &str) -> Option<u64> {
        match self.0.get(key)? {
            Value::Number(n) => n.as_u64(),
            Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                s.parse().ok()
            }
            _ => None,
        }
    }

    /// `key` as a float: a JSON number, or a string that parses as one.
    pub fn f64(&self, key: &str) -> Option<f64> {
        match self.0.get(key)? {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// `key` as a bool (JSON bool only).
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.0.get(key).and_then(Value::as_bool)
    }

    /// True if `key` is present (possibly null).
    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// Set `key` (appended if new, replaced in place otherwise).
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        self.0.insert(key.into(), value.into());
    }

    /// Keys in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Entries in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
