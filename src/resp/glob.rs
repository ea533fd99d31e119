//! The glob patterns of KEYS, SCAN MATCH and PSUBSCRIBE, as Redis reads them: `*` any
//! run, `?` one byte, `[abc]`, `[^a-z]` a class, `\x` the byte x. Matching keeps one
//! backtrack point (the last `*`), so a pattern of many stars costs at most
//! pattern × subject steps, never the exponential walk a recursive matcher can be made
//! to take.

/// Star runs beyond which a pattern matches nothing: Redis' own matcher gives up past
/// this nesting, and a pattern that complex is an attack, not a query.
const MAX_STARS: usize = 1000;

/// Whether `subject` matches `pattern`.
pub fn matches(pattern: &[u8], subject: &[u8]) -> bool {
    let star_runs = pattern
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'*' && (i == 0 || pattern[i - 1] != b'*'))
        .count();
    if star_runs > MAX_STARS {
        return false;
    }
    let (mut p, mut s) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while s < subject.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    star = Some((p, s));
                    p += 1;
                    continue;
                }
                b'?' => {
                    p += 1;
                    s += 1;
                    continue;
                }
                _ => {
                    if let Some(next) = one(pattern, p, subject[s]) {
                        p = next;
                        s += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((sp, ss)) => {
                p = sp + 1;
                s = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

/// The literal bytes a pattern starts with (before any `*`, `?`, `[` or `\`): every key
/// it matches starts with them, so a walk may start there.
pub fn literal_prefix(pattern: &[u8]) -> &[u8] {
    let end = pattern
        .iter()
        .position(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
        .unwrap_or(pattern.len());
    &pattern[..end]
}

/// Whether the pattern element at `p` (a byte, `\x` or a class) matches `c`; where the
/// next element starts when it does.
fn one(pattern: &[u8], p: usize, c: u8) -> Option<usize> {
    match pattern[p] {
        b'\\' if p + 1 < pattern.len() => (pattern[p + 1] == c).then_some(p + 2),
        b'[' => class(pattern, p + 1, c),
        b => (b == c).then_some(p + 1),
    }
}

/// A class `[…]` whose body starts at `p`: whether `c` is in it, and where it ends. An
/// unclosed class runs to the end of the pattern, as in Redis.
fn class(pattern: &[u8], mut p: usize, c: u8) -> Option<usize> {
    let negate = pattern.get(p) == Some(&b'^');
    if negate {
        p += 1;
    }
    let mut hit = false;
    while p < pattern.len() && pattern[p] != b']' {
        if pattern[p] == b'\\' && p + 1 < pattern.len() {
            hit |= pattern[p + 1] == c;
            p += 2;
        } else if p + 2 < pattern.len() && pattern[p + 1] == b'-' && pattern[p + 2] != b']' {
            let (a, b) = (
                pattern[p].min(pattern[p + 2]),
                pattern[p].max(pattern[p + 2]),
            );
            hit |= (a..=b).contains(&c);
            p += 3;
        } else {
            hit |= pattern[p] == c;
            p += 1;
        }
    }
    (hit != negate).then_some((p + 1).min(pattern.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_glob_rules() {
        assert!(matches(b"*", b""));
        assert!(matches(b"h?llo", b"hello"));
        assert!(matches(b"h*llo", b"heeeello"));
        assert!(matches(b"h[ae]llo", b"hallo"));
        assert!(!matches(b"h[ae]llo", b"hillo"));
        assert!(matches(b"h[^e]llo", b"hallo"));
        assert!(!matches(b"h[^e]llo", b"hello"));
        assert!(matches(b"h[a-b]llo", b"hbllo"));
        assert!(matches(b"h\\*llo", b"h*llo"));
        assert!(!matches(b"h\\*llo", b"hello"));
        assert!(matches(b"user:*:name", b"user:42:name"));
        assert!(!matches(b"user:*:name", b"user:42:nam"));
        assert_eq!(literal_prefix(b"user:*"), b"user:");
    }

    #[test]
    fn many_stars_do_not_explode() {
        let pattern = [b"a*".repeat(30), b"b".to_vec()].concat();
        assert!(!matches(&pattern, &b"a".repeat(10_000)));
    }
}
