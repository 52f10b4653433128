//! The MCP revisions this crate speaks and how one is chosen for a request.

use std::fmt;

/// A protocol revision. Ordered by date, so `v >= ProtocolVersion::V2025_06_18` asks
/// "does this revision have the 2025-06-18 features".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every supported revision in preference order; also `supportedVersions` of
    /// `server/discover` and `supported` of a -32022 error.
    pub const SUPPORTED: [ProtocolVersion; 5] = [
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
    ];

    /// The preferred revision, answered to an `initialize` that names none.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// Answered to an `initialize` naming an unknown revision, and used for requests that arrive
    /// with neither an envelope nor a prior `initialize`.
    pub const FALLBACK: ProtocolVersion = ProtocolVersion::V2025_11_25;

    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision named by `s`, if it is one this crate supports.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        Self::SUPPORTED.into_iter().find(|v| v.as_str() == s)
    }

    /// The answer to an `initialize` without an envelope, from its `params.protocolVersion`.
    pub fn negotiate(requested: Option<&str>) -> ProtocolVersion {
        match requested {
            None => Self::LATEST,
            Some(s) => Self::parse(s).unwrap_or(Self::FALLBACK),
        }
    }

    /// Tool `annotations` and progress `message` exist from 2025-03-26.
    pub fn has_annotations(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// `title`, `outputSchema` and `structuredContent` exist from 2025-06-18.
    pub fn has_structured_content(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Stateless 2026-07-28: `resultType`, `ttlMs`/`cacheScope`, result `_meta`, no `ping`.
    pub fn is_stateless(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ProtocolVersion as V;

    #[test]
    fn negotiation_follows_the_seed_table() {
        assert_eq!(V::negotiate(None), V::V2026_07_28);
        for v in V::SUPPORTED {
            assert_eq!(V::negotiate(Some(v.as_str())), v);
        }
        assert_eq!(V::negotiate(Some("1999-01-01")), V::V2025_11_25);
        assert_eq!(V::negotiate(Some("2024-10-07")), V::V2025_11_25);
    }

    #[test]
    fn a_version_displays_as_its_date() {
        for v in V::SUPPORTED {
            assert_eq!(v.to_string(), v.as_str());
        }
        assert_eq!(V::V2025_03_26.to_string(), "2025-03-26");
    }

    #[test]
    fn order_is_by_date() {
        let mut sorted = V::SUPPORTED;
        sorted.sort();
        sorted.reverse();
        assert_eq!(sorted, V::SUPPORTED);
    }
}
