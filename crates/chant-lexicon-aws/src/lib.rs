//! The AWS lexicon: CloudFormation from TypeScript. It owns the catalog of CloudFormation
//! classes (from the committed surface snapshot), the runtime modules that define them — one
//! small module per class, so a project pays only for the classes it names — the intrinsics
//! and template parts (parameters, conditions, mappings, outputs, default tags), and the
//! serializer to a CloudFormation template. It knows nothing of MCP or of the CLI: the core
//! asks it through the [`Lexicon`] trait.

pub mod catalog;
mod checks;
mod modules;
pub mod serialize;
mod tags;

use chant_core::discover::Discovery;
use chant_core::lexicon::{Catalog, Finding, Lexicon, Output, Serialized};

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
        let identifiers = names.iter().all(|n| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        });
        (subpath.is_empty() && identifiers && !names.is_empty()).then(|| modules::pick(names))
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

    fn post_synth_checks(&self, d: &Discovery, entities: &[usize]) -> Vec<Finding> {
        serialize::template(d, entities)
            .map(|t| checks::run(&t))
            .unwrap_or_default()
    }

    fn context(&self) -> &str {
        CONTEXT
    }
}
