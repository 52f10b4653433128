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

fn is_true(v: Option<&Json>) -> bool {
    matches!(v, Some(Json::Bool(true))) || v.and_then(Json::as_str) == Some("true")
}

/// WAW018: every bucket blocks public access.
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
            if pab.get(flag) == Some(&Json::Bool(false)) {
                finding(
                    out,
                    id,
                    format!(
                        "S3 bucket \"{id}\" has {flag} set to false — all public access should be blocked"
                    ),
                    true,
                );
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

/// WAW020: an IAM policy statement allowing every action.
fn iam_wildcard_action(resources: &Resources, out: &mut Vec<Finding>) {
    let types = [
        "AWS::IAM::Policy",
        "AWS::IAM::Role",
        "AWS::IAM::ManagedPolicy",
    ];
    for (id, props) in of_type(resources, &types) {
        let wildcard = statements(props)
            .into_iter()
            .any(|s| match s.get("Action") {
                Some(Json::String(a)) => a == "*",
                Some(Json::Array(a)) => a.iter().any(|a| a == "*"),
                _ => false,
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
        if !is_true(encrypted) && !encrypted.is_some_and(is_intrinsic) {
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
        if !props.contains_key("KmsMasterKeyId")
            && !is_true(managed)
            && !managed.is_some_and(is_intrinsic)
        {
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
        if !is_true(e) && !e.is_some_and(is_intrinsic) {
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
            let sub = match o.get("Fn::Sub") {
                Some(Json::String(s)) => Some(s.as_str()),
                Some(Json::Array(a)) => a.first().and_then(Json::as_str),
                _ => None,
            };
            if let Some(s) = sub {
                let mut rest = s;
                while let Some(i) = rest.find("${") {
                    rest = &rest[i + 2..];
                    if let Some(end) = rest.find('}') {
                        let name = rest[..end].split('.').next().unwrap_or_default();
                        out.push(name.to_owned());
                        rest = &rest[end..];
                    }
                }
            }
            o.values().for_each(|v| references(v, out));
        }
        Json::Array(a) => a.iter().for_each(|v| references(v, out)),
        _ => {}
    }
}

/// WAW042: every bucket has a bucket policy denying requests over plaintext.
fn s3_tls_only(resources: &Resources, out: &mut Vec<Finding>) {
    let mut covered: Vec<String> = Vec::new();
    for (_, props) in of_type(resources, &["AWS::S3::BucketPolicy"]) {
        let Some(Json::Array(statements)) =
            props.get("PolicyDocument").and_then(|d| d.get("Statement"))
        else {
            continue;
        };
        let denies = statements.iter().any(|s| {
            s.get("Effect").and_then(Json::as_str) == Some("Deny")
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
        if denies && let Some(bucket) = props.get("Bucket") {
            references(bucket, &mut covered);
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
            json!({"Resources": {"b": {"Type": "AWS::S3::Bucket", "Properties": {
            "PublicAccessBlockConfiguration": {"BlockPublicAcls": false, "BlockPublicPolicy": true}}}}}),
        );
        assert_eq!(open, vec![
            (true, "S3 bucket \"b\" has BlockPublicAcls set to false — all public access should be blocked".into()),
            (true, "S3 bucket \"b\" has no bucket policy denying non-TLS requests — add a Deny statement on aws:SecureTransport = false".into()),
        ]);
        let closed = json!({"Resources": {
            "b": {"Type": "AWS::S3::Bucket", "Properties": {"PublicAccessBlockConfiguration": {"BlockPublicAcls": true}}},
            "p": {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": "b"}, "PolicyDocument": {"Statement": [
                {"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}}}}});
        assert!(texts(closed).is_empty());
        // An Allow on the same condition covers nothing.
        let allow = json!({"Resources": {
            "b": {"Type": "AWS::S3::Bucket", "Properties": {"PublicAccessBlockConfiguration": {}}},
            "p": {"Type": "AWS::S3::BucketPolicy", "Properties": {"Bucket": {"Ref": "b"}, "PolicyDocument": {"Statement": [
                {"Effect": "Allow", "Condition": {"Bool": {"aws:SecureTransport": false}}}]}}}}});
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
            "s": {"Type": "AWS::SQS::Queue", "Properties": {"SqsManagedSseEnabled": true}},
        }});
        let got: Vec<String> = run(&t).into_iter().map(|f| f.entity).collect();
        assert_eq!(got, ["r", "f", "q", "b", "b"]);
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
