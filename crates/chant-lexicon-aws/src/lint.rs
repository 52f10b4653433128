//! The aws lint rules, read from the source before anything is built: WAW001 (a hardcoded
//! region), WAW002 (a property the resource's type does not have), WAW006 (a bucket without
//! encryption) and WAW009 (an IAM wildcard resource). Ids and texts of WAW001/006/009 are the
//! reference's; WAW002 is this lexicon's own.

use chant_lint::facts::{Facts, NewSite};
use chant_lint::{Finding, Rule, RuleContext, Severity};
use oxc::ast::ast::{
    ArrayExpressionElement, Expression, ObjectProperty, PropertyKey, StringLiteral,
};
use oxc::ast_visit::{Visit, walk};
use oxc::span::GetSpan;

use crate::{catalog, modules};

const LEXICON_MODULE: &str = "@intentius/chant-lexicon-aws";

/// The rules, in run order.
pub fn rules() -> Vec<Rule> {
    vec![
        Rule::new(
            "WAW001",
            "hardcoded-region",
            Severity::Warning,
            "security",
            "Detects hardcoded AWS region strings — use AWS.Region pseudo-parameter instead",
            waw001,
        ),
        Rule::new(
            "WAW002",
            "unknown-property",
            Severity::Error,
            "correctness",
            "A resource's properties must be ones its CloudFormation type has",
            waw002,
        ),
        Rule::new(
            "WAW006",
            "s3-encryption",
            Severity::Warning,
            "security",
            "Detects S3 Bucket creation without encryption configuration — all buckets should have server-side encryption enabled",
            waw006,
        ),
        Rule::new(
            "WAW009",
            "iam-wildcard-resource",
            Severity::Warning,
            "security",
            "Detects IAM policies with wildcard (*) resources — specify explicit resource ARNs for better security",
            waw009,
        ),
    ]
}

/// Every string literal of a file, and every `resource`/`resources` property.
#[derive(Default)]
struct Strings {
    literals: Vec<(usize, String)>,
    wildcard_resources: Vec<usize>,
}

impl<'a> Visit<'a> for Strings {
    fn visit_string_literal(&mut self, it: &StringLiteral<'a>) {
        self.literals
            .push((it.span.start as usize, it.value.to_string()));
    }

    fn visit_object_property(&mut self, it: &ObjectProperty<'a>) {
        let name = match &it.key {
            PropertyKey::StaticIdentifier(i) => Some(i.name.as_str()),
            PropertyKey::StringLiteral(s) => Some(s.value.as_str()),
            _ => None,
        };
        if name.is_some_and(|n| {
            n.eq_ignore_ascii_case("resource") || n.eq_ignore_ascii_case("resources")
        }) {
            match &it.value {
                Expression::StringLiteral(s) if s.value == "*" => {
                    self.wildcard_resources.push(it.span.start as usize);
                }
                Expression::ArrayExpression(a) => {
                    for el in &a.elements {
                        if let ArrayExpressionElement::StringLiteral(s) = el
                            && s.value == "*"
                        {
                            self.wildcard_resources.push(el.span().start as usize);
                        }
                    }
                }
                _ => {}
            }
        }
        walk::walk_object_property(self, it);
    }
}

fn strings(ctx: &RuleContext<'_, '_>) -> Strings {
    let mut s = Strings::default();
    s.visit_program(&ctx.file.program);
    s
}

/// `us-east-1`, `eu-central-2`, …: a whole string that is a region name.
fn is_region(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [area, direction, digit] = parts.as_slice() else {
        return false;
    };
    matches!(*area, "us" | "eu" | "ap" | "sa" | "ca" | "me" | "af" | "cn")
        && matches!(
            *direction,
            "north" | "south" | "east" | "west" | "central" | "northeast" | "southeast"
        )
        && digit.len() == 1
        && digit.chars().all(|c| c.is_ascii_digit())
}

fn waw001(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    strings(ctx)
        .literals
        .into_iter()
        .filter(|(_, v)| is_region(v))
        .map(|(at, v)| {
            Finding::at(
                at,
                format!(
                    "Hardcoded region \"{v}\" detected. Use AWS.Region pseudo-parameter instead."
                ),
            )
        })
        .collect()
}

fn waw009(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    strings(ctx)
        .wildcard_resources
        .into_iter()
        .map(|at| {
            Finding::at(
                at,
                "IAM policy uses wildcard (*) resource. Specify explicit resource ARNs for better security.",
            )
        })
        .collect()
}

/// The aws class a `new` site constructs: a name imported from this lexicon's module, or a
/// member of a namespace imported from it.
fn aws_class(facts: &Facts, site: &NewSite) -> Option<catalog::Class> {
    let class = site.class.as_deref()?;
    let from_aws = match &site.namespace {
        Some(ns) => facts
            .imports
            .iter()
            .any(|i| i.namespace.as_deref() == Some(ns.as_str()) && i.source == LEXICON_MODULE),
        None => facts
            .imports
            .iter()
            .any(|i| i.source == LEXICON_MODULE && i.named.iter().any(|n| n == class)),
    };
    if !from_aws {
        return None;
    }
    modules::exported_class(class)
}

fn waw002(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for site in &ctx.facts.news {
        let Some(class) = aws_class(ctx.facts, site) else {
            continue;
        };
        // Property types carry no property list in the catalog: only resources are checked.
        if !class.resource() {
            continue;
        }
        for prop in site.props.iter().flatten() {
            let Some(key) = prop.key.as_deref() else {
                continue;
            };
            if class.props().any(|(p, _)| p == key) {
                continue;
            }
            let near = catalog::nearest(key, class.props().map(|(p, _)| p));
            let hint = match near {
                Some(n) => format!(" — did you mean \"{n}\"?"),
                None => String::new(),
            };
            out.push(Finding::at(
                prop.start,
                format!(
                    "{} ({}) has no property \"{key}\"{hint}",
                    site.class.as_deref().unwrap_or_default(),
                    class.resource_type()
                ),
            ));
        }
    }
    out
}

fn waw006(ctx: &RuleContext<'_, '_>) -> Vec<Finding> {
    ctx.facts
        .news
        .iter()
        .filter(|n| n.class.as_deref() == Some("Bucket"))
        .filter_map(|n| n.props.as_ref().map(|p| (n, p)))
        .filter(|(_, props)| {
            !props.iter().any(|p| {
                matches!(
                    p.key.as_deref(),
                    Some("BucketEncryption" | "ServerSideEncryptionConfiguration")
                )
            })
        })
        .map(|(n, _)| {
            Finding::at(
                n.start,
                "S3 Bucket created without encryption configuration. Enable server-side encryption.",
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chant_lint::{LintConfig, lint_text};

    fn lint(text: &str) -> Vec<(String, usize, usize, String)> {
        let config = LintConfig::default();
        lint_text("f.ts", "f.ts", text, &rules(), &config)
            .into_iter()
            .map(|d| (d.rule_id, d.line, d.column, d.message))
            .collect()
    }

    #[test]
    fn regions_are_whole_strings_only() {
        assert!(is_region("us-east-1") && is_region("ap-southeast-2"));
        assert!(
            !is_region("orders-us-east-1") && !is_region("us-east-12") && !is_region("xx-east-1")
        );
        let got = lint("const a = \"eu-west-1\";\nconst b = `us-east-1`;\n");
        assert_eq!(
            got,
            vec![(
                "WAW001".into(),
                1,
                11,
                "Hardcoded region \"eu-west-1\" detected. Use AWS.Region pseudo-parameter instead."
                    .into()
            )]
        );
    }

    #[test]
    fn an_unknown_property_names_the_nearest() {
        let got = lint(
            "import { Bucket, Role_Policy } from \"@intentius/chant-lexicon-aws\";\nexport const b = new Bucket({ BuckeName: \"x\", BucketEncryption: {}, Tags: [] });\nexport const p = new Role_Policy({ Anything: 1 });\n",
        );
        assert_eq!(got, vec![("WAW002".into(), 2, 31, "Bucket (AWS::S3::Bucket) has no property \"BuckeName\" — did you mean \"BucketName\"?".into())]);
        // A class of another module is not aws's.
        let other = lint(
            "import { Bucket } from \"./mine\";\nexport const b = new Bucket({ Nope: 1, BucketEncryption: {} });\n",
        );
        assert!(other.is_empty(), "{other:?}");
        // Through a namespace import too.
        let ns = lint(
            "import * as aws from \"@intentius/chant-lexicon-aws\";\nexport const q = new aws.Queue({ QueueNme: \"q\" });\n",
        );
        assert_eq!(
            ns[0].3,
            "Queue (AWS::SQS::Queue) has no property \"QueueNme\" — did you mean \"QueueName\"?"
        );
    }

    #[test]
    fn buckets_without_encryption_and_wildcard_resources() {
        let got = lint(
            "export const b = new Bucket({ BucketName: \"x\" });\nexport const e = new Bucket({ BucketEncryption: {} });\nconst s = { Resource: \"*\", Resources: [\"arn:x\", \"*\"], resource: \"arn\" };\n",
        );
        let ids: Vec<(&str, usize, usize)> = got
            .iter()
            .map(|(r, l, c, _)| (r.as_str(), *l, *c))
            .collect();
        assert_eq!(
            ids,
            vec![("WAW006", 1, 18), ("WAW009", 3, 13), ("WAW009", 3, 49)]
        );
    }
}
