//! [`Fields`]: a free-form JSON object in file order (environment snapshots, driver `meta`,
//! profile `meta`), with typed accessors.
//!
//! A loaded object is kept as its JSON text and parsed on first access: a record's five
//! driver `meta` objects and its environment are two thirds of its bytes but are read for a
//! few keys of a few records (a 119-candidate site parsed 18 MB of them for nothing).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON object kept verbatim in file order.
///
/// Used where the set of keys is open (the environment snapshot differs between arm_1 and
/// x86_1; driver `meta` holds every `key=value` the driver printed, all as strings).
///
/// Invariant: `map` is set, or `raw` holds the text of a JSON object (checked when read);
/// once `map` is set it is the value (`raw` is then only a leftover, dropped on mutation).
#[derive(Default)]
pub struct Fields {
    raw: Option<Box<RawValue>>,
    map: OnceLock<Map<String, Value>>,
}

impl From<Map<String, Value>> for Fields {
    fn from(map: Map<String, Value>) -> Self {
        Fields {
            raw: None,
            map: OnceLock::from(map),
        }
    }
}

impl Clone for Fields {
    fn clone(&self) -> Self {
        match self.map.get() {
            Some(m) => Fields::from(m.clone()),
            None => Fields {
                raw: self.raw.clone(),
                map: OnceLock::new(),
            },
        }
    }
}

impl PartialEq for Fields {
    fn eq(&self, other: &Self) -> bool {
        self.as_map() == other.as_map()
    }
}

impl std::fmt::Debug for Fields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_map().fmt(f)
    }
}

impl Serialize for Fields {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (self.map.get(), &self.raw) {
            (Some(m), _) => m.serialize(s),
            // Unparsed: serde_json writes the text as read; `to_value` parses it in order.
            (None, Some(raw)) => raw.serialize(s),
            (None, None) => Map::new().serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        if !raw.get().trim_start().starts_with('{') {
            let got: Value = serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)?;
            return Err(serde::de::Error::invalid_type(unexpected(&got), &"a map"));
        }
        Ok(Fields {
            raw: Some(raw),
            map: OnceLock::new(),
        })
    }
}

fn unexpected(v: &Value) -> serde::de::Unexpected<'_> {
    use serde::de::Unexpected;
    match v {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (_, Some(i), _) => Unexpected::Signed(i),
            (_, _, Some(f)) => Unexpected::Float(f),
            _ => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

impl Fields {
    /// The object (parsed from the text read on first use).
    pub fn as_map(&self) -> &Map<String, Value> {
        self.map.get_or_init(|| match &self.raw {
            // The text was checked to be a JSON object when it was read, and any JSON object
            // parses into a Map; an empty map is the unreachable fallback.
            Some(raw) => serde_json::from_str(raw.get()).unwrap_or_default(),
            None => Map::new(),
        })
    }

    /// The object, for changes (the text read, if any, is dropped).
    pub fn as_map_mut(&mut self) -> &mut Map<String, Value> {
        self.as_map();
        self.raw = None;
        self.map.get_mut().expect("initialised just above")
    }

    /// The object, taken out.
    pub fn into_map(mut self) -> Map<String, Value> {
        self.as_map();
        self.map.take().unwrap_or_default()
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_map().get(key)
    }

    /// One key of a text not parsed yet, found by a scan that allocates nothing; `None`
    /// when the object is parsed (or built in code), then the map answers.
    fn scan(&self, key: &str) -> Option<Option<Scalar<'_>>> {
        if self.map.get().is_some() {
            return None;
        }
        let raw = self.raw.as_ref()?;
        let mut de = serde_json::Deserializer::from_str(raw.get());
        serde::de::DeserializeSeed::deserialize(FindKey(key), &mut de).ok()
    }

    /// `key` as a string (only if it is a JSON string).
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.scan(key) {
            Some(Some(Scalar::Str(s))) => Some(s),
            Some(Some(Scalar::Complex)) | None => self.as_map().get(key).and_then(Value::as_str),
            Some(_) => None,
        }
    }

    /// `key` as an unsigned integer: a JSON integer, or a string of decimal digits (the driver
    /// prints every `meta` value as a string).
    pub fn u64(&self, key: &str) -> Option<u64> {
        let digits = |s: &str| {
            if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                s.parse().ok()
            } else {
                None
            }
        };
        match self.scan(key) {
            Some(Some(Scalar::Str(s))) => digits(s),
            Some(Some(Scalar::Num(n))) => n.as_u64(),
            Some(Some(Scalar::Complex)) | None => match self.as_map().get(key)? {
                Value::Number(n) => n.as_u64(),
                Value::String(s) => digits(s),
                _ => None,
            },
            Some(_) => None,
        }
    }

    /// `key` as a float: a JSON number, or a string that parses as one.
    pub fn f64(&self, key: &str) -> Option<f64> {
        match self.scan(key) {
            Some(Some(Scalar::Str(s))) => s.trim().parse().ok(),
            Some(Some(Scalar::Num(n))) => n.as_f64(),
            Some(Some(Scalar::Complex)) | None => match self.as_map().get(key)? {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            },
            Some(_) => None,
        }
    }

    /// `key` as a bool (JSON bool only).
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.scan(key) {
            Some(Some(Scalar::Bool(b))) => Some(b),
            Some(Some(Scalar::Complex)) | None => self.as_map().get(key).and_then(Value::as_bool),
            Some(_) => None,
        }
    }

    /// True if `key` is present (possibly null).
    pub fn contains(&self, key: &str) -> bool {
        match self.scan(key) {
            Some(found) => found.is_some(),
            None => self.as_map().contains_key(key),
        }
    }

    /// Set `key` (appended if new, replaced in place otherwise).
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        self.as_map_mut().insert(key.into(), value.into());
    }

    /// Keys in file order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.as_map().keys().map(String::as_str)
    }

    /// Entries in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.as_map().iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.as_map().len()
    }

    /// True when there are no keys.
    pub fn is_empty(&self) -> bool {
        match (self.map.get(), &self.raw) {
            (Some(m), _) => m.is_empty(),
            // `{` + whitespace + `}`, without parsing.
            (None, Some(raw)) => raw
                .get()
                .trim()
                .trim_start_matches('{')
                .trim_end_matches('}')
                .trim()
                .is_empty(),
            (None, None) => true,
        }
    }
}

/// A value found by [`Fields::scan`]: scalars borrowed from the text; `Complex` (an array, an
/// object or a string with escapes) sends the caller to the parsed map.
enum Scalar<'a> {
    Str(&'a str),
    Num(serde_json::Number),
    Bool(bool),
    Null,
    Complex,
}

/// Walks an object's keys, skipping every value but the one of the key looked for (the last
/// one if the key repeats, as the parsed map keeps it).
struct FindKey<'k>(&'k str);

impl<'de> serde::de::DeserializeSeed<'de> for FindKey<'_> {
    type Value = Option<Scalar<'de>>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for FindKey<'_> {
    type Value = Option<Scalar<'de>>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(hit) = map.next_key_seed(KeyIs(self.0))? {
            if hit {
                found = Some(map.next_value::<Scalar<'de>>()?);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// A map key compared with the key looked for, without allocating.
struct KeyIs<'k>(&'k str);

impl<'de> serde::de::DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeyIs<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == self.0)
    }
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(v))
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Complex)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Num(v.into()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Num(v.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Scalar<'de>, E> {
                Ok(serde_json::Number::from_f64(v).map_or(Scalar::Complex, Scalar::Num))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Null)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Scalar<'de>, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Scalar::Complex)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Scalar<'de>, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Scalar::Complex)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{"cpu_number": 2, "cpus": "0,2", "esc": "a\"b", "neg": -3,
        "f": 2.5, "fs": " 2.5 ", "digits": "0042", "t": true, "n": null, "arr": [1, {"x": 2}],
        "obj": {"cpu_number": 9}, "dup": "first", "dup": "last", "uni\u00e9": "k"}"#;

    fn loaded() -> Fields {
        serde_json::from_str(TEXT).unwrap()
    }

    #[test]
    fn unparsed_accessors_agree_with_the_parsed_map() {
        let parsed = {
            let f = loaded();
            f.as_map();
            f
        };
        let keys = [
            "cpu_number",
            "cpus",
            "esc",
            "neg",
            "f",
            "fs",
            "digits",
            "t",
            "n",
            "arr",
            "obj",
            "dup",
            "unié",
            "absent",
        ];
        for k in keys {
            let lazy = loaded();
            assert_eq!(lazy.str(k), parsed.str(k), "str {k}");
            assert_eq!(lazy.u64(k), parsed.u64(k), "u64 {k}");
            assert_eq!(lazy.f64(k), parsed.f64(k), "f64 {k}");
            assert_eq!(lazy.bool(k), parsed.bool(k), "bool {k}");
            assert_eq!(lazy.contains(k), parsed.contains(k), "contains {k}");
        }
        let lazy = loaded();
        assert_eq!(lazy.str("esc"), Some("a\"b"));
        assert_eq!(lazy.str("dup"), Some("last"));
        assert_eq!(lazy.u64("cpu_number"), Some(2));
        assert_eq!(lazy.u64("digits"), Some(42));
        assert_eq!(lazy.f64("fs"), Some(2.5));
        assert!(lazy.contains("n") && !lazy.contains("absent"));
        // Lookups of plain scalars leave the text unparsed; an escaped string parses it.
        let fresh = loaded();
        assert_eq!(fresh.str("cpus"), Some("0,2"));
        assert_eq!(fresh.u64("cpu_number"), Some(2));
        assert_eq!(fresh.bool("t"), Some(true));
        assert!(fresh.map.get().is_none());
        assert_eq!(fresh.str("esc"), Some("a\"b"));
        assert!(fresh.map.get().is_some());
    }

    #[test]
    fn unparsed_serialises_like_parsed_and_edits_apply() {
        let lazy = loaded();
        let parsed = loaded();
        parsed.as_map();
        assert_eq!(
            crate::pyjson::to_string(&lazy).unwrap(),
            crate::pyjson::to_string(&parsed).unwrap()
        );
        assert_eq!(lazy, parsed);
        let mut edited = loaded();
        edited.insert("cpu_number", 3);
        assert_eq!(edited.u64("cpu_number"), Some(3));
        assert_eq!(edited.keys().next(), Some("cpu_number"));
        assert!(
            crate::pyjson::to_string(&edited)
                .unwrap()
                .contains("\"cpu_number\": 3")
        );
    }

    #[test]
    fn emptiness_and_non_objects() {
        let e: Fields = serde_json::from_str(" { \n } ").unwrap();
        assert!(e.is_empty() && e.map.get().is_none());
        assert!(!loaded().is_empty());
        for bad in ["[1]", "\"x\"", "3", "null"] {
            let err = serde_json::from_str::<Fields>(bad).unwrap_err().to_string();
            assert!(err.contains("expected a map"), "{bad}: {err}");
        }
    }
}
