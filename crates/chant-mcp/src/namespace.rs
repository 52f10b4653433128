//! Plugin namespacing: `<lexicon>:<tool>` (or the portable `<lexicon>_<tool>`) and
//! `chant://<lexicon>/<path>`, applied idempotently.

/// How plugin tools are named.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolNames {
    /// `<lexicon>:<tool>`, as the seed names them.
    #[default]
    Seed,
    /// `<lexicon>_<tool>`: names every client accepts (`^[a-zA-Z0-9_-]{1,64}$`).
    Portable,
}

impl ToolNames {
    /// `seed` or `portable` (what `--tool-names` and `CHANT_MCP_TOOL_NAMES` take).
    pub fn parse(text: &str) -> Result<ToolNames, String> {
        match text {
            "seed" => Ok(ToolNames::Seed),
            "portable" => Ok(ToolNames::Portable),
            other => Err(format!(
                "tool names must be \"seed\" or \"portable\" (got \"{other}\")"
            )),
        }
    }

    /// Plugin tool `name` of `lexicon` in this style.
    pub fn name(self, lexicon: &str, name: &str) -> String {
        let seed = namespace_tool(lexicon, name);
        match self {
            ToolNames::Seed => seed,
            ToolNames::Portable => seed.replace(':', "_"),
        }
    }
}

/// Whether every MCP client accepts `name` as a tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn portable(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `migrate` → `gitlab:migrate`; `gitlab:diff` stays; for plugin `git`, `gitlab:diff` →
/// `git:gitlab:diff`.
pub fn namespace_tool(lexicon: &str, name: &str) -> String {
    if name
        .strip_prefix(lexicon)
        .is_some_and(|rest| rest.starts_with(':'))
    {
        name.to_owned()
    } else {
        format!("{lexicon}:{name}")
    }
}

/// `examples/s3` → `chant://aws/examples/s3`; `aws:resource-catalog` →
/// `chant://aws/resource-catalog`; `chant://lexicon/azure/catalog` → `chant://azure/catalog`;
/// `chant://aws/catalog` unchanged.
pub fn namespace_resource(lexicon: &str, uri: &str) -> String {
    if let Some(rest) = uri.strip_prefix("chant://lexicon/") {
        return format!("chant://{rest}");
    }
    if uri.starts_with("chant://") {
        return uri.to_owned();
    }
    if let Some((owner, rest)) = uri.split_once(':')
        && !owner.is_empty()
        && owner
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return format!("chant://{owner}/{}", rest.trim_start_matches('/'));
    }
    format!("chant://{lexicon}/{}", uri.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_namespaced_once() {
        assert_eq!(namespace_tool("gitlab", "migrate"), "gitlab:migrate");
        assert_eq!(namespace_tool("gitlab", "gitlab:diff"), "gitlab:diff");
        assert_eq!(namespace_tool("git", "gitlab:diff"), "git:gitlab:diff");
        assert_eq!(
            namespace_tool("gitlab", &namespace_tool("gitlab", "diff")),
            "gitlab:diff"
        );
    }

    #[test]
    fn portable_names_have_no_colon_and_fit_every_client() {
        assert_eq!(
            ToolNames::Portable.name("gitlab", "checks"),
            "gitlab_checks"
        );
        assert_eq!(
            ToolNames::Portable.name("gitlab", "gitlab:diff"),
            "gitlab_diff"
        );
        assert_eq!(ToolNames::Seed.name("gitlab", "checks"), "gitlab:checks");
        assert_eq!(ToolNames::parse("portable"), Ok(ToolNames::Portable));
        assert_eq!(
            ToolNames::parse("Portable").unwrap_err(),
            "tool names must be \"seed\" or \"portable\" (got \"Portable\")"
        );
        assert!(portable("gitlab_pipeline-yaml"));
        assert!(portable(&"a".repeat(64)));
        for bad in ["", "gitlab:checks", "a b", "é", &"a".repeat(65)] {
            assert!(!portable(bad), "{bad}");
        }
    }

    #[test]
    fn resources_are_namespaced_once() {
        assert_eq!(
            namespace_resource("aws", "examples/s3"),
            "chant://aws/examples/s3"
        );
        assert_eq!(
            namespace_resource("aws", "aws:resource-catalog"),
            "chant://aws/resource-catalog"
        );
        assert_eq!(
            namespace_resource("aws", "chant://lexicon/azure/catalog"),
            "chant://azure/catalog"
        );
        assert_eq!(
            namespace_resource("aws", "chant://aws/catalog"),
            "chant://aws/catalog"
        );
        let once = namespace_resource("gitlab", "examples/x");
        assert_eq!(namespace_resource("gitlab", &once), once);
    }
}
