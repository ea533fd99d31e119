//! Just enough JSON for `--json`: a value tree and its text. Keys and values are bytes in
//! the store; what is not UTF-8 is shown with U+FFFD, as a terminal would.

use std::fmt::{self, Display, Write};

pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    pub fn bytes(b: &[u8]) -> Json {
        Json::Str(String::from_utf8_lossy(b).into_owned())
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
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
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
            Json::Obj(fields) => {
                f.write_char('{')?;
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    string(f, k)?;
                    write!(f, ":{v}")?;
                }
                f.write_char('}')
            }
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
}
