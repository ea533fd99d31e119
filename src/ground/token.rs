//! A lock holder's token: what makes a release or an extension act only for the holder
//! that took the lock (every backend compares it where the data lives).

/// A lock's token: 128 bits from the OS CSPRNG, as 32 hex digits.
pub type Token = [u8; 32];

/// A fresh token.
pub fn new_token() -> Token {
    let mut raw = [0u8; 16];
    let mut filled = 0;
    while filled < raw.len() {
        // SAFETY: getrandom writes at most `len` bytes into the buffer we pass, which is
        // the unfilled tail of `raw`.
        let n =
            unsafe { libc::getrandom(raw[filled..].as_mut_ptr().cast(), raw.len() - filled, 0) };
        if n > 0 {
            filled += n as usize;
        } else if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // getrandom(2) only fails with EINTR for 16 bytes from a kernel that has it
            // (Linux 3.17+); anything else means no kernel entropy interface at all.
            panic!("getrandom failed: {}", std::io::Error::last_os_error());
        }
    }
    let mut token = [0u8; 32];
    for (i, b) in raw.iter().enumerate() {
        token[2 * i] = b"0123456789abcdef"[(b >> 4) as usize];
        token[2 * i + 1] = b"0123456789abcdef"[(b & 15) as usize];
    }
    token
}
