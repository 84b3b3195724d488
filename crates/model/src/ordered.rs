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
//!
//! Reading is a single streaming pass (a hand-written `visit_map`, no `#[serde(flatten)]`):
//! known keys go straight into their typed fields, unknown ones into `extra`, so nothing is
//! buffered and `serde_path_to_error` sees every nested field path.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Visitor};
use serde::ser::{self, Impossible, Serialize};
use serde_json::{Map, Value};

/// Key order of an object as read from a file (formatting metadata).
#[derive(Debug, Clone, Default)]
pub struct KeyOrder {
    keys: Vec<(Cow<'static, str>, bool)>,
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
            keys: map
                .iter()
                .map(|(k, v)| (Cow::Owned(k.clone()), v.is_null()))
                .collect(),
        }
    }

    /// An empty order with room for `n` keys.
    #[doc(hidden)]
    pub fn with_capacity(n: usize) -> Self {
        KeyOrder {
            keys: Vec::with_capacity(n),
        }
    }

    /// True when nothing was read (value built in code).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Keys in the order read.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|(k, _)| k.as_ref())
    }

    /// Record a key as read (used by [`evidence_struct!`]'s reader). A `repeated` key keeps
    /// its first position and takes the null-ness of its last value, as a JSON map would.
    #[doc(hidden)]
    pub fn push(&mut self, key: Cow<'static, str>, was_null: bool, repeated: bool) {
        if repeated && let Some(e) = self.keys.iter_mut().find(|(k, _)| *k == key) {
            e.1 = was_null;
        } else {
            self.keys.push((key, was_null));
        }
    }

    /// Reorder a freshly serialised object to the order read (see the module docs).
    pub fn apply(&self, mut map: Map<String, Value>) -> Map<String, Value> {
        if self.keys.is_empty() {
            return map;
        }
        let mut out = Map::new();
        for (k, was_null) in &self.keys {
            if let Some(v) = map.shift_remove(k.as_ref()) {
                out.insert(k.to_string(), v);
            } else if *was_null {
                out.insert(k.to_string(), Value::Null);
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

/// A key of an evidence object: the index of a known field, or an unknown key.
#[doc(hidden)]
pub enum Key {
    /// Index into the known keys.
    Known(usize),
    /// A key the struct does not declare.
    Other(String),
}

/// Reads an object key and matches it against the known keys without allocating for them.
#[doc(hidden)]
pub struct KeySeed(pub &'static [&'static str]);

impl KeySeed {
    fn lookup(&self, s: &str) -> Option<Key> {
        self.0.iter().position(|k| *k == s).map(Key::Known)
    }
}

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
        Ok(self.lookup(s).unwrap_or_else(|| Key::Other(s.to_owned())))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Key, E> {
        Ok(self.lookup(&s).unwrap_or(Key::Other(s)))
    }
}

/// Deserializer for a key that is absent: `Option` fields become `None`, every other type
/// fails with "missing field" (what `#[derive(Deserialize)]` does).
#[doc(hidden)]
pub struct Missing<E>(pub &'static str, pub PhantomData<E>);

impl<'de, E: de::Error> de::Deserializer<'de> for Missing<E> {
    type Error = E;
    fn deserialize_any<V: Visitor<'de>>(self, _v: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.0))
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, E> {
        v.visit_none()
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Deserialize an absent field (see [`Missing`]).
#[doc(hidden)]
pub fn missing<'de, T: de::Deserialize<'de>, E: de::Error>(key: &'static str) -> Result<T, E> {
    T::deserialize(Missing(key, PhantomData))
}

/// Stop signal of [`is_null`]'s probe serializer.
#[derive(Debug)]
struct NotNull;

impl fmt::Display for NotNull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not null")
    }
}

impl std::error::Error for NotNull {}

impl ser::Error for NotNull {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        NotNull
    }
}

/// Probe serializer: answers whether a value serialises to JSON `null`, stopping at the
/// first call (no recursion into sequences or maps).
struct NullProbe;

macro_rules! not_null {
    ($($m:ident($t:ty)),* $(,)?) => {
        $(fn $m(self, _v: $t) -> Result<bool, NotNull> { Ok(false) })*
    };
}

impl ser::Serializer for NullProbe {
    type Ok = bool;
    type Error = NotNull;
    type SerializeSeq = Impossible<bool, NotNull>;
    type SerializeTuple = Impossible<bool, NotNull>;
    type SerializeTupleStruct = Impossible<bool, NotNull>;
    type SerializeTupleVariant = Impossible<bool, NotNull>;
    type SerializeMap = Impossible<bool, NotNull>;
    type SerializeStruct = Impossible<bool, NotNull>;
    type SerializeStructVariant = Impossible<bool, NotNull>;
    not_null! {
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
        serialize_i64(i64), serialize_i128(i128), serialize_u8(u8), serialize_u16(u16),
        serialize_u32(u32), serialize_u64(u64), serialize_u128(u128), serialize_f32(f32),
        serialize_f64(f64), serialize_char(char), serialize_str(&str), serialize_bytes(&[u8]),
    }
    fn serialize_none(self) -> Result<bool, NotNull> {
        Ok(true)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<bool, NotNull> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<bool, NotNull> {
        Ok(true)
    }
    fn serialize_unit_struct(self, _n: &'static str) -> Result<bool, NotNull> {
        Ok(true)
    }
    fn serialize_unit_variant(
        self,
        _n: &'static str,
        _i: u32,
        _v: &'static str,
    ) -> Result<bool, NotNull> {
        Ok(false)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _n: &'static str,
        v: &T,
    ) -> Result<bool, NotNull> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _n: &'static str,
        _i: u32,
        _var: &'static str,
        _v: &T,
    ) -> Result<bool, NotNull> {
        Ok(false)
    }
    fn serialize_seq(self, _l: Option<usize>) -> Result<Self::SerializeSeq, NotNull> {
        Err(NotNull)
    }
    fn serialize_tuple(self, _l: usize) -> Result<Self::SerializeTuple, NotNull> {
        Err(NotNull)
    }
    fn serialize_tuple_struct(
        self,
        _n: &'static str,
        _l: usize,
    ) -> Result<Self::SerializeTupleStruct, NotNull> {
        Err(NotNull)
    }
    fn serialize_tuple_variant(
        self,
        _n: &'static str,
        _i: u32,
        _v: &'static str,
        _l: usize,
    ) -> Result<Self::SerializeTupleVariant, NotNull> {
        Err(NotNull)
    }
    fn serialize_map(self, _l: Option<usize>) -> Result<Self::SerializeMap, NotNull> {
        Err(NotNull)
    }
    fn serialize_struct(
        self,
        _n: &'static str,
        _l: usize,
    ) -> Result<Self::SerializeStruct, NotNull> {
        Err(NotNull)
    }
    fn serialize_struct_variant(
        self,
        _n: &'static str,
        _i: u32,
        _v: &'static str,
        _l: usize,
    ) -> Result<Self::SerializeStructVariant, NotNull> {
        Err(NotNull)
    }
}

/// Null check of a field value as read, chosen by type at the macro's expansion site
/// (autoref dispatch): `Option` and `Value` answer directly, evidence structs are never
/// null, and any other type is probed with [`is_null`]. Probing an evidence struct would
/// serialise it whole, which made reading a record twice as slow.
#[doc(hidden)]
pub struct NullCheck<'a, T: ?Sized>(pub &'a T);

/// Types whose null-ness is known without serialising (see [`NullCheck`]).
#[doc(hidden)]
pub trait NullKnown {
    fn is_null_value(&self) -> bool;
}

impl<T> NullKnown for NullCheck<'_, Option<T>> {
    fn is_null_value(&self) -> bool {
        self.0.is_none()
    }
}

impl NullKnown for NullCheck<'_, Value> {
    fn is_null_value(&self) -> bool {
        self.0.is_null()
    }
}

/// Every other serialisable type: probed (see [`NullCheck`]).
#[doc(hidden)]
pub trait NullProbed {
    fn is_null_value(&self) -> bool;
}

impl<T: ?Sized + Serialize> NullProbed for &NullCheck<'_, T> {
    fn is_null_value(&self) -> bool {
        is_null(self.0)
    }
}

/// True when `v` serialises to JSON `null` (checked without serialising its content).
#[doc(hidden)]
pub fn is_null<T: ?Sized + Serialize>(v: &T) -> bool {
    v.serialize(NullProbe).unwrap_or(false)
}

/// The JSON key of a field: its `#[serde(rename = "...")]`, else its name (internal).
#[doc(hidden)]
#[macro_export]
macro_rules! __evidence_key {
    ($f:ident ;) => {
        stringify!($f)
    };
    ($f:ident ; rename = $r:literal $($rest:tt)*) => {
        $r
    };
    ($f:ident ; $skip:tt $($rest:tt)*) => {
        $crate::__evidence_key!($f ; $($rest)*)
    };
}

/// Declare an evidence struct (see the module docs). Each field takes doc comments, then
/// optional `#[serde(...)]` attributes (in that order); `rename` and `skip_serializing_if`
/// are understood.
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
            #[derive(::serde::Serialize)]
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

            #[allow(non_camel_case_types)]
            #[derive(Clone, Copy)]
            enum Field { $( $field, )* }
            const FIELDS: &[Field] = &[ $( Field::$field, )* ];
            const KEYS: &[&str] = &[ $( $crate::__evidence_key!($field ; $($($sattr)*)*), )* ];

            struct V;

            impl<'de> ::serde::de::Visitor<'de> for V {
                type Value = $name;
                fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    f.write_str("a map")
                }
                #[allow(non_snake_case)]
                fn visit_map<A: ::serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<$name, A::Error> {
                    use $crate::ordered::Key;
                    #[allow(unused_imports)]
                    use $crate::ordered::{NullKnown as _, NullProbed as _};
                    $( let mut $field: Option<$ty> = None; )*
                    let mut extra = ::serde_json::Map::new();
                    let mut key_order = $crate::ordered::KeyOrder::with_capacity(KEYS.len());
                    while let Some(key) = map.next_key_seed($crate::ordered::KeySeed(KEYS))? {
                        match key {
                            Key::Known(i) => match FIELDS[i] {
                                $(
                                    Field::$field => {
                                        let v: $ty = map.next_value()?;
                                        key_order.push(
                                            ::std::borrow::Cow::Borrowed(KEYS[i]),
                                            (&$crate::ordered::NullCheck(&v)).is_null_value(),
                                            $field.is_some(),
                                        );
                                        $field = Some(v);
                                    }
                                )*
                            },
                            Key::Other(k) => {
                                let v: ::serde_json::Value = map.next_value()?;
                                let repeated = extra.contains_key(&k);
                                key_order.push(
                                    ::std::borrow::Cow::Owned(k.clone()),
                                    v.is_null(),
                                    repeated,
                                );
                                extra.insert(k, v);
                            }
                        }
                    }
                    Ok($name {
                        $(
                            $field: match $field {
                                Some(v) => v,
                                None => $crate::ordered::missing(
                                    $crate::__evidence_key!($field ; $($($sattr)*)*),
                                )?,
                            },
                        )*
                        extra,
                        key_order,
                    })
                }
            }

            impl $crate::ordered::NullKnown for $crate::ordered::NullCheck<'_, $name> {
                fn is_null_value(&self) -> bool {
                    false
                }
            }

            impl<'de> ::serde::Deserialize<'de> for $name {
                fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    d.deserialize_map(V)
                }
            }
        };
    };
}

#[cfg(test)]
mod tests {
    use crate::record::{PqperfRecordExt, Trial};

    #[test]
    fn repeated_keys_keep_first_position_and_last_value() {
        let t: Trial = serde_json::from_str(
            r#"{"x": 1, "seconds": 1.0, "measurements": 3, "x": null, "seconds": 2.5}"#,
        )
        .unwrap();
        assert_eq!(t.seconds, 2.5);
        assert_eq!(t.cycles, None);
        assert_eq!(
            t.key_order.keys().collect::<Vec<_>>(),
            ["x", "seconds", "measurements"]
        );
        // `cycles` was absent and stays absent.
        assert_eq!(
            crate::pyjson::to_string(&t).unwrap(),
            "{\n \"x\": null,\n \"seconds\": 2.5,\n \"measurements\": 3\n}\n"
        );
    }

    #[test]
    fn absent_and_null_optional_fields_differ_and_required_ones_are_named() {
        let e: PqperfRecordExt = serde_json::from_str(r#"{"per_call_cycles": null}"#).unwrap();
        assert_eq!(
            crate::pyjson::to_string(&e).unwrap(),
            "{\n \"per_call_cycles\": null\n}\n"
        );
        let err = serde_json::from_str::<Trial>(r#"{"seconds": 1.0}"#).unwrap_err();
        assert!(
            err.to_string().contains("missing field `measurements`"),
            "{err}"
        );
        let err = serde_json::from_str::<Trial>("[1]").unwrap_err();
        assert!(err.to_string().contains("expected a map"), "{err}");
    }
}
