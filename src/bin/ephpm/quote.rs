//! Bytes somebody else chose — keys, values, lock names, file and user names — made safe
//! to print on a terminal, in git's C-style quoting (as `git ls-files` with
//! `core.quotePath=false`): text that needs no escaping is printed as it is; anything
//! else is put in double quotes, with `\"`, `\\`, `\a \b \t \n \v \f \r`, and `\ooo`
//! (three octal digits) for every other byte of a control character or of invalid
//! UTF-8. So no escape sequence (ESC, an OSC 52 clipboard write, CR rewriting a line)
//! reaches the terminal, and two different byte strings never print alike.
//!
//! Escaped besides C0 controls and DEL: C1 controls (U+0080–U+009F, which some terminals
//! obey as escape sequences when written as UTF-8) and the bidirectional formatting
//! characters, which reorder what follows them on the screen ("Trojan Source").

/// `bytes` as shown in a report: as it is when it is plain text, else in quotes.
pub fn quoted(bytes: &[u8]) -> String {
    let (inner, plain) = escaped(bytes);
    if plain && !bytes.is_empty() {
        inner
    } else {
        format!("\"{inner}\"")
    }
}

/// `bytes` always in quotes (for a sentence that quotes what it names).
pub fn in_quotes(bytes: &[u8]) -> String {
    format!("\"{}\"", escaped(bytes).0)
}

/// The escaped text and whether nothing had to be escaped.
fn escaped(bytes: &[u8]) -> (String, bool) {
    let mut out = String::with_capacity(bytes.len());
    let mut plain = true;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            plain &= push_char(c, &mut out);
        }
        for &b in chunk.invalid() {
            push_octal(b, &mut out);
            plain = false;
        }
    }
    (out, plain)
}

/// Appends `c` as it reads inside quotes; false when it had to be escaped.
fn push_char(c: char, out: &mut String) -> bool {
    let named = match c {
        '"' => "\\\"",
        '\\' => "\\\\",
        '\x07' => "\\a",
        '\x08' => "\\b",
        '\t' => "\\t",
        '\n' => "\\n",
        '\x0b' => "\\v",
        '\x0c' => "\\f",
        '\r' => "\\r",
        c if c.is_control() || is_bidi_control(c) => {
            for &b in c.encode_utf8(&mut [0; 4]).as_bytes() {
                push_octal(b, out);
            }
            return false;
        }
        c => {
            out.push(c);
            return true;
        }
    };
    out.push_str(named);
    false
}

/// A message made of words and of text from elsewhere (an error naming a file, say),
/// for stderr: its control and bidi characters as `\ooo` octal escapes, the rest,
/// quotes and backslashes included, left as written.
pub fn printable(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_control() || is_bidi_control(c) {
            for &b in c.encode_utf8(&mut [0; 4]).as_bytes() {
                push_octal(b, &mut out);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// An argument as the bytes it names: one in double quotes is read back the way
/// `quoted` writes (`\"`, `\\`, `\a \b \t \n \v \f \r`, `\ooo` octal), and `\xHH`
/// too; any other argument is taken as it is. So a key that `keys` printed, pasted as it
/// is, is that key — NUL and control bytes included (a key that really starts and ends
/// with `"` is written as `quoted` shows it, `"\"..\""`).
pub fn unquote(arg: &[u8]) -> Result<Vec<u8>, String> {
    let Some(inner) = arg.strip_prefix(b"\"").and_then(|a| a.strip_suffix(b"\"")) else {
        return Ok(arg.to_vec());
    };
    let bad = |why: &str| format!("{}: {why}", quoted(arg));
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let c = inner[i];
        i += 1;
        if c == b'"' {
            return Err(bad("a quote inside quotes must be written \\\""));
        }
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = inner.get(i) else {
            return Err(bad("it ends with a lone backslash"));
        };
        i += 1;
        out.push(match e {
            b'"' => b'"',
            b'\\' => b'\\',
            b'a' => 0x07,
            b'b' => 0x08,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 0x0b,
            b'f' => 0x0c,
            b'r' => b'\r',
            b'0'..=b'3' => {
                let digits = inner
                    .get(i - 1..i + 2)
                    .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
                let Some(d) = digits else {
                    return Err(bad("\\ooo takes three octal digits"));
                };
                i += 2;
                (d[0] - b'0') << 6 | (d[1] - b'0') << 3 | (d[2] - b'0')
            }
            b'x' => {
                let hex = inner
                    .get(i..i + 2)
                    .and_then(|h| std::str::from_utf8(h).ok());
                let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) else {
                    return Err(bad("\\x takes two hex digits"));
                };
                i += 2;
                b
            }
            _ => {
                return Err(bad(
                    "unknown escape (\\\" \\\\ \\a \\b \\t \\n \\v \\f \\r \\ooo \\xHH)",
                ));
            }
        });
    }
    Ok(out)
}

fn push_octal(b: u8, out: &mut String) {
    out.push_str(&format!("\\{b:03o}"));
}

/// The characters that change the direction of the text after them (Unicode's bidi
/// marks, embeddings, overrides and isolates).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_left_alone() {
        assert_eq!(quoted(b"user:1"), "user:1");
        assert_eq!(quoted("caf\u{e9} key".as_bytes()), "caf\u{e9} key");
    }

    #[test]
    fn control_bytes_and_invalid_utf8_are_escaped_in_quotes() {
        assert_eq!(
            quoted(b"\x1b]52;c;aGk=\x07\r\n"),
            r#""\033]52;c;aGk=\a\r\n""#
        );
        assert_eq!(quoted(b"bin\xff\xfe"), r#""bin\377\376""#);
        assert_eq!(quoted(b"bin\xfe\xff"), r#""bin\376\377""#);
        assert_eq!(quoted("\u{9b}31m".as_bytes()), r#""\302\23331m""#);
        assert_eq!(quoted("a\u{202e}b".as_bytes()), r#""a\342\200\256b""#);
    }

    #[test]
    fn quotes_and_backslashes_are_escaped_so_quoting_is_unambiguous() {
        assert_eq!(quoted(br#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quoted(b""), r#""""#);
        assert_eq!(in_quotes(b"page:"), r#""page:""#);
    }

    #[test]
    fn what_quoted_prints_unquote_reads_back() {
        let mut samples: Vec<Vec<u8>> = vec![
            b"user:1".to_vec(),
            b"".to_vec(),
            b"tag\0\x01:x".to_vec(),
            b"\"quoted\"".to_vec(),
            br#"a"b\c"#.to_vec(),
            b"\x1b]52;c;aGk=\x07\r\n".to_vec(),
            b"bin\xff\xfe".to_vec(),
            "caf\u{e9} \u{202e}\u{9b}".as_bytes().to_vec(),
        ];
        samples.extend((0..=255u8).map(|b| vec![b'k', b]));
        for s in samples {
            assert_eq!(
                unquote(quoted(&s).as_bytes()).as_deref(),
                Ok(&s[..]),
                "{s:?}"
            );
        }
        assert_eq!(unquote(br#""a\x00\x7fb""#).as_deref(), Ok(&b"a\0\x7fb"[..]));
        assert_eq!(unquote(b"plain\\n").as_deref(), Ok(&b"plain\\n"[..]));
    }

    #[test]
    fn a_bad_escape_is_an_error_not_a_guess() {
        for bad in [
            &br#""\q""#[..],
            br#""\""#,
            br#""\4""#,
            br#""\xg0""#,
            br#""a"b""#,
            br#""\08""#,
        ] {
            assert!(unquote(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn messages_keep_their_words_and_lose_their_escapes() {
        assert_eq!(
            printable("open \"/x/\u{1b}[2J\": denied\nnext"),
            "open \"/x/\\033[2J\": denied\\012next"
        );
    }
}
