//! DSNs that name a store: `shm://` (the default) and `shm://NAME`. The fleet backends
//! (`redis://`, `rediss://`, `unix://`, `cluster://`) are recognised and refused with a
//! clear error until they exist.

/// A parsed DSN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dsn {
    /// The host-wide shared-memory store; `None` means the name from `ephpm.store_name`.
    Shm { name: Option<String> },
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DsnError {
    #[error("\"{0}\" is not a store DSN: expected shm:// or shm://NAME")]
    Malformed(String),
    #[error("the {0}:// backend is not available in this build of ephpm; use shm://")]
    Unsupported(String),
    #[error(
        "\"{0}\" is not a valid store name: use 1 to 64 letters, digits, '.', '_' or '-', \
         not starting with '.'"
    )]
    BadName(String),
}

pub fn parse(dsn: &str) -> Result<Dsn, DsnError> {
    let Some((scheme, rest)) = dsn.split_once("://") else {
        return Err(DsnError::Malformed(dsn.into()));
    };
    match scheme {
        "shm" if rest.is_empty() => Ok(Dsn::Shm { name: None }),
        "shm" => Ok(Dsn::Shm {
            name: Some(valid_name(rest)?.into()),
        }),
        "redis" | "rediss" | "unix" | "cluster" => Err(DsnError::Unsupported(scheme.into())),
        _ => Err(DsnError::Malformed(dsn.into())),
    }
}

/// Checks a store name (it becomes part of a file name under /dev/shm).
pub fn valid_name(name: &str) -> Result<&str, DsnError> {
    let ok = (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(name)
    } else {
        Err(DsnError::BadName(name.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_shm_dsns_and_refuses_the_rest() {
        assert_eq!(parse("shm://"), Ok(Dsn::Shm { name: None }));
        assert_eq!(
            parse("shm://jobs"),
            Ok(Dsn::Shm {
                name: Some("jobs".into())
            })
        );
        assert_eq!(
            parse("shm://../etc"),
            Err(DsnError::BadName("../etc".into()))
        );
        assert_eq!(parse("shm://a/b"), Err(DsnError::BadName("a/b".into())));
        assert_eq!(
            parse("redis://127.0.0.1"),
            Err(DsnError::Unsupported("redis".into()))
        );
        assert_eq!(
            parse("memcached"),
            Err(DsnError::Malformed("memcached".into()))
        );
    }
}
