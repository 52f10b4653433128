//! Plugin namespacing: `<lexicon>:<tool>` and `chant://<lexicon>/<path>`, applied idempotently.

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
