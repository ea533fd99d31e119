//! Writing replies into a connection's output buffer, in the protocol the client chose
//! with `HELLO`: RESP2 (the default) or RESP3, whose null, map, double, boolean and push
//! types RESP2 spells as a null bulk, a flat array, a bulk string, an integer and an
//! array.

use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Resp2,
    Resp3,
}

/// A connection's output: replies are appended and written out together, so that a
/// pipeline of requests costs one write.
pub struct Reply {
    pub out: Vec<u8>,
    pub proto: Proto,
}

impl Default for Reply {
    fn default() -> Self {
        Reply {
            out: Vec::with_capacity(16 << 10),
            proto: Proto::Resp2,
        }
    }
}

impl Reply {
    pub fn simple(&mut self, s: &str) {
        self.line(b'+', s.as_bytes());
    }

    pub fn ok(&mut self) {
        self.out.extend_from_slice(b"+OK\r\n");
    }

    /// An error: `text` starts with its code ("ERR …", "WRONGTYPE …", "NOAUTH …"). A CR
    /// or LF in it (a key echoed back) would end the line early, so they become spaces.
    pub fn error(&mut self, text: &str) {
        self.out.push(b'-');
        self.out.extend(
            text.bytes()
                .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        );
        self.out.extend_from_slice(b"\r\n");
    }

    pub fn int(&mut self, n: i64) {
        self.header(b':', n);
    }

    pub fn bulk(&mut self, bytes: &[u8]) {
        self.header(b'$', bytes.len() as i64);
        self.out.extend_from_slice(bytes);
        self.out.extend_from_slice(b"\r\n");
    }

    pub fn null(&mut self) {
        match self.proto {
            Proto::Resp2 => self.out.extend_from_slice(b"$-1\r\n"),
            Proto::Resp3 => self.out.extend_from_slice(b"_\r\n"),
        }
    }

    /// A null where RESP2 has a null array (EXEC aborted by WATCH).
    pub fn null_array(&mut self) {
        match self.proto {
            Proto::Resp2 => self.out.extend_from_slice(b"*-1\r\n"),
            Proto::Resp3 => self.out.extend_from_slice(b"_\r\n"),
        }
    }

    pub fn array(&mut self, len: usize) {
        self.header(b'*', len as i64);
    }

    /// A map of `len` pairs (RESP2: an array of 2 × `len`).
    pub fn map(&mut self, len: usize) {
        match self.proto {
            Proto::Resp2 => self.header(b'*', 2 * len as i64),
            Proto::Resp3 => self.header(b'%', len as i64),
        }
    }

    /// A set of `len` members (RESP2: an array).
    pub fn set(&mut self, len: usize) {
        match self.proto {
            Proto::Resp2 => self.header(b'*', len as i64),
            Proto::Resp3 => self.header(b'~', len as i64),
        }
    }

    /// An out-of-band message (pub/sub): RESP3's push type, RESP2's array.
    pub fn push(&mut self, len: usize) {
        match self.proto {
            Proto::Resp2 => self.header(b'*', len as i64),
            Proto::Resp3 => self.header(b'>', len as i64),
        }
    }

    /// A string that RESP3 would call verbatim text (INFO, CLIENT LIST): a bulk string in
    /// both, which every client prints.
    pub fn text(&mut self, s: &str) {
        self.bulk(s.as_bytes());
    }

    fn header(&mut self, kind: u8, n: i64) {
        self.out.push(kind);
        // Writing into a Vec cannot fail.
        let _ = write!(self.out, "{n}\r\n");
    }

    fn line(&mut self, kind: u8, s: &[u8]) {
        self.out.push(kind);
        self.out.extend_from_slice(s);
        self.out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resp3_types_degrade_to_resp2_ones() {
        let mut r = Reply::default();
        r.map(1);
        r.bulk(b"k");
        r.null();
        assert_eq!(r.out, b"*2\r\n$1\r\nk\r\n$-1\r\n");
        let mut r = Reply {
            proto: Proto::Resp3,
            ..Reply::default()
        };
        r.map(1);
        r.null();
        r.error("ERR bad\r\nkey");
        assert_eq!(r.out, b"%1\r\n_\r\n-ERR bad  key\r\n");
    }
}
