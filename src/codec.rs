//! Compression of large values (lz4), decided per value: only values of at least the
//! threshold, and only when compression saves at least an eighth.

/// Compresses `raw` if it is worth it; `threshold` 0 disables compression.
pub fn compress(raw: &[u8], threshold: usize) -> Option<Vec<u8>> {
    if threshold == 0 || raw.len() < threshold || raw.len() > u32::MAX as usize {
        return None;
    }
    let packed = lz4_flex::block::compress(raw);
    (packed.len() <= raw.len() - raw.len() / 8).then_some(packed)
}

/// Decompresses a value stored compressed, whose original length is `raw_len`.
pub fn decompress(packed: &[u8], raw_len: usize) -> Option<Vec<u8>> {
    lz4_flex::block::decompress(packed, raw_len)
        .ok()
        .filter(|v| v.len() == raw_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compresses_only_past_the_threshold_and_when_it_pays() {
        let text = b"abcdefgh".repeat(1000);
        assert!(compress(&text, 0).is_none());
        assert!(compress(&text, text.len() + 1).is_none());
        let packed = compress(&text, 1024).expect("repetitive text compresses");
        assert_eq!(decompress(&packed, text.len()).as_deref(), Some(&text[..]));
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        assert!(compress(&noise, 1024).is_none());
    }
}
