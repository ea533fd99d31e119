//! How the store's typed values read to a Redis client, and how a client's numbers are
//! read: one data model with PHP.
//!
//! A value `Ephpm\Kv` stored shows to Redis clients as bytes: a string as itself, an int
//! in decimal, a float in the shortest decimal that reads back to the same float
//! (`NAN`, `INF`, `-INF` as PHP prints them), `true` as `1`, `false` and `null` as the
//! empty string (PHP's own string conversions), and an array or object as the PHP
//! layer's serialized bytes, as they are (a Redis client can store them back, and PHP
//! then reads a string). What a Redis client writes is a string to PHP; `INCR` on a
//! decimal string and `Kv::increment` count on the same integer.

use std::io::Write;

use crate::store::Value;

/// Appends what a Redis client reads for `value`.
pub fn to_bytes(value: Value<'_>, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail.
    let _ = match value {
        Value::Str(b) | Value::Serialized(b) => {
            out.extend_from_slice(b);
            Ok(())
        }
        Value::Int(n) => write!(out, "{n}"),
        Value::Float(x) => write!(out, "{}", format_float(x)),
        Value::Bool(true) => write!(out, "1"),
        Value::Bool(false) | Value::Null => Ok(()),
    };
}

/// A float as a reply shows it: shortest round-trip decimal, PHP's names for the rest.
pub fn format_float(x: f64) -> String {
    if x.is_nan() {
        "NAN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "INF" } else { "-INF" }.into()
    } else {
        format!("{x}")
    }
}

/// A 64-bit integer as Redis reads one: an optional `-`, digits, no leading zero
/// (except `0` itself), nothing else.
pub fn parse_int(b: &[u8]) -> Option<i64> {
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if digits[0] == b'0' && (digits.len() > 1 || b[0] == b'-') {
        return None;
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// A finite float: a decimal or exponent form, or `inf`/`-inf` where the caller allows
/// them; never NaN, never spaces.
pub fn parse_float(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty() || s.trim() != s {
        return None;
    }
    let x: f64 = s.parse().ok()?;
    (!x.is_nan()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn php_values_read_as_php_prints_them() {
        let show = |v| {
            let mut out = Vec::new();
            to_bytes(v, &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(show(Value::Int(-42)), "-42");
        assert_eq!(show(Value::Float(1.5)), "1.5");
        assert_eq!(show(Value::Float(2.0)), "2");
        assert_eq!(show(Value::Bool(true)), "1");
        assert_eq!(show(Value::Bool(false)), "");
        assert_eq!(show(Value::Null), "");
    }

    #[test]
    fn integers_are_read_strictly() {
        assert_eq!(parse_int(b"-12"), Some(-12));
        assert_eq!(parse_int(b"0"), Some(0));
        for bad in [
            &b"+1"[..],
            b"01",
            b"-0",
            b" 1",
            b"1 ",
            b"",
            b"-",
            b"99999999999999999999",
        ] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }
}
