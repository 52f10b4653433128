//! Post-synth checks: each reads the built template, one check per function, in the order
//! the reference registers them; `chant build` prints warnings before errors. Ids and texts
//! are the reference's (WAW018 …); an error fails the build.

use chant_core::lexicon::Finding;
use serde_json::{Map, Value as Json};

type Resources = Map<String, Json>;

/// One check: its id, and the findings it makes for a template's resources.
struct Check {
    #[allow(dead_code)]
    id: &'static str,
    run: fn(&Resources, &mut Vec<Finding>),
}

const CHECKS: &[Check] = &[
    Check {
        id: "WAW018",
        run: s3_public_access,
    },
    Check {
        id: "WAW019",
        run: open_ingress,
    },
    Check {
        id: "WAW020",
        run: iam_wildcard_action,
    },
    Check {
        id: "WAW021",
        run: rds_encryption,
    },
    Check {
        id: "WAW022",
        run: lambda_vpc,
    },
    Check {
        id: "WAW025",
        run: sns_encryption,
    },
    Check {
        id: "WAW026",
        run: sqs_encryption,
    },
    Check {
        id: "WAW028",
        run: ebs_encryption,
    },
    Check {
        id: "WAW029",
        run: depends_on_targets,
    },
    Check {
        id: "WAW042",
        run: s3_tls_only,
    },
    Check {
        id: "WAW046",
        run: plaintext_secrets,
    },
];

/// The findings for a template: warnings, then errors, each in check order.
pub fn run(template: &Json) -> Vec<Finding> {
    let Some(resources) = template.get("Resources").and_then(Json::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for check in CHECKS {
        (check.run)(resources, &mut out);
    }
    dangling(template, &mut out);
    // Stable: within each severity the check order stays.
    out.sort_by_key(|f| f.error);
    out
}

fn finding(out: &mut Vec<Finding>, entity: &str, message: String, error: bool) {
    out.push(Finding {
        entity: entity.to_owned(),
        message,
        error,
    });
}

fn of_type<'a>(
    resources: &'a Resources,
    types: &'a [&str],
) -> impl Iterator<Item = (&'a String, &'a Map<String, Json>)> + 'a {
    static EMPTY: std::sync::OnceLock<Map<String, Json>> = std::sync::OnceLock::new();
    resources.iter().filter_map(move |(id, r)| {
        let ty = r.get("Type").and_then(Json::as_str)?;
        types.contains(&ty).then(|| {
            let props = r
                .get("Properties")
                .and_then(Json::as_object)
                .unwrap_or_else(|| EMPTY.get_or_init(Map::new));
            (id, props)
        })
    })
}

/// An intrinsic function object (`{"Ref": …}`, `{"Fn::If": …}`): its value is decided at deploy.
fn is_intrinsic(v: &Json) -> bool {
    v.as_object()
        .is_some_and(|o| o.len() == 1 && o.keys().all(|k| k == "Ref" || k.starts_with("Fn::")))
}

/// A flag that is on (`true`, `"true"`), or set by an intrinsic (decided at deploy, so not flagged).
fn enabled(v: Option<&Json>) -> bool {
    matches!(v, Some(Json::Bool(true)))
        || v.and_then(Json::as_str) == Some("true")
        || v.is_some_and(is_intrinsic)
}

/// WAW018: every bucket blocks public access: all four flags true (a flag left out is false
/// in AWS), or set by an intrinsic decided at deploy time.
fn s3_public_access(resources: &Resources, out: &mut Vec<Finding>) {
    for (id, props) in of_type(resources, &["AWS::S3::Bucket"]) {
        let Some(pab) = props.get("PublicAccessBlockConfiguration") else {
            finding(
                out,
                id,
                format!(
                    "S3 bucket \"{id}\" is missing PublicAccessBlockConfiguration — all public access should be blocked"
                ),
                true,
            );
            continue;
        };
        if is_intrinsic(pab) {
            continue;
        }
        for flag in [
            "BlockPublicAcls",
            "BlockPublicPolicy",
            "IgnorePublicAcls",
            "RestrictPublicBuckets",
        ] {
            match pab.get(flag) {
                Some(v) if enabled(Some(v)) => {}
                None => finding(
                    out,
                    id,
                    format!(
                        "S3 bucket \"{id}\" does not set {flag} — it defaults to false; all public access should be blocked"
                    ),
                    true,
                ),
                Some(_) => finding(
                    out,
                    id,
                    format!(
                        "S3 bucket \"{id}\" has {flag} set to false — all public access should be blocked"
                    ),
                    true,
                ),
            }
        }
    }
}

/// WAW019: a security group open to the whole internet.
fn open_ingress(resources: &Resources, out: &mut Vec<Finding>) {
    for (id, props) in of_type(resources, &["AWS::EC2::SecurityGroup"]) {
        let Some(rules) = props.get("SecurityGroupIngress").and_then(Json::as_array) else {
            continue;
        };
        for rule in rules {
            let cidr = rule
                .get("CidrIp")
                .or_else(|| rule.get("CidrIpv6"))
                .and_then(Json::as_str);
            if let Some(cidr @ ("0.0.0.0/0" | "::/0")) = cidr {
                let ports = match (rule.get("FromPort"), rule.get("ToPort")) {
                    (Some(f), Some(t)) if f == t => format!(" on port {f}"),
                    (Some(f), Some(t)) => format!(" on ports {f}-{t}"),
                    _ => String::new(),
                };
                finding(
                    out,
                    id,
                    format!(
                        "Security group \"{id}\" allows unrestricted ingress from {cidr}{ports} — restrict to specific CIDR ranges"
                    ),
                    false,
                );
                break;
            }
        }
    }
}

/// The statements of an IAM resource's policy documents (its own, its trust policy, its
/// inline policies).
fn statements(props: &Map<String, Json>) -> Vec<&Json> {
    fn collect<'a>(doc: Option<&'a Json>, out: &mut Vec<&'a Json>) {
        match doc.and_then(|d| d.get("Statement")) {
            Some(Json::Array(s)) => out.extend(s.iter()),
            Some(s @ Json::Object(_)) => out.push(s),
            _ => {}
        }
    }
    let mut out = Vec::new();
    collect(props.get("PolicyDocument"), &mut out);
    collect(props.get("AssumeRolePolicyDocument"), &mut out);
    if let Some(Json::Array(policies)) = props.get("Policies") {
        for p in policies {
            collect(p.get("PolicyDocument"), &mut out);
        }
    }
    out
}

/// WAW020: an IAM policy statement allowing every action (`*`, `*:*`, or `NotAction`).
fn iam_wildcard_action(resources: &Resources, out: &mut Vec<Finding>) {
    let types = [
        "AWS::IAM::Policy",
        "AWS::IAM::Role",
        "AWS::IAM::ManagedPolicy",
        "AWS::IAM::User",
        "AWS::IAM::Group",
    ];
    let wild = |a: &Json| matches!(a.as_str(), Some("*" | "*:*"));
    for (id, props) in of_type(resources, &types) {
        let wildcard = statements(props).into_iter().any(|s| {
            let allows = s.get("Effect").and_then(Json::as_str).unwrap_or("Allow") == "Allow";
            let action = match s.get("Action") {
                Some(Json::Array(a)) => a.iter().any(wild),
                Some(a) => wild(a),
                None => false,
            };
            allows && (action || s.get("NotAction").is_some())
        });
        if wildcard {
            finding(
                out,
                id,
                format!(
                    "IAM resource \"{id}\" has a policy statement with Action: \"*\" — use specific actions following least privilege"
                ),
                false,
            );
        }
    }
}

/// WAW021: RDS storage encrypted at rest (Aurora instances inherit it from their cluster).
fn rds_encryption(resources: &Resources, out: &mut Vec<Finding>) {
    for (id, props) in of_type(resources, &["AWS::RDS::DBInstance", "AWS::RDS::DBCluster"]) {
        let ty = resources[id]["Type"].as_str().unwrap_or_default();
        if ty == "AWS::RDS::DBInstance" && props.contains_key("DBClusterIdentifier") {
            continue;
        }
        let encrypted = props.get("StorageEncrypted");
        if !enabled(encrypted) {
            finding(
                out,
                id,
                format!(
                    "RDS resource \"{id}\" ({ty}) does not have StorageEncrypted: true — enable encryption at rest"
                ),
                false,
            );
        }
    }
}

/// WAW022: a Lambda function outside any VPC.
fn lambda_vpc(resources: &Resources, out: &mut Vec<Finding>) {
    for (id, props) in of_type(resources, &["AWS::Lambda::Function"]) {
        if !props.contains_key("VpcConfig") {
            finding(
                out,
                id,
                format!(
                    "Lambda function \"{id}\" is not configured with a VPC — consider adding VpcConfig for network isolation"
                ),
                false,
            );
        }
    }
}

/// WAW025: an SNS topic without a KMS key.
fn sns_encryption(resources: &Resources, out: &mut Vec<Finding>) {
    for (id, props) in of_type(resources, &["AWS::SNS::Topic"]) {
        if !props.contains_key("KmsMasterKeyId") {
            finding(
                out,
                id,
                format!(
                    "SNS topic \"{id}\" is not encrypted — add KmsMasterKeyId for encryption at rest"
                ),
                false,
            );
        }
    }
}

/// WAW026: an SQS queue neither SSE-SQS nor KMS encrypted.
fn sqs_encryption(resources: &Resources, out: &mut Vec<Finding>) {
    for (id, props) in of_type(resources, &["AWS::SQS::Queue"]) {
        let managed = props.get("SqsManagedSseEnabled");
        if !props.contains_key("KmsMasterKeyId") && !enabled(managed) {
            finding(
                out,
                id,
                format!(
                    "SQS queue \"{id}\" is not encrypted — enable SqsManagedSseEnabled or set KmsMasterKeyId"
                ),
                false,
            );
        }
    }
}

/// WAW028: an EBS volume not encrypted.
fn ebs_encryption(resources: &Resources, out: &mut Vec<Finding>) {
    for (id, props) in of_type(resources, &["AWS::EC2::Volume"]) {
        let e = props.get("Encrypted");
        if !enabled(e) {
            finding(
                out,
                id,
                format!(
                    "EBS volume \"{id}\" does not have Encrypted: true — enable encryption at rest"
                ),
                false,
            );
        }
    }
}

/// WAW029: a `DependsOn` naming itself or a resource the template lacks.
fn depends_on_targets(resources: &Resources, out: &mut Vec<Finding>) {
    for (id, r) in resources {
        let deps: Vec<&str> = match r.get("DependsOn") {
            Some(Json::String(s)) => vec![s.as_str()],
            Some(Json::Array(a)) => a.iter().filter_map(Json::as_str).collect(),
            _ => continue,
        };
        for dep in deps {
            if dep == id {
                finding(
                    out,
                    id,
                    format!(
                        "Resource \"{id}\" has a DependsOn on itself — self-references are invalid"
                    ),
                    true,
                );
            } else if !resources.contains_key(dep) {
                finding(
                    out,
                    id,
                    format!(
                        "Resource \"{id}\" has DependsOn \"{dep}\" which does not exist in the template"
                    ),
                    true,
                );
            }
        }
    }
}

/// The logical names a value references (`Ref`, `Fn::GetAtt`, `${name}` in `Fn::Sub`).
fn references(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::Object(o) => {
            if let Some(Json::String(r)) = o.get("Ref") {
                out.push(r.clone());
            }
            if let Some(Json::Array(a)) = o.get("Fn::GetAtt")
                && let Some(Json::String(n)) = a.first()
            {
                out.push(n.clone());
            }
            if let Some(sub) = o.get("Fn::Sub") {
                for name in crate::cfn::sub_names(sub) {
                    out.push(name.split('.').next().unwrap_or_default().to_owned());
                }
            }
            o.values().for_each(|v| references(v, out));
        }
        Json::Array(a) => a.iter().for_each(|v| references(v, out)),
        _ => {}
    }
}

/// WAW042: every bucket has a bucket policy, for that bucket (`Bucket: Ref(bucket)`) and on no
/// condition, with a statement denying everyone (`Principal: "*"`) every S3 action (`s3:*`)
/// on the bucket's objects or itself when `aws:SecureTransport` is false.
fn s3_tls_only(resources: &Resources, out: &mut Vec<Finding>) {
    let mut covered: Vec<String> = Vec::new();
    for (pid, props) in of_type(resources, &["AWS::S3::BucketPolicy"]) {
        if resources[pid].get("Condition").is_some() {
            continue;
        }
        let Some(Json::String(bucket)) = props.get("Bucket").and_then(|b| b.get("Ref")) else {
            continue;
        };
        let statements: Vec<&Json> =
            match props.get("PolicyDocument").and_then(|d| d.get("Statement")) {
                Some(Json::Array(s)) => s.iter().collect(),
                Some(s @ Json::Object(_)) => vec![s],
                _ => continue,
            };
        let everyone = |p: Option<&Json>| match p {
            Some(Json::String(s)) => s == "*",
            Some(Json::Object(o)) => o.get("AWS").is_some_and(|a| a == "*"),
            _ => false,
        };
        let all_s3 = |a: Option<&Json>| match a {
            Some(Json::String(s)) => s == "s3:*" || s == "*",
            Some(Json::Array(l)) => l.iter().any(|s| s == "s3:*" || s == "*"),
            _ => false,
        };
        let on_bucket = |r: Option<&Json>| {
            let mut names = Vec::new();
            if let Some(r) = r {
                references(r, &mut names);
            }
            names.iter().any(|n| n == bucket)
        };
        let denies = statements.iter().any(|s| {
            s.get("Effect").and_then(Json::as_str) == Some("Deny")
                && everyone(s.get("Principal"))
                && all_s3(s.get("Action"))
                && on_bucket(s.get("Resource"))
                && ["Bool", "NumericLessThan"].iter().any(|op| {
                    match s
                        .get("Condition")
                        .and_then(|c| c.get(*op))
                        .and_then(|c| c.get("aws:SecureTransport"))
                    {
                        Some(Json::Bool(false)) => true,
                        Some(Json::String(v)) => v == "false",
                        _ => false,
                    }
                })
        });
        if denies {
            covered.push(bucket.clone());
        }
    }
    for (id, _) in of_type(resources, &["AWS::S3::Bucket"]) {
        if !covered.contains(id) {
            finding(
                out,
                id,
                format!(
                    "S3 bucket \"{id}\" has no bucket policy denying non-TLS requests — add a Deny statement on aws:SecureTransport = false"
                ),
                true,
            );
        }
    }
}

/// A name that says it holds a secret.
fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "password",
        "secret",
        "token",
        "apikey",
        "api_key",
        "api-key",
        "credential",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// A literal that is the secret itself (not an intrinsic, not a `{{resolve:…}}` reference).
fn literal_secret(v: &Json) -> bool {
    v.as_str()
        .is_some_and(|s| !s.is_empty() && !s.starts_with("{{resolve:"))
}

/// WAW046: secrets written into the template: a container's plaintext `Environment` entry
/// named like a secret, a Lambda environment variable of such a name holding a literal, an RDS
/// master password given as a literal.
fn plaintext_secrets(resources: &Resources, out: &mut Vec<Finding>) {
    for (id, props) in of_type(resources, &["AWS::ECS::TaskDefinition"]) {
        for c in props
            .get("ContainerDefinitions")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let container = c.get("Name").and_then(Json::as_str).unwrap_or("<unnamed>");
            for e in c
                .get("Environment")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(name) = e.get("Name").and_then(Json::as_str)
                    && secret_name(name)
                {
                    finding(
                        out,
                        id,
                        format!(
                            "TaskDefinition \"{id}\" container \"{container}\" passes \"{name}\" via plaintext Environment — use Secrets (Secrets Manager/SSM) instead"
                        ),
                        true,
                    );
                }
            }
        }
    }
    for (id, props) in of_type(resources, &["AWS::Lambda::Function"]) {
        let vars = props
            .get("Environment")
            .and_then(|e| e.get("Variables"))
            .and_then(Json::as_object);
        for (name, v) in vars.into_iter().flatten() {
            if secret_name(name) && literal_secret(v) {
                finding(
                    out,
                    id,
                    format!(
                        "Lambda function \"{id}\" sets \"{name}\" to a literal in its environment — read it from Secrets Manager or SSM ({{{{resolve:…}}}}) instead"
                    ),
                    true,
                );
            }
        }
    }
    for (id, props) in of_type(resources, &["AWS::RDS::DBInstance", "AWS::RDS::DBCluster"]) {
        if props.get("MasterUserPassword").is_some_and(literal_secret) {
            finding(
                out,
                id,
                format!(
                    "RDS resource \"{id}\" has a literal MasterUserPassword — use a NoEcho parameter, Secrets Manager ({{{{resolve:…}}}}) or ManageMasterUserPassword"
                ),
                true,
            );
        }
    }
}

/// Every name the template's values use exists: `Ref` and `Sub` names a parameter, resource or
/// pseudo-parameter (or a `Sub` variable), `GetAtt` a resource and an attribute its type has,
/// `If` and `Condition` a condition, `FindInMap` a mapping. What does not is an error: the
/// template would be refused when it is deployed.
fn dangling(t: &Json, out: &mut Vec<Finding>) {
    let names = |k: &str| -> Vec<String> {
        t.get(k)
            .and_then(Json::as_object)
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let empty = Map::new();
    let resources = t
        .get("Resources")
        .and_then(Json::as_object)
        .unwrap_or(&empty);
    let scope = Scope {
        resources,
        mapping_bodies: t
            .get("Mappings")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default(),
        parameters: names("Parameters"),
        conditions: names("Conditions"),
        mappings: names("Mappings"),
    };
    for (id, r) in resources {
        if let Some(Json::String(c)) = r.get("Condition") {
            scope.condition(id, c, out);
        }
        // Metadata is free-form data (a `Condition` key there is no reference): not checked.
        for key in ["Properties", "UpdatePolicy", "CreationPolicy"] {
            if let Some(v) = r.get(key) {
                scope.walk(id, v, &[], out);
            }
        }
    }
    for (id, c) in t
        .get("Conditions")
        .and_then(Json::as_object)
        .unwrap_or(&empty)
    {
        scope.walk(id, c, &[], out);
        // A condition is decided before any resource exists: it reads parameters only.
        let mut named = Vec::new();
        references(c, &mut named);
        if let Some(r) = named.iter().find(|n| resources.contains_key(*n)) {
            finding(
                out,
                id,
                format!(
                    "the condition \"{id}\" reads the resource \"{r}\" — a condition may read parameters and mappings only"
                ),
                true,
            );
        }
    }
    for (id, p) in t
        .get("Parameters")
        .and_then(Json::as_object)
        .unwrap_or(&empty)
    {
        if p.as_object()
            .is_some_and(|o| o.values().any(|v| matches!(v, Json::Object(_))))
        {
            finding(
                out,
                id,
                format!(
                    "the parameter \"{id}\" holds an intrinsic — a parameter's type, default and constraints are literals"
                ),
                true,
            );
        }
    }
    for (id, o) in t.get("Outputs").and_then(Json::as_object).unwrap_or(&empty) {
        let entity = format!("Outputs.{id}");
        if let Some(Json::String(c)) = o.get("Condition") {
            scope.condition(&entity, c, out);
        }
        for key in ["Value", "Export"] {
            if let Some(v) = o.get(key) {
                scope.walk(&entity, v, &[], out);
            }
        }
    }
}

/// CloudFormation's pseudo-parameters.
const PSEUDO: &[&str] = &[
    "AWS::AccountId",
    "AWS::NotificationARNs",
    "AWS::NoValue",
    "AWS::Partition",
    "AWS::Region",
    "AWS::StackId",
    "AWS::StackName",
    "AWS::URLSuffix",
];

struct Scope<'t> {
    resources: &'t Map<String, Json>,
    /// Each mapping's body, to check literal `FindInMap` keys.
    mapping_bodies: Map<String, Json>,
    parameters: Vec<String>,
    conditions: Vec<String>,
    mappings: Vec<String>,
}

impl Scope<'_> {
    fn condition(&self, entity: &str, c: &str, out: &mut Vec<Finding>) {
        if !self.conditions.iter().any(|n| n == c) {
            finding(
                out,
                entity,
                format!(
                    "{entity} uses the condition \"{c}\", which the template does not declare — declare it with new Condition(…)"
                ),
                true,
            );
        }
    }

    /// `name` or `name.Attr` as `Ref`/`Sub` use it.
    fn reference(&self, entity: &str, name: &str, variables: &[String], out: &mut Vec<Finding>) {
        if variables.iter().any(|v| v == name) {
            return;
        }
        if name.starts_with("AWS::") {
            if !PSEUDO.contains(&name) {
                finding(
                    out,
                    entity,
                    format!(
                        "{entity} references \"{name}\", which is no pseudo-parameter (they are {})",
                        PSEUDO.join(", ")
                    ),
                    true,
                );
            }
            return;
        }
        let (target, attribute) = match name.split_once('.') {
            Some((r, a)) => (r, Some(a)),
            None => (name, None),
        };
        match attribute {
            None if self.parameters.iter().any(|p| p == target)
                || self.resources.contains_key(target) => {}
            None => finding(
                out,
                entity,
                format!(
                    "{entity} references \"{target}\", which is no parameter or resource of the template"
                ),
                true,
            ),
            Some(a) => self.attribute(entity, target, a, out),
        }
    }

    fn attribute(&self, entity: &str, resource: &str, attribute: &str, out: &mut Vec<Finding>) {
        let Some(r) = self.resources.get(resource) else {
            finding(
                out,
                entity,
                format!(
                    "{entity} reads {resource}.{attribute}, but the template has no resource \"{resource}\""
                ),
                true,
            );
            return;
        };
        let ty = r.get("Type").and_then(Json::as_str).unwrap_or_default();
        // A stack's outputs are the child's: `Outputs.<name>`.
        if ty == "AWS::CloudFormation::Stack" && attribute.starts_with("Outputs.") {
            return;
        }
        let Some(class) = crate::catalog::resource_of_type(ty) else {
            return;
        };
        let attrs: Vec<String> = class
            .attrs()
            .map(crate::catalog::dotted_attribute)
            .collect();
        let matches = |a: &String| {
            a == attribute
                || (a.contains('*')
                    && a.split('.').count() == attribute.split('.').count()
                    && a.split('.')
                        .zip(attribute.split('.'))
                        .all(|(x, y)| x == "*" || x == y))
        };
        if !attrs.is_empty() && !attrs.iter().any(matches) {
            finding(
                out,
                entity,
                format!(
                    "{entity} reads {resource}.{attribute}, but {ty} has no attribute \"{attribute}\" (it has {})",
                    attrs.join(", ")
                ),
                true,
            );
        }
    }

    fn walk(&self, entity: &str, v: &Json, variables: &[String], out: &mut Vec<Finding>) {
        match v {
            Json::Object(o) if o.len() == 1 => {
                let (k, arg) = o.iter().next().expect("one entry");
                match (k.as_str(), arg) {
                    ("Ref", Json::String(n)) => return self.reference(entity, n, variables, out),
                    ("Condition", Json::String(c)) => return self.condition(entity, c, out),
                    ("Fn::GetAtt", Json::Array(a)) if a.len() == 2 => {
                        if let (Some(r), Some(at)) = (a[0].as_str(), a[1].as_str()) {
                            return self.attribute(entity, r, at, out);
                        }
                    }
                    ("Fn::If", Json::Array(a)) if a.len() == 3 => {
                        if let Some(c) = a[0].as_str() {
                            self.condition(entity, c, out);
                        }
                        self.walk(entity, &a[1], variables, out);
                        return self.walk(entity, &a[2], variables, out);
                    }
                    ("Fn::FindInMap", Json::Array(a)) if a.len() == 3 => {
                        // Literal keys must be in the mapping (a computed one is decided at deploy).
                        if let (Some(m), Some(k1)) = (a[0].as_str(), a[1].as_str())
                            && let Some(map) = self.mapping_bodies.get(m)
                        {
                            match map.get(k1) {
                                None => finding(
                                    out,
                                    entity,
                                    format!(
                                        "{entity} reads \"{k1}\" of the mapping \"{m}\", which has no such key"
                                    ),
                                    true,
                                ),
                                Some(inner) => {
                                    if let Some(k2) = a[2].as_str()
                                        && inner.get(k2).is_none()
                                    {
                                        finding(
                                            out,
                                            entity,
                                            format!(
                                                "{entity} reads \"{k1}\".\"{k2}\" of the mapping \"{m}\", which has no such key"
                                            ),
                                            true,
                                        );
                                    }
                                }
                            }
                        }
                        if let Some(m) = a[0].as_str()
                            && !self.mappings.iter().any(|x| x == m)
                        {
                            finding(
                                out,
                                entity,
                                format!(
                                    "{entity} reads the mapping \"{m}\", which the template does not declare — declare it with new Mapping({{…}})"
                                ),
                                true,
                            );
                        }
                        self.walk(entity, &a[1], variables, out);
                        return self.walk(entity, &a[2], variables, out);
                    }
                    ("Fn::Sub", sub) => {
                        let vars = match sub {
                            Json::Array(a) if a.len() == 2 => a[1].as_object(),
                            _ => None,
                        };
                        let mut names: Vec<String> = variables.to_vec();
                        if let Some(vars) = vars {
                            names.extend(vars.keys().cloned());
                            for v in vars.values() {
                                self.walk(entity, v, variables, out);
                            }
                        }
                        for name in crate::cfn::sub_names(sub) {
                            self.reference(entity, name, &names, out);
                        }
                        return;
                    }
                    _ => {}
                }
                self.walk(entity, arg, variables, out);
            }
            Json::Object(o) => o
                .values()
                .for_each(|v| self.walk(entity, v, variables, out)),
            Json::Array(a) => a.iter().for_each(|v| self.walk(entity, v, variables, out)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(template: Json) -> Vec<(bool, String)> {
        run(&template)
            .into_iter()
            .map(|f| (f.error, f.message))
            .collect()
    }

    #[test]
    fn a_bucket_needs_public_access_blocked_and_a_tls_policy() {
        let open = texts(
            json!({"Parameters": {"Flag": {"Type": "String"}}, "Resources": {"b": {"Type": "AWS::S3::Bucket", "Properties": {
            "PublicAccessBlockConfiguration": {"BlockPublicAcls": false, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": {"Ref": "Flag"}}}}}}),
        );
        assert_eq!(open, vec![
            (true, "S3 bucket \"b\" has BlockPublicAcls set to false — all public access should be blocked".into()),
            (true, "S3 bucket \"b\" has no bucket policy denying non-TLS requests — add a Deny statement on aws:SecureTransport = false".into()),
        ]);
        let pab = json!({"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true});
        let deny = json!({"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": [{"Fn::GetAtt": ["b", "Arn"]}, {"Fn::Sub": "${b.Arn}/*"}], "Condition": {"Bool": {"aws:SecureTransport": "false"}}});
        let closed = json!({"Resources": {
            "b": {"Type": "AWS::S3::Bucket", "Properties": {"PublicAccessBlockConfiguration": pab}},
            "p": {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": "b"}, "PolicyDocument": {"Statement": [deny]}}}}});
        assert!(texts(closed.clone()).is_empty());
        // One statement as an object, not a list, is a statement too.
        let mut single = closed.clone();
        single["Resources"]["p"]["Properties"]["PolicyDocument"]["Statement"] = deny.clone();
        assert!(texts(single).is_empty());
        // A flag left out is false; a policy on a condition, for another bucket, for one action
        // or one principal, or on another resource covers nothing.
        let mut partial = closed.clone();
        partial["Resources"]["b"]["Properties"]["PublicAccessBlockConfiguration"] =
            json!({"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true});
        assert_eq!(texts(partial), vec![(true, "S3 bucket \"b\" does not set RestrictPublicBuckets — it defaults to false; all public access should be blocked".into())]);
        for (path, value) in [
            ("Condition", json!("Never")),
            ("Bucket", json!({"Fn::Sub": "${b}"})),
            ("Action", json!("s3:ListBucket")),
            (
                "Principal",
                json!({"AWS": "arn:aws:iam::123456789012:root"}),
            ),
            ("Resource", json!("arn:aws:s3:::unrelated")),
        ] {
            let mut weak = closed.clone();
            match path {
                "Condition" => weak["Resources"]["p"]["Condition"] = value,
                "Bucket" => weak["Resources"]["p"]["Properties"]["Bucket"] = value,
                k => {
                    weak["Resources"]["p"]["Properties"]["PolicyDocument"]["Statement"][0][k] =
                        value
                }
            }
            let got = texts(weak);
            assert!(
                got.iter()
                    .any(|(_, m)| m.contains("has no bucket policy denying non-TLS")),
                "{path}: {got:?}"
            );
        }
        // An Allow on the same condition covers nothing.
        let allow = json!({"Resources": {
            "b": {"Type": "AWS::S3::Bucket", "Properties": {"PublicAccessBlockConfiguration": pab}},
            "p": {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": "b"}, "PolicyDocument": {"Statement": [
                {"Effect": "Allow", "Principal": "*", "Action": "s3:*", "Resource": {"Fn::GetAtt": ["b", "Arn"]}, "Condition": {"Bool": {"aws:SecureTransport": false}}}]}}}}});
        assert_eq!(texts(allow).len(), 1);
    }

    #[test]
    fn warnings_come_before_errors_in_check_order() {
        let t = json!({"Resources": {
            "q": {"Type": "AWS::SQS::Queue"},
            "b": {"Type": "AWS::S3::Bucket"},
            "f": {"Type": "AWS::Lambda::Function"},
            "t": {"Type": "AWS::SNS::Topic", "Properties": {"KmsMasterKeyId": "alias/x"}},
            "r": {"Type": "AWS::IAM::Role", "Properties": {"Policies": [{"PolicyDocument": {"Statement": [{"Action": ["s3:Get*", "*"]}]}}]}},
            "deny": {"Type": "AWS::IAM::Policy", "Properties": {"PolicyDocument": {"Statement": [{"Effect": "Deny", "Action": "*"}]}}},
            "u": {"Type": "AWS::IAM::User", "Properties": {"Policies": [{"PolicyDocument": {"Statement": {"Effect": "Allow", "NotAction": "iam:*"}}}]}},
            "s": {"Type": "AWS::SQS::Queue", "Properties": {"SqsManagedSseEnabled": true}},
        }});
        let got: Vec<String> = run(&t).into_iter().map(|f| f.entity).collect();
        assert_eq!(got, ["r", "u", "f", "q", "b", "b"]);
    }

    #[test]
    fn depends_on_must_name_another_resource_of_the_template() {
        let t = json!({"Resources": {"a": {"Type": "AWS::SNS::Topic", "DependsOn": ["a", "ghost"], "Properties": {"KmsMasterKeyId": "k"}}}});
        assert_eq!(
            texts(t),
            vec![
                (
                    true,
                    "Resource \"a\" has a DependsOn on itself — self-references are invalid".into()
                ),
                (
                    true,
                    "Resource \"a\" has DependsOn \"ghost\" which does not exist in the template"
                        .into()
                ),
            ]
        );
    }

    #[test]
    fn every_name_a_value_uses_must_exist() {
        let t = json!({
            "Parameters": {"Env": {"Type": "String"}},
            "Conditions": {"IsProd": {"Fn::Equals": [{"Ref": "Env"}, "prod"]}},
            "Mappings": {"M": {"a": {"b": 1}}},
            "Resources": {
                "m": {"Type": "AWS::SNS::Topic", "Properties": {"KmsMasterKeyId": "k",
                    "DisplayName": {"Fn::FindInMap": ["M", "a", "zz"]},
                    "TopicName": {"Fn::FindInMap": ["M", "nope", "b"]},
                    "FifoTopic": {"Fn::FindInMap": ["M", {"Ref": "Env"}, "b"]}}},
                "t": {"Type": "AWS::SNS::Topic", "Condition": "Ghost", "Properties": {
                    "KmsMasterKeyId": "k",
                    "DisplayName": {"Fn::Sub": ["${AWS::Region}-${Env}-${v}-${!x}-${t.TopicArn}-${t.Nope}-${Nobody}", {"v": {"Ref": "AWS::StackName"}}]},
                    "TopicName": {"Fn::If": ["Other", {"Fn::FindInMap": ["NoMap", "a", "b"]}, {"Fn::GetAtt": ["t", "Arnn"]}]},
                    "Tags": [{"Key": "a", "Value": {"Ref": "Missing"}}, {"Key": "b", "Value": {"Fn::GetAtt": ["Gone", "Arn"]}}]
                }},
                "c": {"Type": "Custom::Thing", "Properties": {"X": {"Fn::GetAtt": ["c", "Anything"]}}}
            },
            "Outputs": {"O": {"Value": {"Ref": "t"}, "Condition": "IsProd"}}
        });
        let got: Vec<String> = run(&t)
            .into_iter()
            .filter(|f| f.error)
            .map(|f| f.message)
            .collect();
        assert_eq!(got, vec![
            "m reads \"a\".\"zz\" of the mapping \"M\", which has no such key".to_owned(),
            "m reads \"nope\" of the mapping \"M\", which has no such key".into(),
            "t uses the condition \"Ghost\", which the template does not declare — declare it with new Condition(…)".into(),
            "t reads t.Nope, but AWS::SNS::Topic has no attribute \"Nope\" (it has TopicArn)".into(),
            "t references \"Nobody\", which is no parameter or resource of the template".into(),
            "t uses the condition \"Other\", which the template does not declare — declare it with new Condition(…)".into(),
            "t reads the mapping \"NoMap\", which the template does not declare — declare it with new Mapping({…})".into(),
            "t reads t.Arnn, but AWS::SNS::Topic has no attribute \"Arnn\" (it has TopicArn)".into(),
            "t references \"Missing\", which is no parameter or resource of the template".into(),
            "t reads Gone.Arn, but the template has no resource \"Gone\"".into(),
        ]);
    }

    #[test]
    fn secrets_in_the_template_are_errors() {
        let t = json!({"Resources": {
            "td": {"Type": "AWS::ECS::TaskDefinition", "Properties": {"ContainerDefinitions": [{"Name": "app", "Environment": [{"Name": "DB_PASSWORD", "Value": "x"}, {"Name": "MODE", "Value": "y"}]}]}},
            "f": {"Type": "AWS::Lambda::Function", "Properties": {"VpcConfig": {}, "Environment": {"Variables": {"API_KEY": "abc", "TOKEN": "{{resolve:ssm:/t}}", "SECRET_ARN": {"Ref": "s"}}}}},
            "db": {"Type": "AWS::RDS::DBInstance", "Properties": {"StorageEncrypted": true, "MasterUserPassword": "hunter22"}},
            "s": {"Type": "AWS::SecretsManager::Secret"}
        }});
        let got: Vec<String> = run(&t)
            .into_iter()
            .filter(|f| f.error)
            .map(|f| f.message)
            .collect();
        assert_eq!(got, vec![
            "TaskDefinition \"td\" container \"app\" passes \"DB_PASSWORD\" via plaintext Environment — use Secrets (Secrets Manager/SSM) instead".to_owned(),
            "Lambda function \"f\" sets \"API_KEY\" to a literal in its environment — read it from Secrets Manager or SSM ({{resolve:…}}) instead".into(),
            "RDS resource \"db\" has a literal MasterUserPassword — use a NoEcho parameter, Secrets Manager ({{resolve:…}}) or ManageMasterUserPassword".into(),
        ]);
    }

    #[test]
    fn open_ingress_rds_and_ebs() {
        let t = json!({"Resources": {
            "sg": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"SecurityGroupIngress": [{"CidrIp": "0.0.0.0/0", "FromPort": 22, "ToPort": 22}]}},
            "db": {"Type": "AWS::RDS::DBInstance", "Properties": {}},
            "member": {"Type": "AWS::RDS::DBInstance", "Properties": {"DBClusterIdentifier": "c"}},
            "v": {"Type": "AWS::EC2::Volume", "Properties": {"Encrypted": true}},
        }});
        assert_eq!(texts(t), vec![
            (false, "Security group \"sg\" allows unrestricted ingress from 0.0.0.0/0 on port 22 — restrict to specific CIDR ranges".into()),
            (false, "RDS resource \"db\" (AWS::RDS::DBInstance) does not have StorageEncrypted: true — enable encryption at rest".into()),
        ]);
    }
}
