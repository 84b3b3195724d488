//! Key-order-preserving evidence structs.
//!
//! Evidence files must round-trip byte for byte: key order as read (campaign.json has
//! different orders on arm_1 and x86_1), fields this version does not know kept verbatim, and
//! the difference between an absent key and a `null` kept. The [`evidence_struct!`] macro
//! declares a struct with typed public fields plus
//!
//! * `extra`: every unknown key with its value (in file order),
//! * `key_order`: the keys as read (formatting metadata only; never affects equality).
//!
//! Serialising writes keys in the order read; known fields that were absent when read and are
//! still `None` are not written; keys that were `null` stay `null`; keys new since reading are
//! appended. Values built in code (empty `key_order`) are written in declaration order, then
//! `extra`.

use serde_json::{Map, Value};

/// Key order of an object as read from a file (formatting metadata).
#[derive(Debug, Clone, Default)]
pub struct KeyOrder {
    keys: Vec<(String, bool)>,
}

impl PartialEq for KeyOrder {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl KeyOrder {
    /// Capture the order (and null-ness) of `map`'s keys.
    pub fn of(map: &Map<String, Value>) -> Self {
        KeyOrder {
            keys: map.iter().map(|(k, v)| (k.clone(), v.is_null())).collect(),
        }
    }

    /// True when nothing was read (value built in code).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Keys in the order read.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|(k, _)| k.as_str())
    }

    /// Reorder a freshly serialised object to the order read (see the module docs).
    pub fn apply(&self, mut map: Map<String, Value>) -> Map<String, Value> {
        if self.keys.is_empty() {
            return map;
        }
        let mut out = Map::new();
        for (k, was_null) in &self.keys {
            if let Some(v) = map.shift_remove(k) {
                out.insert(k.clone(), v);
            } else if *was_null {
                out.insert(k.clone(), Value::Null);
            }
        }
        for (k, v) in map {
            if v.is_null() && !self.keys.iter().any(|(o, _)| *o == k) {
                continue;
            }
            out.insert(k, v);
        }
        out
    }
}

/// Turn a serde_path_to_error error into a custom error message carrying the field path.
pub(crate) fn nested_error<E: serde::de::Error>(
    e: serde_path_to_error::Error<serde_json::Error>,
) -> E {
    let path = e.path().to_string();
    let inner = e.into_inner().to_string();
    if path.is_empty() || path == "?" {
        E::custom(inner)
    } else {
        E::custom(format!("{path}{}{inner}", crate::error::FIELD_SEP))
    }
}

/// Declare an evidence struct (see the module docs). Each field takes doc comments, then
/// optional `#[serde(...)]` attributes (in that order).
#[macro_export]
macro_rules! evidence_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $(#[serde($($sattr:tt)*)])*
                pub $field:ident : $ty:ty
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: $ty, )*
            /// Keys this version of pqperf does not know, kept verbatim in file order.
            pub extra: ::serde_json::Map<String, ::serde_json::Value>,
            /// Key order as read (formatting metadata; empty for values built in code).
            pub key_order: $crate::ordered::KeyOrder,
        }

        const _: () = {
            #[derive(::serde::Serialize, ::serde::Deserialize)]
            #[allow(non_snake_case)]
            struct Repr {
                $( $(#[serde($($sattr)*)])* $field: $ty, )*
                #[serde(flatten)]
                extra: ::serde_json::Map<String, ::serde_json::Value>,
            }

            impl ::serde::Serialize for $name {
                fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    use ::serde::ser::Error as _;
                    let repr = Repr {
                        $( $field: self.$field.clone(), )*
                        extra: self.extra.clone(),
                    };
                    let v = ::serde_json::to_value(&repr).map_err(S::Error::custom)?;
                    let ::serde_json::Value::Object(m) = v else {
                        return Err(S::Error::custom("evidence struct did not serialise to an object"));
                    };
                    ::serde::Serialize::serialize(&self.key_order.apply(m), s)
                }
            }

            impl<'de> ::serde::Deserialize<'de> for $name {
                fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    let m = <::serde_json::Map<String, ::serde_json::Value> as ::serde::Deserialize>::deserialize(d)?;
                    let key_order = $crate::ordered::KeyOrder::of(&m);
                    let repr: Repr = ::serde_path_to_error::deserialize(::serde_json::Value::Object(m))
                        .map_err($crate::ordered::nested_error::<D::Error>)?;
                    Ok($name {
                        $( $field: repr.$field, )*
                        extra: repr.extra,
                        key_order,
                    })
                }
            }
        };
    };
}
