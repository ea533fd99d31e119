//! Reading requests off a connection's buffer: RESP arrays of bulk strings (what every
//! client library sends) and inline commands (what a person types into `telnet` or `nc`,
//! and what Redis' own tests send). Nothing is allocated for a request before its bytes
//! have arrived: a client announcing a huge bulk gets nothing reserved for it, so a
//! lying length costs the server only what the client actually sends.

use std::ops::Range;

/// What a request may be; tighter before `AUTH` (Redis' own numbers for an
/// unauthenticated client: 10 arguments, 16 KiB a bulk), so that whoever cannot log in
/// cannot make the server buffer much either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_args: usize,
    pub max_bulk: usize,
    /// The longest inline command line.
    pub max_inline: usize,
}

impl Limits {
    pub const UNAUTHENTICATED: Limits = Limits {
        max_args: 10,
        max_bulk: 16 << 10,
        max_inline: 16 << 10,
    };
}

/// A request that breaks the protocol: answered with this text after "ERR Protocol
/// error: ", then the connection is closed (the stream can no longer be framed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub std::borrow::Cow<'static, str>);

fn broken(why: &'static str) -> ProtocolError {
    ProtocolError(why.into())
}

/// The outcome of one look at the buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A request: its arguments are `args` (ranges of the buffer); it took this many bytes.
    Request(usize),
    /// An empty line (inline): skip this many bytes.
    Blank(usize),
    /// More bytes are needed: at least this many in all, when known.
    Incomplete(Option<usize>),
}

/// Parses one request at the start of `buf` into `args`.
pub fn parse(
    buf: &[u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<Parsed, ProtocolError> {
    args.clear();
    match buf.first() {
        None => Ok(Parsed::Incomplete(None)),
        Some(b'*') => multibulk(buf, limits, args),
        Some(_) => inline(buf, limits, args),
    }
}

/// `*<n>\r\n` then n × `$<len>\r\n<bytes>\r\n`.
fn multibulk(
    buf: &[u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<Parsed, ProtocolError> {
    let Some((count, mut at)) = number_line(buf, 1, "invalid multibulk length")? else {
        return Ok(Parsed::Incomplete(None));
    };
    let count = match count {
        n if n <= 0 => return Ok(Parsed::Blank(at)), // Redis ignores `*0` and `*-1`
        n if n as u64 > limits.max_args as u64 => {
            return Err(broken("invalid multibulk length"));
        }
        n => n as usize,
    };
    for _ in 0..count {
        match buf.get(at) {
            None => return Ok(Parsed::Incomplete(None)),
            Some(b'$') => {}
            Some(&got) => {
                return Err(ProtocolError(
                    format!("expected '$', got '{}'", got as char).into(),
                ));
            }
        }
        let Some((len, start)) = number_line(buf, at + 1, "invalid bulk length")? else {
            return Ok(Parsed::Incomplete(None));
        };
        if len < 0 || len as u64 > limits.max_bulk as u64 {
            return Err(broken("invalid bulk length"));
        }
        let end = start + len as usize;
        if buf.len() < end + 2 {
            return Ok(Parsed::Incomplete(Some(end + 2)));
        }
        if &buf[end..end + 2] != b"\r\n" {
            return Err(broken("invalid bulk length"));
        }
        args.push(start..end);
        at = end + 2;
    }
    Ok(Parsed::Request(at))
}

/// A decimal number from `at` to the next CRLF, and where the next line starts; `None`
/// when the line is not all there yet. `bad` says what a malformed one is.
fn number_line(
    buf: &[u8],
    at: usize,
    bad: &'static str,
) -> Result<Option<(i64, usize)>, ProtocolError> {
    // No count or length needs more than 20 characters.
    const LONGEST: usize = 32;
    let rest = buf.get(at..).unwrap_or_default();
    let Some(cr) = rest.iter().take(LONGEST + 1).position(|&b| b == b'\r') else {
        return if rest.len() > LONGEST {
            Err(broken(bad))
        } else {
            Ok(None)
        };
    };
    match rest.get(cr + 1) {
        None => return Ok(None),
        Some(b'\n') => {}
        Some(_) => return Err(broken(bad)),
    }
    let n = decimal(&rest[..cr]).ok_or_else(|| broken(bad))?;
    Ok(Some((n, at + cr + 2)))
}

/// A header's decimal number: an optional `-`, then 1 to 18 digits (a length of 10^18
/// bytes is already beyond every limit). Read by hand: it is on every request's path.
fn decimal(b: &[u8]) -> Option<i64> {
    let (negative, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i64::from(d - b'0');
    }
    Some(if negative { -n } else { n })
}

/// A line of words separated by spaces or tabs; a word may be quoted ("…" or '…', taken
/// as it is: no escapes, which a person at `nc` does not need and clients never send).
fn inline(
    buf: &[u8],
    limits: &Limits,
    args: &mut Vec<Range<usize>>,
) -> Result<Parsed, ProtocolError> {
    let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
        return if buf.len() > limits.max_inline {
            Err(broken("too big inline request"))
        } else {
            Ok(Parsed::Incomplete(None))
        };
    };
    if nl > limits.max_inline {
        return Err(broken("too big inline request"));
    }
    let line_end = if nl > 0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    let mut i = 0;
    while i < line_end {
        match buf[i] {
            b' ' | b'\t' => i += 1,
            b'"' | b'\'' => {
                let quote = buf[i];
                let close = buf[i + 1..line_end]
                    .iter()
                    .position(|&b| b == quote)
                    .ok_or_else(|| broken("unbalanced quotes in request"))?;
                let end = i + 1 + close;
                if end + 1 < line_end && !matches!(buf[end + 1], b' ' | b'\t') {
                    return Err(broken("unbalanced quotes in request"));
                }
                args.push(i + 1..end);
                i = end + 1;
            }
            _ => {
                let end = buf[i..line_end]
                    .iter()
                    .position(|&b| b == b' ' || b == b'\t')
                    .map_or(line_end, |p| i + p);
                args.push(i..end);
                i = end;
            }
        }
        if args.len() > limits.max_args {
            return Err(broken("invalid multibulk length"));
        }
    }
    Ok(if args.is_empty() {
        Parsed::Blank(nl + 1)
    } else {
        Parsed::Request(nl + 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOMY: Limits = Limits {
        max_args: 1 << 20,
        max_bulk: 512 << 20,
        max_inline: 64 << 10,
    };

    fn words(buf: &[u8]) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        let mut args = Vec::new();
        Ok(match parse(buf, &ROOMY, &mut args)? {
            Parsed::Request(_) => Some(args.iter().map(|r| buf[r.clone()].to_vec()).collect()),
            _ => None,
        })
    }

    #[test]
    fn multibulk_and_inline_requests_are_read() {
        assert_eq!(
            words(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n").unwrap(),
            Some(vec![b"GET".to_vec(), b"k".to_vec()])
        );
        assert_eq!(
            words(b"SET k 'a b'\r\n").unwrap(),
            Some(vec![b"SET".to_vec(), b"k".to_vec(), b"a b".to_vec()])
        );
        assert_eq!(words(b"PING\n").unwrap(), Some(vec![b"PING".to_vec()]));
    }

    #[test]
    fn a_request_cut_anywhere_waits_for_the_rest() {
        let whole = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n";
        for cut in 0..whole.len() {
            assert_eq!(words(&whole[..cut]).unwrap(), None, "cut at {cut}");
        }
    }

    #[test]
    fn a_huge_announced_bulk_reserves_nothing_and_says_how_much_it_needs() {
        let mut args = Vec::new();
        let got = parse(b"*1\r\n$100000000\r\nab", &ROOMY, &mut args).unwrap();
        assert_eq!(got, Parsed::Incomplete(Some(16 + 100_000_000 + 2)));
    }

    #[test]
    fn broken_framing_is_a_protocol_error() {
        assert!(words(b"*1\r\n+GET\r\n").is_err());
        assert!(words(b"*1\r\n$-5\r\n").is_err());
        assert!(words(b"*x\r\n").is_err());
        assert!(words(b"*1\r\n$1\r\nab\r\n").is_err());
        assert!(words(b"SET \"k\r\n").is_err());
        let mut args = Vec::new();
        let long = vec![b'a'; (16 << 10) + 1];
        assert!(parse(&long, &Limits::UNAUTHENTICATED, &mut args).is_err());
        assert!(parse(b"*11\r\n", &Limits::UNAUTHENTICATED, &mut args).is_err());
        assert!(parse(b"*1\r\n$16385\r\n", &Limits::UNAUTHENTICATED, &mut args).is_err());
    }

    /// Encodes words as a client library does.
    fn encode(words: &[Vec<u8>]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", words.len()).into_bytes();
        for w in words {
            out.extend_from_slice(format!("${}\r\n", w.len()).as_bytes());
            out.extend_from_slice(w);
            out.extend_from_slice(b"\r\n");
        }
        out
    }

    proptest::proptest! {
        /// Any bytes at all: an answer, never a panic, and never a request longer than
        /// the buffer or arguments outside it.
        #[test]
        fn any_bytes_are_answered_without_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let mut args = Vec::new();
            for limits in [ROOMY, Limits::UNAUTHENTICATED] {
                match parse(&bytes, &limits, &mut args) {
                    Ok(Parsed::Request(n)) => {
                        proptest::prop_assert!(n <= bytes.len());
                        proptest::prop_assert!(args.iter().all(|r| r.end <= n));
                    }
                    Ok(Parsed::Blank(n)) => proptest::prop_assert!(n <= bytes.len()),
                    Ok(Parsed::Incomplete(_)) | Err(_) => {}
                }
            }
        }

        /// What a client sends reads back word for word, and any cut of it waits.
        #[test]
        fn encoded_requests_read_back_and_cuts_wait(
            words in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..64), 1..8),
            cut in 0usize..1000,
        ) {
            let wire = encode(&words);
            proptest::prop_assert_eq!(words_of(&wire), Some(words.clone()));
            let cut = cut % wire.len();
            proptest::prop_assert_eq!(words_of(&wire[..cut]), None);
        }
    }

    fn words_of(buf: &[u8]) -> Option<Vec<Vec<u8>>> {
        words(buf).expect("a well-formed request")
    }
}
