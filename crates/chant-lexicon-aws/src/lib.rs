//! The AWS lexicon: CloudFormation from TypeScript. It owns the catalog of CloudFormation
//! classes (from the committed surface snapshot), the runtime modules that define them — one
//! small module per class, so a project pays only for the classes it names — the intrinsics
//! and template parts (parameters, conditions, mappings, outputs, default tags), and the
//! serializer to a CloudFormation template. It knows nothing of MCP or of the CLI: the core
//! asks it through the [`Lexicon`] trait.

pub mod catalog;
mod cfn;
mod checks;
pub mod import;
pub mod lint;
mod modules;
mod plugin;
pub mod serialize;
mod tags;

use chant_core::discover::Discovery;
use std::sync::OnceLock;

use chant_core::lexicon::{
    Catalog, CompositeEntry, Example, Finding, Importer, Lexicon, Output, Plugin, Serialized,
    TemplateSet,
};

const COMPOSITES: &str = include_str!("../data/composites.json");

macro_rules! template_set {
    ($name:literal, $description:literal, [$($file:literal),*]) => {
        ($name, $description, &[$(($file, include_str!(concat!("../data/templates/", $name, "/", $file)))),*])
    };
}

/// Init and scaffold templates: `default` (`chant init --lexicon aws`), then one set per
/// pattern (`scaffold` matches a file name containing the pattern). Each is also an example.
/// `(name, description, [(file, content)])`.
type Templates = &'static [(
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
)];

const TEMPLATES: Templates = &[
    template_set!(
        "default",
        "A stage parameter, default tags, a data bucket and its access-log bucket",
        ["config.ts", "data-bucket.ts", "logs-bucket.ts"]
    ),
    template_set!(
        "s3-bucket",
        "An encrypted, versioned, private S3 bucket with a TLS-only policy",
        ["s3-bucket.ts"]
    ),
    template_set!(
        "lambda-function",
        "A Lambda function and its execution role",
        ["lambda-function.ts"]
    ),
    template_set!(
        "lambda-sqs",
        "A Lambda function fed by an SQS queue",
        ["lambda-sqs.ts"]
    ),
    template_set!(
        "vpc",
        "A VPC with public and private subnets and a NAT gateway",
        ["vpc.ts"]
    ),
    template_set!(
        "fargate",
        "A Fargate service behind an application load balancer",
        ["fargate.ts"]
    ),
    template_set!(
        "rds",
        "A PostgreSQL database in private subnets",
        ["rds.ts"]
    ),
    template_set!(
        "eks",
        "An EKS cluster with a managed node group",
        ["eks.ts"]
    ),
];

fn templates() -> &'static [TemplateSet] {
    static T: OnceLock<Vec<TemplateSet>> = OnceLock::new();
    T.get_or_init(|| {
        let sets: Vec<(&str, &[(&str, &str)])> =
            TEMPLATES.iter().map(|(n, _, f)| (*n, *f)).collect();
        TemplateSet::from_static(&sets)
    })
}

/// `chant://aws/examples/<name>`: every template set, its files joined.
fn examples() -> &'static [Example] {
    static E: OnceLock<Vec<Example>> = OnceLock::new();
    E.get_or_init(|| {
        TEMPLATES
            .iter()
            .map(|(name, description, files)| Example {
                name: (*name).to_owned(),
                description: (*description).to_owned(),
                content: files.iter().map(|(_, c)| *c).collect::<Vec<_>>().join("\n"),
            })
            .collect()
    })
}

fn composites() -> &'static [CompositeEntry] {
    static C: OnceLock<Vec<CompositeEntry>> = OnceLock::new();
    C.get_or_init(|| {
        CompositeEntry::parse_all("aws", COMPOSITES).expect("the embedded aws composites parse")
    })
}

const CONTEXT: &str = "## AWS CloudFormation (lexicon `aws`)

Declare resources with the CloudFormation class of each type, imported from
`@intentius/chant-lexicon-aws`: `new Bucket({ BucketName: \"logs\" })` is `AWS::S3::Bucket`; nested property
types join with `_` (`new Role_Policy({...})` is `AWS::IAM::Role.Policy`). Property keys are
CloudFormation's own (`BucketName`, `VersioningConfiguration`). A resource's attributes are fields:
`bucket.Arn` is `{\"Fn::GetAtt\": [\"bucket\", \"Arn\"]}` and referencing the resource itself is `{\"Ref\"}`.
Intrinsics: `` Sub`${AWS.StackName}-${bucket.Arn}` ``, `Ref`, `GetAtt`, `Join`, `If`, `Select`, `Split`,
`Base64`, `GetAZs`, `Cidr`, `ImportValue`, `FindInMap`, `Equals`, `And`, `Or`, `Not`; pseudo-parameters
are `AWS.Region`, `AWS.AccountId`, `AWS.StackName`, …. Template parts: `new Parameter(\"String\", {
description, defaultValue, allowedValues })`, `new Condition(Equals(stage, \"prod\"))` (used by `If(isProd, …)`
and a resource's `{ Condition: isProd }`), `new Mapping({...})` with `FindInMap`, `output(bucket.Arn,
\"BucketArn\", { export })` and `defaultTags([{ Key, Value }])` for every taggable resource. A resource's
second argument holds its attributes: `DependsOn`, `Condition`, `DeletionPolicy`, `UpdateReplacePolicy`,
`Metadata`. `chant build` writes the template as JSON, or YAML with `--format yaml`.
";

/// The AWS lexicon.
#[derive(Debug, Default)]
pub struct Aws;

/// A resource property the project's own code set to `undefined`: most often an attribute the
/// resource does not have (`role.Rn`), which reads as `undefined` and would leave the property
/// out silently. Composite members are passed over (composites leave optional props undefined).
fn undefined_props(d: &Discovery, entities: &[usize]) -> Vec<Finding> {
    use chant_core::model::{DeclKind, Value};
    let mut out = Vec::new();
    for &e in entities {
        let decl = d.decl(e);
        if decl.kind != DeclKind::Resource || d.entities[e].composite.is_some() {
            continue;
        }
        if let Value::Object(props) = &decl.props {
            for (k, v) in props {
                if matches!(v, Value::Undefined)
                    && modules::exported_class(&decl.class_name).is_some()
                {
                    out.push(Finding {
                        entity: d.entities[e].name.clone(),
                        message: format!(
                            "property {k} of {} is undefined, so it is left out — if it reads an attribute, {} has no such attribute; leave the key out to omit it",
                            d.entities[e].name, decl.entity_type
                        ),
                        error: false,
                    });
                }
            }
        }
    }
    out
}

impl Lexicon for Aws {
    fn name(&self) -> &'static str {
        "aws"
    }

    fn version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    fn runtime_subpath(&self, subpath: &str) -> Option<String> {
        modules::has(subpath).then(|| subpath.to_owned())
    }

    fn runtime_module(&self, subpath: &str) -> Option<String> {
        modules::source(subpath)
    }

    /// A module of just the names a file imports from the bare module (names that are not
    /// identifiers load the whole module, which JavaScript then reports on).
    fn runtime_pick(&self, subpath: &str, names: &[String]) -> Option<String> {
        // A name no class could have (not an identifier, a reserved word, too long), or more
        // names than a file would write, loads the whole module instead, whose own error names
        // what is missing: a pick module is built and linked per name, so its cost must stay
        // bounded by what a real file imports.
        let plausible = names.len() <= modules::MAX_PICK
            && names.iter().all(|n| {
                n.len() <= modules::MAX_NAME
                    && chant_core::names::is_identifier(n)
                    && !chant_core::names::is_reserved(n)
            });
        (subpath.is_empty() && plausible && !names.is_empty()).then(|| modules::pick(names))
    }

    fn lint_rules(&self) -> Vec<chant_lint::Rule> {
        lint::rules()
    }

    fn intrinsics(&self) -> &[&'static str] {
        &[
            "Ref",
            "GetAtt",
            "If",
            "Join",
            "Select",
            "Split",
            "Base64",
            "GetAZs",
            "Cidr",
            "ImportValue",
            "FindInMap",
            "Equals",
            "And",
            "Or",
            "Not",
            "Sub",
        ]
    }

    fn catalog(&self) -> &Catalog {
        catalog::catalog()
    }

    fn serialize(&self, d: &Discovery, entities: &[usize]) -> Option<Result<Serialized, String>> {
        Some(serialize::template(d, entities).map(|t| Serialized::of(Output::Json(t))))
    }

    fn child_project(&self, decl: &chant_core::model::Declarable) -> Option<(String, String)> {
        serialize::child_template_file(decl)
    }

    fn child_template(
        &self,
        d: &Discovery,
        entity: usize,
        child_output: &str,
    ) -> Result<String, String> {
        serialize::child_template(d, entity, child_output)
    }

    /// The checks read the template the build just serialized.
    fn post_synth_checks(
        &self,
        d: &Discovery,
        entities: &[usize],
        output: &Output,
    ) -> Vec<Finding> {
        let mut findings = undefined_props(d, entities);
        if let Output::Json(template) = output {
            findings.extend(checks::run(template));
        }
        findings
    }

    fn importer(&self) -> Option<&dyn Importer> {
        static IMPORTER: import::CfnImporter = import::CfnImporter;
        Some(&IMPORTER)
    }

    fn templates(&self) -> &[TemplateSet] {
        templates()
    }

    fn examples(&self) -> &[Example] {
        examples()
    }

    fn plugin(&self) -> Option<&dyn Plugin> {
        Some(self)
    }

    fn composites(&self) -> &[CompositeEntry] {
        composites()
    }

    fn context(&self) -> &str {
        CONTEXT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The composites the runtime defines: `export const X = Composite(`/`withDefaults(`, and
    /// `export const X = Y;` naming one of those.
    fn defined() -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for line in modules::COMPOSITES.lines() {
            let Some(rest) = line.strip_prefix("export const ") else {
                continue;
            };
            let Some((name, value)) = rest.split_once(" = ") else {
                continue;
            };
            let alias = value.trim_end_matches(';');
            if value.starts_with("Composite(")
                || value.starts_with("withDefaults(")
                || names.iter().any(|n| n == alias)
            {
                names.push(name.to_owned());
            }
        }
        names
    }

    #[test]
    fn every_composite_has_exactly_one_catalog_entry() {
        let mut defined = defined();
        let mut listed: Vec<String> = composites().iter().map(|c| c.name.clone()).collect();
        defined.sort();
        listed.sort();
        assert_eq!(defined, listed);
        for c in composites() {
            for b in &c.bundles {
                assert!(
                    modules::COMPOSITES.contains(&format!("new {b}(")),
                    "{}: bundles {b}, which its module never creates",
                    c.name
                );
            }
        }
    }
}
