//! The versions of the cluster's data plane this build speaks, and the choice of one
//! with a peer (ARCHITECTURE.md §9.3, which states what may change between versions).
//!
//! A version is a small number. Every node publishes the versions it knows in its
//! gossip state (`GOSSIP_KEY`, e.g. `"2,3"`); a node of a build from before versions
//! were published says nothing there, and speaks `LEGACY` (2) only. A node that
//! connects to a peer speaks the highest version both know (`choose`), and names it in
//! its hello (`crypto/handshake.rs`); the peer answers in that version when it knows it,
//! and refuses the connection otherwise. A peer with no version in common is no member
//! (`cluster/node/membership.rs`), and the refusal names both sides' versions.
//!
//! No PHP here, and nothing that depends on the network: the choice is a pure function.

/// A version of the data plane.
pub type Version = u8;

/// The version of every build from before versions were published.
pub const LEGACY: Version = 2;

/// Version 3: version 2, and a lock operation may ask its owner not to await the
/// replicas' copies (`cluster://?copies=async`, `wire::Op::copies`). To an owner of
/// version 2 such an operation goes as an awaited one (`wire::Op::spoken_in`).
pub const ASYNC_COPIES: Version = 3;

/// The versions of this build, oldest first.
const BUILT: &[Version] = &[LEGACY, ASYNC_COPIES];

/// The versions this build speaks, oldest first.
///
/// In a build with fault points (`src/fault.rs`), the point `wire-versions` (e.g.
/// `FAILPOINTS=wire-versions=return(2)`) replaces them, so that one test binary can run
/// the nodes of an older and a newer build side by side (tests/cluster_versions.rs): a
/// node that speaks `2` only sends no `Async` copies and refuses them on its
/// connections, as a build of version 2 does.
pub fn known() -> &'static [Version] {
    static CONFIGURED: std::sync::OnceLock<Option<Vec<Version>>> = std::sync::OnceLock::new();
    CONFIGURED
        .get_or_init(|| crate::fault::value("wire-versions").and_then(|v| parse(&v)))
        .as_deref()
        .unwrap_or(BUILT)
}

/// The gossip state key under which a node publishes the versions it knows.
pub const GOSSIP_KEY: &str = "wire";

/// The versions as a node publishes them: `"2,3"`.
pub fn publish(versions: &[Version]) -> String {
    let shown: Vec<String> = versions.iter().map(Version::to_string).collect();
    shown.join(",")
}

/// The versions a peer published, or `None` when the text is not a list of them; a peer
/// that published nothing speaks `[LEGACY]`.
pub fn parse(text: &str) -> Option<Vec<Version>> {
    let mut versions = text
        .split(',')
        .map(|v| v.trim().parse::<Version>().ok().filter(|&v| v > 0))
        .collect::<Option<Vec<_>>>()?;
    versions.sort_unstable();
    versions.dedup();
    (!versions.is_empty()).then_some(versions)
}

/// The version two sides speak: the highest both know, or `None`.
///
/// With the fault point `no-wire-negotiation` the peer's versions are ignored and
/// `ours`' highest is spoken, as a build without negotiation would, so that the mixed
/// fleet's test can be seen to fail.
pub fn choose(ours: &[Version], theirs: &[Version]) -> Option<Version> {
    if crate::fault::on("no-wire-negotiation") {
        return ours.iter().copied().max();
    }
    ours.iter().copied().filter(|v| theirs.contains(v)).max()
}

/// Versions as a sentence names them: "2, 3".
pub fn named(versions: &[Version]) -> String {
    let shown: Vec<String> = versions.iter().map(Version::to_string).collect();
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_common_version_is_chosen() {
        assert_eq!(choose(&[2, 3], &[2]), Some(2));
        assert_eq!(choose(&[2], &[2, 3]), Some(2));
        assert_eq!(choose(&[2, 3], &[2, 3]), Some(3));
        assert_eq!(choose(&[3], &[2, 3]), Some(3));
        if !crate::fault::on("no-wire-negotiation") {
            assert_eq!(choose(&[2, 3], &[9]), None);
        }
    }

    #[test]
    fn published_versions_round_trip_and_junk_is_refused() {
        assert_eq!(parse(&publish(&[2, 3])), Some(vec![2, 3]));
        assert_eq!(parse("3, 2,3"), Some(vec![2, 3]));
        for junk in ["", "x", "2,", "0", "300", "2;3"] {
            assert_eq!(parse(junk), None, "{junk:?}");
        }
        assert_eq!(named(&[2, 3]), "2, 3");
    }
}
