//! What both wire formats share: base64 for pictures sent inline, the text of an error object
//! wherever an API put it, a cut at a number of characters, and the lenient typed pieces a
//! stream event is read into.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Standard base64 with padding, for pictures sent inline.
pub(crate) fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for group in data.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if group.len() > 1 { sextet(6) } else { '=' });
        out.push(if group.len() > 2 { sextet(0) } else { '=' });
    }
    out
}

/// The message of an error object, wherever the two APIs and their imitators put it.
pub(crate) fn json_error_text(value: &serde_json::Value) -> Option<String> {
    let error = value.get("error").unwrap_or(value);
    if let Some(text) = error.as_str() {
        return Some(text.to_owned());
    }
    error
        .get("message")
        .or_else(|| error.get("detail"))
        .and_then(|m| m.as_str())
        .map(str::to_owned)
}

pub(crate) fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

// A stream event is read straight into typed structs of these pieces rather than into a
// `Value` tree (a map per object, a copy per string): text borrows from the event where it has
// no escapes, and fields nobody reads are skipped without being built. Each piece is as lenient
// as the `Value` lookups it replaces: a field of an unexpected type reads as absent, never as an
// error, so only bytes that are not JSON fail an event.

/// Visitor methods that read any value of their kind as the piece's default (absent).
macro_rules! absent_for {
    ($($method:ident: $ty:ty),*) => {$(
        fn $method<E: Error>(self, _: $ty) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    )*};
}

/// Visitor methods for `null`, arrays and objects that skip them as the piece's default.
macro_rules! absent_for_null_lists_and_maps {
    () => {
        fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}

/// A string where the event has one (borrowed from it where it can be); anything else is absent,
/// as `Value::as_str` would say.
#[derive(Debug, Default)]
pub(crate) struct Text<'a>(pub Option<Cow<'a, str>>);

impl Text<'_> {
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Seen<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Seen<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: Error>(self, text: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Borrowed(text))))
            }
            fn visit_str<E: Error>(self, text: &str) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Owned(text.to_owned()))))
            }
            fn visit_string<E: Error>(self, text: String) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Owned(text))))
            }
            absent_for!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64);
            absent_for_null_lists_and_maps!();
        }
        deserializer.deserialize_any(Seen(PhantomData))
    }
}

/// A count where the event has a whole non-negative number; anything else is absent, as
/// `Value::as_u64` would say.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Count(pub Option<u64>);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Seen;
        impl<'de> Visitor<'de> for Seen {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_u64<E: Error>(self, n: u64) -> Result<Count, E> {
                Ok(Count(Some(n)))
            }
            absent_for!(visit_bool: bool, visit_i64: i64, visit_f64: f64, visit_str: &str);
            absent_for_null_lists_and_maps!();
        }
        deserializer.deserialize_any(Seen)
    }
}

/// An object read as `T` where the event has one; anything else is absent.
#[derive(Debug)]
pub(crate) struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Seen<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Seen<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
            }
            fn visit_unit<E: Error>(self) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Obj<T>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Obj(None))
            }
            absent_for!(
                visit_bool: bool,
                visit_i64: i64,
                visit_u64: u64,
                visit_f64: f64,
                visit_str: &str
            );
        }
        deserializer.deserialize_any(Seen(PhantomData))
    }
}

/// An array's items read as `T` where the event has one; anything else reads as no items.
#[derive(Debug)]
pub(crate) struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Seen<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Seen<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<List<T>, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(List)
            }
            fn visit_unit<E: Error>(self) -> Result<List<T>, E> {
                Ok(List(Vec::new()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<List<T>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(List(Vec::new()))
            }
            absent_for!(
                visit_bool: bool,
                visit_i64: i64,
                visit_u64: u64,
                visit_f64: f64,
                visit_str: &str
            );
        }
        deserializer.deserialize_any(Seen(PhantomData))
    }
}

/// Any value, kept whole only where it is present (`null` included, which a plain
/// `Option<Value>` would read as absent): for the rare fields whose mere presence matters.
pub(crate) fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// One stream event read as `T`: bytes that are not JSON are a clear error (MODEL-3); an event
/// that is JSON but no object carries nothing (as a `Value` lookup in it would find nothing).
pub(crate) fn event<'a, T: Deserialize<'a> + Default>(
    data: &'a str,
) -> Result<T, super::types::ModelError> {
    serde_json::from_str::<Obj<T>>(data)
        .map(|read| read.0.unwrap_or_default())
        .map_err(|err| {
            super::types::ModelError::Malformed(format!("a stream event is not json: {err}"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }
}
