//! `--json`'s documents: serde_json's values, with what bytes and a terminal need. Keys,
//! values and file names are bytes; JSON strings are Unicode. So bytes that are valid
//! UTF-8 are a JSON string, and any other bytes an object `{"base64": "..."}` of them
//! (standard alphabet, padded): lossless, and two different byte strings are never the
//! same JSON. Members keep the order they were given in (serde_json's `preserve_order`).
//!
//! Control characters (C0, DEL, C1) and the bidirectional formatting characters are
//! written as `\uXXXX` (`TerminalSafe`: serde_json escapes only C0 by itself), so that
//! the document is also safe to show on a terminal.

use std::io;

use base64::Engine;
pub use serde_json::Value as Json;
use serde_json::ser::{CompactFormatter, Formatter, Serializer};

use super::quote::is_bidi_control;

/// An object of `fields`, in their order.
pub fn obj<K: Into<String>>(fields: impl IntoIterator<Item = (K, Json)>) -> Json {
    Json::Object(fields.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

/// Bytes: a string when they are UTF-8, else `{"base64": ...}` (see the module doc).
pub fn bytes(b: &[u8]) -> Json {
    match std::str::from_utf8(b) {
        Ok(text) => Json::String(text.into()),
        Err(_) => obj([(
            "base64",
            Json::String(base64::engine::general_purpose::STANDARD.encode(b)),
        )]),
    }
}

/// A float; JSON has no NaN or infinity, which are null.
pub fn float(x: f64) -> Json {
    serde_json::Number::from_f64(x).map_or(Json::Null, Json::Number)
}

pub fn opt_u64(n: Option<u64>) -> Json {
    n.map_or(Json::Null, Json::from)
}

pub fn opt_f64(x: Option<f64>) -> Json {
    x.map_or(Json::Null, float)
}

/// The document's text, terminal-safe (see the module doc).
pub fn text(v: &Json) -> String {
    let mut out = Vec::new();
    let mut ser = Serializer::with_formatter(&mut out, TerminalSafe);
    serde::Serialize::serialize(v, &mut ser).expect("a Value always serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json's compact output, with DEL, C1 and the bidi controls escaped too.
struct TerminalSafe;

impl Formatter for TerminalSafe {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        for c in fragment.chars() {
            if c.is_control() || is_bidi_control(c) {
                write!(w, "\\u{:04x}", c as u32)?;
            } else {
                CompactFormatter.write_string_fragment(w, c.encode_utf8(&mut [0; 4]))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_json_requires() {
        let j = obj([
            ("k", Json::String("a\"b\\c\n\u{1}é".into())),
            (
                "n",
                Json::Array(vec![
                    Json::from(-1),
                    float(0.5),
                    Json::Null,
                    float(f64::NAN),
                ]),
            ),
        ]);
        assert_eq!(
            text(&j),
            r#"{"k":"a\"b\\c\n\u0001é","n":[-1,0.5,null,null]}"#
        );
    }

    #[test]
    fn members_keep_their_order() {
        let j = obj([("z", Json::from(1)), ("a", Json::from(2))]);
        assert_eq!(text(&j), r#"{"z":1,"a":2}"#);
    }

    #[test]
    fn bytes_are_lossless_and_terminal_safe() {
        let shown = |b: &[u8]| text(&bytes(b));
        assert_eq!(shown(b"bin\xff\xfe"), r#"{"base64":"Ymlu//4="}"#);
        assert_eq!(shown(b"bin\xfe\xff"), r#"{"base64":"Ymlu/v8="}"#);
        assert_eq!(shown(b"\x1b]52;c;aGk=\x07"), r#""\u001b]52;c;aGk=\u0007""#);
        assert_eq!(
            shown("\u{9b}\u{7f}\u{202e}".as_bytes()),
            r#""\u009b\u007f\u202e""#
        );
    }
}
