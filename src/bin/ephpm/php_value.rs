//! PHP's `serialize()` format read back, so that `ephpm get` shows an array or an object
//! as PHP's `var_export()` would, not as the bytes the store holds. A reader only: it
//! never runs PHP code, and an object is shown by its class name and properties, never
//! instantiated. Anything it does not understand (a truncated value, trailing bytes, an
//! unknown tag, nesting deeper than `MAX_DEPTH`) makes it give up, and the caller shows
//! the bytes as they are.
//!
//! The grammar, as php_var_serializer writes it: `N;` `b:0;` `i:-3;` `d:0.5;` (also
//! `INF`, `-INF`, `NAN`) `s:LEN:"BYTES";` `a:N:{KEY VALUE ...}` `O:LEN:"Class":N:{NAME
//! VALUE ...}` `C:LEN:"Class":LEN:{PAYLOAD}` (a class's own `serialize()`), `E:LEN:"Enum:Case";`
//! and `r:N;` `R:N;` (a reference to the Nth value). A property name of `\0*\0x` is a
//! protected `x`, `\0Class\0x` a private one.

use super::json::{self, Json};

/// Nesting that a reader follows before giving up (PHP's own limit is much higher, but a
/// value nested this deep is not something to read on a terminal).
const MAX_DEPTH: usize = 64;

#[derive(Debug, PartialEq)]
pub enum Php {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
    /// Keys are ints or byte strings, in order.
    Array(Vec<(Key, Php)>),
    /// A class and its properties (names without their visibility marks).
    Object(Vec<u8>, Vec<(Vec<u8>, Php)>),
    /// A class that serializes itself (`C:`): its name and its own payload.
    Custom(Vec<u8>, Vec<u8>),
    /// An enum case: `Enum:Case`.
    Enum(Vec<u8>),
    /// A reference to the Nth value of the serialization (1 the outermost).
    Ref(u64),
}

#[derive(Debug, PartialEq)]
pub enum Key {
    Int(i64),
    Str(Vec<u8>),
}

/// The value `bytes` serialize, or `None` unless they are exactly one serialized value.
pub fn parse(bytes: &[u8]) -> Option<Php> {
    let mut r = Reader { b: bytes, at: 0 };
    let v = r.value(0)?;
    (r.at == bytes.len()).then_some(v)
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let c = *self.b.get(self.at)?;
        self.at += 1;
        Some(c)
    }

    fn expect(&mut self, want: &[u8]) -> Option<()> {
        let end = self.at.checked_add(want.len())?;
        (self.b.get(self.at..end)? == want).then(|| self.at = end)
    }

    /// Bytes up to (not including) `stop`, which is consumed.
    fn until(&mut self, stop: u8) -> Option<&[u8]> {
        let len = self.b.get(self.at..)?.iter().position(|&c| c == stop)?;
        let s = &self.b[self.at..self.at + len];
        self.at += len + 1;
        Some(s)
    }

    fn number<T: std::str::FromStr>(&mut self, stop: u8) -> Option<T> {
        std::str::from_utf8(self.until(stop)?).ok()?.parse().ok()
    }

    /// `LEN:"BYTES"` followed by `after`.
    fn counted(&mut self, after: &[u8]) -> Option<Vec<u8>> {
        let len: usize = self.number(b':')?;
        self.expect(b"\"")?;
        let end = self.at.checked_add(len)?;
        let s = self.b.get(self.at..end)?.to_vec();
        self.at = end;
        self.expect(b"\"")?;
        self.expect(after)?;
        Some(s)
    }

    fn value(&mut self, depth: usize) -> Option<Php> {
        if depth > MAX_DEPTH {
            return None;
        }
        let tag = self.byte()?;
        if tag == b'N' {
            return self.expect(b";").map(|()| Php::Null);
        }
        self.expect(b":")?;
        Some(match tag {
            b'b' => match self.until(b';')? {
                b"0" => Php::Bool(false),
                b"1" => Php::Bool(true),
                _ => return None,
            },
            b'i' => Php::Int(self.number(b';')?),
            b'd' => Php::Float(match self.until(b';')? {
                b"INF" => f64::INFINITY,
                b"-INF" => f64::NEG_INFINITY,
                b"NAN" => f64::NAN,
                s => std::str::from_utf8(s).ok()?.parse().ok()?,
            }),
            b's' => Php::Str(self.counted(b";")?),
            b'E' => Php::Enum(self.counted(b";")?),
            b'r' | b'R' => Php::Ref(self.number(b';')?),
            b'a' => {
                let n: usize = self.number(b':')?;
                self.expect(b"{")?;
                let mut items = Vec::new();
                for _ in 0..n {
                    let key = match self.value(depth + 1)? {
                        Php::Int(i) => Key::Int(i),
                        Php::Str(s) => Key::Str(s),
                        _ => return None,
                    };
                    items.push((key, self.value(depth + 1)?));
                }
                self.expect(b"}")?;
                Php::Array(items)
            }
            b'O' => {
                let class = self.counted(b":")?;
                let n: usize = self.number(b':')?;
                self.expect(b"{")?;
                let mut props = Vec::new();
                for _ in 0..n {
                    let Php::Str(name) = self.value(depth + 1)? else {
                        return None;
                    };
                    props.push((visible_name(name), self.value(depth + 1)?));
                }
                self.expect(b"}")?;
                Php::Object(class, props)
            }
            b'C' => {
                let class = self.counted(b":")?;
                let len: usize = self.number(b':')?;
                self.expect(b"{")?;
                let end = self.at.checked_add(len)?;
                let payload = self.b.get(self.at..end)?.to_vec();
                self.at = end;
                self.expect(b"}")?;
                Php::Custom(class, payload)
            }
            _ => return None,
        })
    }
}

/// A property's name without the `\0*\0` (protected) or `\0Class\0` (private) before it.
fn visible_name(name: Vec<u8>) -> Vec<u8> {
    match name.strip_prefix(b"\0") {
        Some(rest) => match rest.iter().position(|&c| c == 0) {
            Some(i) => rest[i + 1..].to_vec(),
            None => name,
        },
        None => name,
    }
}

/// The value as `var_export()` writes it, its strings made safe for a terminal by `str`
/// (the caller's quoting), with two spaces of indentation a level.
pub fn export(v: &Php, str: &dyn Fn(&[u8]) -> String) -> String {
    let mut out = String::new();
    write(v, 0, str, &mut out);
    out
}

fn write(v: &Php, level: usize, str: &dyn Fn(&[u8]) -> String, out: &mut String) {
    let pad = "  ".repeat(level + 1);
    let end = "  ".repeat(level);
    match v {
        Php::Null => out.push_str("NULL"),
        Php::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Php::Int(n) => out.push_str(&n.to_string()),
        Php::Float(x) => out.push_str(&float(*x)),
        Php::Str(s) => out.push_str(&str(s)),
        Php::Enum(e) => out.push_str(&format!("\\{}", plain(e, str))),
        Php::Ref(n) => out.push_str(&format!("/* reference to value {n} */ NULL")),
        Php::Custom(class, payload) => out.push_str(&format!(
            "/* {} serialized by itself: */ {}",
            plain(class, str),
            str(payload)
        )),
        Php::Array(items) => {
            out.push_str("array (\n");
            for (k, v) in items {
                out.push_str(&pad);
                match k {
                    Key::Int(i) => out.push_str(&i.to_string()),
                    Key::Str(s) => out.push_str(&str(s)),
                }
                out.push_str(" => ");
                if matches!(v, Php::Array(_) | Php::Object(..)) {
                    out.push('\n');
                    out.push_str(&pad);
                }
                write(v, level + 1, str, out);
                out.push_str(",\n");
            }
            out.push_str(&end);
            out.push(')');
        }
        Php::Object(class, props) => {
            if class == b"stdClass" {
                out.push_str("(object) array(\n");
            } else {
                out.push_str(&format!("\\{}::__set_state(array(\n", plain(class, str)));
            }
            for (name, v) in props {
                out.push_str(&pad);
                out.push_str(&str(name));
                out.push_str(" => ");
                if matches!(v, Php::Array(_) | Php::Object(..)) {
                    out.push('\n');
                    out.push_str(&pad);
                }
                write(v, level + 1, str, out);
                out.push_str(",\n");
            }
            out.push_str(&end);
            out.push_str(if class == b"stdClass" { ")" } else { "))" });
        }
    }
}

/// A class or enum name: as it is when it is one (letters, digits, `_`, `\`, `:`), else
/// through the caller's quoting.
fn plain(name: &[u8], str: &dyn Fn(&[u8]) -> String) -> String {
    if !name.is_empty()
        && name
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'\\' | b':') || c >= 0x80)
        && std::str::from_utf8(name).is_ok()
    {
        String::from_utf8_lossy(name).into_owned()
    } else {
        str(name)
    }
}

/// A float as var_export writes one: always with a decimal point or an exponent.
fn float(x: f64) -> String {
    if x.is_nan() {
        "NAN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "INF" } else { "-INF" }.into()
    } else {
        let s = format!("{x:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            s + ".0"
        }
    }
}

/// The value as JSON for `--json`: a list for an array keyed 0, 1, 2…, an object for any
/// other array; an object as `{"__class": NAME, PROPERTY: VALUE…}`.
pub fn to_json(v: &Php) -> Json {
    match v {
        Php::Null | Php::Ref(_) => Json::Null,
        Php::Bool(b) => Json::Bool(*b),
        Php::Int(n) => Json::from(*n),
        Php::Float(x) => json::float(*x),
        Php::Str(s) => json::bytes(s),
        Php::Enum(e) => json::obj(vec![("__enum", json::bytes(e))]),
        Php::Custom(class, payload) => json::obj(vec![
            ("__class", json::bytes(class)),
            ("__serialized", json::bytes(payload)),
        ]),
        Php::Array(items) => {
            let list = items
                .iter()
                .enumerate()
                .all(|(i, (k, _))| *k == Key::Int(i as i64));
            if list {
                Json::Array(items.iter().map(|(_, v)| to_json(v)).collect())
            } else {
                json::obj(
                    items
                        .iter()
                        .map(|(k, v)| {
                            let k = match k {
                                Key::Int(i) => i.to_string(),
                                Key::Str(s) => String::from_utf8_lossy(s).into_owned(),
                            };
                            (k, to_json(v))
                        })
                        .collect::<Vec<_>>(),
                )
            }
        }
        Php::Object(class, props) => {
            let mut fields = vec![("__class".to_string(), json::bytes(class))];
            for (name, v) in props {
                fields.push((String::from_utf8_lossy(name).into_owned(), to_json(v)));
            }
            json::obj(fields)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(bytes: &[u8]) -> Option<String> {
        parse(bytes).map(|v| export(&v, &|s| format!("'{}'", String::from_utf8_lossy(s))))
    }

    #[test]
    fn scalars_and_arrays_read_as_var_export_writes_them() {
        assert_eq!(shown(b"i:-3;").as_deref(), Some("-3"));
        assert_eq!(shown(b"d:1;").as_deref(), Some("1.0"));
        assert_eq!(shown(b"b:1;").as_deref(), Some("true"));
        assert_eq!(shown(b"N;").as_deref(), Some("NULL"));
        assert_eq!(
            shown(b"a:2:{i:0;i:1;s:1:\"k\";a:1:{i:0;s:2:\"x;\";}}").as_deref(),
            Some("array (\n  0 => 1,\n  'k' => \n  array (\n    0 => 'x;',\n  ),\n)")
        );
    }

    #[test]
    fn objects_show_their_class_and_properties_without_visibility_marks() {
        let v = parse(b"O:8:\"App\\User\":2:{s:4:\"\0*\0a\";i:1;s:11:\"\0App\\User\0b\";N;}")
            .expect("parses");
        assert_eq!(
            v,
            Php::Object(
                b"App\\User".to_vec(),
                vec![(b"a".to_vec(), Php::Int(1)), (b"b".to_vec(), Php::Null)]
            )
        );
        assert_eq!(
            shown(b"O:8:\"stdClass\":1:{s:1:\"a\";b:0;}").as_deref(),
            Some("(object) array(\n  'a' => false,\n)")
        );
    }

    #[test]
    fn anything_else_is_not_a_serialized_value() {
        for bad in [
            &b"a:2:{i:0;i:1;}"[..],
            b"s:5:\"abc\";",
            b"i:1;x",
            b"hello",
            b"",
            b"a:99999999999999999999:{}",
            b"s:18446744073709551615:\"\";",
        ] {
            assert_eq!(parse(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        let deep = "a:1:{i:0;".repeat(100) + "N;" + &"}".repeat(100);
        assert_eq!(parse(deep.as_bytes()), None);
    }

    #[test]
    fn json_keeps_lists_maps_and_classes_apart() {
        let v = parse(b"a:2:{i:0;O:1:\"X\":1:{s:1:\"p\";d:0.5;}i:1;a:1:{s:1:\"k\";i:2;}}")
            .expect("parses");
        assert_eq!(
            to_json(&v).to_string(),
            r#"[{"__class":"X","p":0.5},{"k":2}]"#
        );
    }
}
