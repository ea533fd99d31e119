//! Just enough JSON for `--json`: a value tree and its text. Keys, values and file names
//! are bytes; JSON strings are Unicode. So bytes that are valid UTF-8 are a JSON string,
//! and any other bytes an object `{"base64": "..."}` of them (standard alphabet, padded):
//! lossless, and two different byte strings are never the same JSON.
//!
//! Control characters (C0, DEL, C1) and the bidirectional formatting characters are
//! written as `\uXXXX`, so that the document is also safe to show on a terminal.

use std::fmt::{self, Display, Write};

use base64::Engine;

use super::quote::is_bidi_control;

pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
    /// An object whose member names come from the data (a PHP array's keys).
    Dyn(Vec<(String, Json)>),
}

impl Json {
    /// Bytes: a string when they are UTF-8, else `{"base64": ...}` (see the module doc).
    pub fn bytes(b: &[u8]) -> Json {
        match std::str::from_utf8(b) {
            Ok(text) => Json::Str(text.into()),
            Err(_) => Json::Obj(vec![(
                "base64",
                Json::Str(base64::engine::general_purpose::STANDARD.encode(b)),
            )]),
        }
    }

    pub fn opt_u64(n: Option<u64>) -> Json {
        n.map_or(Json::Null, Json::Uint)
    }

    pub fn opt_f64(x: Option<f64>) -> Json {
        x.map_or(Json::Null, Json::Float)
    }
}

fn string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c.is_control() || is_bidi_control(c) => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

fn object<'a>(
    f: &mut fmt::Formatter<'_>,
    fields: impl Iterator<Item = (&'a str, &'a Json)>,
) -> fmt::Result {
    f.write_char('{')?;
    for (i, (k, v)) in fields.enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        string(f, k)?;
        write!(f, ":{v}")?;
    }
    f.write_char('}')
}

impl Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{b}"),
            Json::Int(n) => write!(f, "{n}"),
            Json::Uint(n) => write!(f, "{n}"),
            // JSON has no NaN or infinity.
            Json::Float(x) if !x.is_finite() => f.write_str("null"),
            Json::Float(x) => write!(f, "{x:?}"),
            Json::Str(s) => string(f, s),
            Json::Arr(items) => {
                f.write_char('[')?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_char(']')
            }
            Json::Obj(fields) => object(f, fields.iter().map(|(k, v)| (*k, v))),
            Json::Dyn(fields) => object(f, fields.iter().map(|(k, v)| (k.as_str(), v))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Json;

    #[test]
    fn escapes_what_json_requires() {
        let j = Json::Obj(vec![
            ("k", Json::Str("a\"b\\c\n\u{1}é".into())),
            (
                "n",
                Json::Arr(vec![Json::Int(-1), Json::Float(0.5), Json::Null]),
            ),
        ]);
        assert_eq!(
            j.to_string(),
            r#"{"k":"a\"b\\c\n\u0001é","n":[-1,0.5,null]}"#
        );
    }

    #[test]
    fn bytes_are_lossless_and_terminal_safe() {
        let shown = |b: &[u8]| Json::bytes(b).to_string();
        assert_eq!(shown(b"bin\xff\xfe"), r#"{"base64":"Ymlu//4="}"#);
        assert_eq!(shown(b"bin\xfe\xff"), r#"{"base64":"Ymlu/v8="}"#);
        assert_eq!(shown(b"\x1b]52;c;aGk=\x07"), r#""\u001b]52;c;aGk=\u0007""#);
        assert_eq!(
            shown("\u{9b}\u{7f}\u{202e}".as_bytes()),
            r#""\u009b\u007f\u202e""#
        );
    }
}
