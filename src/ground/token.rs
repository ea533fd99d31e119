//! A lock holder's token: what makes a release or an extension act only for the holder
//! that took the lock (every backend compares it where the data lives).

/// A lock's token: 128 bits from the OS CSPRNG, as 32 hex digits.
pub type Token = [u8; 32];

/// A fresh token.
pub fn new_token() -> Token {
    let mut raw = [0u8; 16];
    // getrandom(2) fails only where the kernel has no entropy interface (before Linux
    // 3.17): no token can be made there.
    getrandom::fill(&mut raw).expect("getrandom(2) failed");
    let mut token = [0u8; 32];
    hex::encode_to_slice(raw, &mut token).expect("32 hex digits hold 16 bytes");
    token
}
