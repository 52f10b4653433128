//! The aws lexicon black-box: every init and scaffold template and every composite builds; the
//! MCP surface (scaffold, examples, the resource catalog, `aws:diff` with its file held to the
//! walls); hostile sources (an unknown export, a getter on a composite's props, names that are
//! not identifiers). Built templates are also written to `CHANT_AWS_TEMPLATES` when it is set,
//! for `scripts/test` to run cfn-lint over them.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_testkit::ServerProcess;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_chant");

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("chant.config.ts"),
        "export default { lexicons: [\"aws\"] };\n",
    )
    .unwrap();
    for (name, content) in files {
        std::fs::write(root.join("src").join(name), content).unwrap();
    }
    (dir, root)
}

fn chant(root: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root)
        .output()
        .unwrap()
}

/// Builds `src` and returns the template, keeping a copy for cfn-lint when asked.
fn build(root: &Path, label: &str) -> Value {
    let out = chant(root, &["build", "src"]);
    assert!(
        out.status.success(),
        "{label}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("error:"), "{label}: {err}");
    if let Ok(dir) = std::env::var("CHANT_AWS_TEMPLATES") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join(format!("{label}.json")), &out.stdout).unwrap();
    }
    serde_json::from_slice(&out.stdout).unwrap()
}

fn serve(root: &Path) -> ServerProcess {
    let mut s = ServerProcess::spawn_in(BIN, ["serve", "mcp"], root);
    s.initialize(Some("2025-11-25"));
    s
}

fn call(s: &mut ServerProcess, id: i64, name: &str, args: Value) -> Value {
    s.request(id, "tools/call", json!({"name": name, "arguments": args}))["result"].clone()
}

/// The scaffold templates of aws, by name (the MCP `scaffold` tool's `template`).
fn template_files(s: &mut ServerProcess, id: i64, name: &str) -> Vec<(String, String)> {
    let r = call(
        s,
        id,
        "scaffold",
        json!({"pattern": name, "lexicon": "aws", "template": name}),
    );
    r["structuredContent"]["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: {r}"))
        .iter()
        .map(|f| {
            (
                f["filename"].as_str().unwrap().to_owned(),
                f["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Every template set builds on its own, without a post-synth error, and `scaffold` finds the
/// seed's "s3-bucket" pattern.
#[test]
fn every_template_and_example_builds() {
    let (_d, root) = project(&[]);
    let mut s = serve(&root);
    let scaffold = call(&mut s, 1, "scaffold", json!({"pattern": "s3-bucket"}));
    assert_eq!(
        scaffold["structuredContent"]["lexicon"], "aws",
        "{scaffold}"
    );
    assert_eq!(
        scaffold["structuredContent"]["files"][0]["filename"],
        "s3-bucket.ts"
    );
    let list = s.request(2, "resources/list", json!({}))["result"]["resources"].clone();
    let uris: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"chant://aws/resource-catalog"), "{uris:?}");
    let names = [
        "default",
        "s3-bucket",
        "lambda-function",
        "lambda-sqs",
        "vpc",
        "fargate",
        "rds",
        "eks",
    ];
    for (i, name) in names.iter().enumerate() {
        assert!(
            uris.contains(&format!("chant://aws/examples/{name}").as_str()),
            "{name}"
        );
        let files = template_files(&mut s, 10 + i as i64, name);
        let borrowed: Vec<(&str, &str)> = files
            .iter()
            .map(|(f, c)| (f.as_str(), c.as_str()))
            .collect();
        let (_d, p) = project(&borrowed);
        let t = build(&p, &format!("template-{name}"));
        assert!(!t["Resources"].as_object().unwrap().is_empty(), "{name}");
    }
    let catalog = s.request(
        3,
        "resources/read",
        json!({"uri": "chant://aws/resource-catalog"}),
    );
    let text = catalog["result"]["contents"][0]["text"].as_str().unwrap();
    let entries: Value = serde_json::from_str(text).unwrap();
    assert_eq!(entries.as_array().unwrap().len(), 10_761);
    assert_eq!(
        entries[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["className", "resourceType", "kind"]
    );
    let context = s.request(4, "resources/read", json!({"uri": "chant://context"}));
    assert!(
        context["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("## AWS CloudFormation (lexicon `aws`)")
    );
}

/// A project instantiating every composite builds to members named after the export, with no
/// value left null (an attribute the type lacks would be).
#[test]
fn every_composite_builds() {
    let source = std::fs::read_to_string(data().join("aws-all-composites.ts")).unwrap();
    let (_d, root) = project(&[("all.ts", &source)]);
    let t = build(&root, "all-composites");
    let resources = t["Resources"].as_object().unwrap();
    for name in [
        "fnRole",
        "fnFunc",
        "sqsEventSourceMapping",
        "snsSubscription",
        "cronRule",
        "ddbTable",
        "s3BucketPolicy",
        "netNatGateway",
        "netPrivateSubnet3",
        "netPrivateRta3",
        "smallSubnetRta",
        "sharedAlbSg",
        "sharedExecutionRole",
        "webRedirectListener",
        "webTaskSg",
        "svcRule",
        "svcService",
        "svcScalableTarget",
        "svcScalingPolicy",
        "dbDb",
        "dbMasterSecret",
        "efsFs",
        "efsMountTarget2",
        "ec2InstanceProfile",
        "eksNodegroup",
        "lzTrail",
    ] {
        assert!(resources.contains_key(name), "{name}");
    }
    fn no_null(v: &Value, at: &str) {
        match v {
            Value::Null => panic!("null at {at}"),
            Value::Object(o) => o.iter().for_each(|(k, v)| no_null(v, &format!("{at}/{k}"))),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, v)| no_null(v, &format!("{at}/{i}"))),
            _ => {}
        }
    }
    no_null(&t, "");
    // The bucket waits for the permission its notification needs, and names it by Ref.
    assert_eq!(resources["s3Bucket"]["DependsOn"], "s3Permission");
}

/// `aws:diff` compares with a previous template the server reads inside the project only.
#[test]
fn diff_reads_the_previous_template_inside_the_walls() {
    let source = "import { Queue } from \"@intentius/chant-lexicon-aws\";\nexport const jobs = new Queue({ QueueName: \"jobs-2\", SqsManagedSseEnabled: true });\n";
    let (dir, root) = project(&[("q.ts", source)]);
    std::fs::write(
        root.join("previous.json"),
        r#"{"Resources": {"jobs": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "jobs", "SqsManagedSseEnabled": true}}}}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("outside.json"), "{}").unwrap();
    let mut s = serve(&root);
    let d = call(
        &mut s,
        1,
        "aws:diff",
        json!({"path": "src", "output": "previous.json"}),
    );
    assert_ne!(d["isError"], true, "{d}");
    assert_eq!(
        d["structuredContent"]["resources"]["modified"][0],
        json!({"logicalId": "jobs", "type": "AWS::SQS::Queue", "properties": ["QueueName"], "attributes": [], "replacement": true, "replacedBy": ["QueueName"]})
    );
    std::fs::write(root.join("broken.json"), "{\"Resources\": ").unwrap();
    let r = call(
        &mut s,
        4,
        "aws:diff",
        json!({"path": "src", "output": "broken.json"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("output: not a JSON template: "),
        "{r}"
    );
    for hostile in [
        "../outside.json".to_owned(),
        dir.path().join("outside.json").display().to_string(),
        "/etc/passwd".to_owned(),
    ] {
        let r = call(
            &mut s,
            2,
            "aws:diff",
            json!({"path": "src", "output": hostile}),
        );
        assert_eq!(r["isError"], true, "{hostile}: {r}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("outside.json"), root.join("link.json"))
            .unwrap();
        let r = call(
            &mut s,
            3,
            "aws:diff",
            json!({"path": "src", "output": "link.json"}),
        );
        assert_eq!(r["isError"], true, "{r}");
    }
}

/// Hostile sources: an export the module lacks names the nearest; a name that is not an
/// identifier loads the whole module (no code is built from it); a composite whose props throw
/// from a getter fails that file with the getter's message; a property the type lacks is a
/// lint error.
#[test]
fn hostile_sources_fail_by_name() {
    let (_d, root) = project(&[(
        "a.ts",
        "import { Buckett } from \"@intentius/chant-lexicon-aws\";\nexport const b = new Buckett({});\n",
    )]);
    let out = chant(&root, &["build", "src"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "@intentius/chant-lexicon-aws has no export \"Buckett\" (did you mean \"Bucket\"?)"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_d, root) = project(&[(
        "a.ts",
        "import { \"Bucket\\\"; throw 1; //\" as B } from \"@intentius/chant-lexicon-aws\";\nexport const b = B;\n",
    )]);
    let out = chant(&root, &["build", "src"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "Could not find export 'Bucket\"; throw 1; //' in module '@intentius/chant-lexicon-aws'"
        ),
        "{err}"
    );
    // A name no class could have loads the whole module, whose own error names it (the
    // near-name search is never run on it).
    let long = "Q".repeat(2_000);
    let (_d, root) = project(&[(
        "a.ts",
        &format!(
            "import {{ {long} }} from \"@intentius/chant-lexicon-aws\";\nexport const x = {long};\n"
        ),
    )]);
    let out = chant(&root, &["build", "src"]);
    assert_eq!(out.status.code(), Some(1));
    // (QuickJS shortens the name in its message.)
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Could not find export 'QQQQ")
            && err.contains("' in module '@intentius/chant-lexicon-aws'"),
        "{err}"
    );
    let (_d, root) = project(&[(
        "a.ts",
        "import { default as X } from \"@intentius/chant-lexicon-aws\";\nexport const x = X;\n",
    )]);
    let out = chant(&root, &["build", "src"]);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("Could not find export 'default' in module '@intentius/chant-lexicon-aws'"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_d, root) = project(&[(
        "a.ts",
        "import { LambdaFunction } from \"@intentius/chant-lexicon-aws\";\nexport const f = LambdaFunction({ Runtime: \"nodejs22.x\", Handler: \"i.h\", get Code() { throw new Error(\"no code for you\"); } });\n",
    )]);
    let out = chant(&root, &["build", "src"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no code for you"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_d, root) = project(&[(
        "a.ts",
        "import { Queue } from \"@intentius/chant-lexicon-aws\";\nexport const q = new Queue({ QueueNme: \"x\" });\n",
    )]);
    let out = chant(&root, &["lint", "src", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let waw002: Vec<&Value> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["ruleId"] == "WAW002")
        .collect();
    assert_eq!(
        waw002[0]["message"],
        "Queue (AWS::SQS::Queue) has no property \"QueueNme\" — did you mean \"QueueName\"?"
    );
    assert_eq!(waw002[0]["severity"], "error");
}

/// Templates, conditions and resource attributes that the serializer refuses name the entity
/// and the fix.
#[test]
fn template_parts_and_attributes_are_checked() {
    let (_d, root) = project(&[(
        "a.ts",
        "import { Queue, Condition, Equals, Parameter, If, Mapping, FindInMap, AWS, output } from \"@intentius/chant-lexicon-aws\";\nexport const env = new Parameter(\"String\", { allowedValues: [\"dev\", \"prod\"] });\nexport const isProd = new Condition(Equals(env, \"prod\"));\nexport const sizes = new Mapping({ dev: { Delay: 1 }, prod: { Delay: 0 } });\nexport const q = new Queue({ DelaySeconds: FindInMap(sizes, env, \"Delay\"), MaximumMessageSize: If(isProd, 262144, AWS.NoValue), SqsManagedSseEnabled: true }, { Condition: isProd, DeletionPolicy: \"Retain\" });\nexport const url = output(q.QueueUrl, \"Url\", { condition: isProd, export: \"jobs-url\" });\n",
    )]);
    let t = build(&root, "template-parts");
    assert_eq!(
        t["Conditions"]["isProd"],
        json!({"Fn::Equals": [{"Ref": "env"}, "prod"]})
    );
    assert_eq!(t["Mappings"]["sizes"]["prod"]["Delay"], 0);
    assert_eq!(
        t["Resources"]["q"]["Properties"]["DelaySeconds"],
        json!({"Fn::FindInMap": ["sizes", {"Ref": "env"}, "Delay"]})
    );
    assert_eq!(
        t["Resources"]["q"]["Properties"]["MaximumMessageSize"],
        json!({"Fn::If": ["isProd", 262144, {"Ref": "AWS::NoValue"}]})
    );
    assert_eq!(t["Resources"]["q"]["Condition"], "isProd");
    assert_eq!(t["Resources"]["q"]["DeletionPolicy"], "Retain");
    assert_eq!(
        t["Outputs"]["Url"],
        json!({"Condition": "isProd", "Export": {"Name": "jobs-url"}, "Value": {"Fn::GetAtt": ["q", "QueueUrl"]}})
    );
    assert_eq!(
        t["Parameters"]["env"]["AllowedValues"],
        json!(["dev", "prod"])
    );
    let (_d, root) = project(&[(
        "a.ts",
        "import { Queue } from \"@intentius/chant-lexicon-aws\";\nexport const q = new Queue({ SqsManagedSseEnabled: true }, { Conditon: \"x\" });\n",
    )]);
    let out = chant(&root, &["build", "src"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("q: \"Conditon\" is not a resource attribute — use one of DependsOn, Condition, DeletionPolicy, UpdateReplacePolicy, UpdatePolicy, CreationPolicy, Metadata"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_d, root) = project(&[(
        "a.ts",
        "import { Queue, output } from \"@intentius/chant-lexicon-aws\";\nexport const q = new Queue({ SqsManagedSseEnabled: true });\nexport const a = output(q.Arn, \"Same\");\nexport const b = output(q.QueueUrl, \"Same\");\n",
    )]);
    let out = chant(&root, &["build", "src"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("Output \"Same\" is declared twice (by a and b) — give one another name"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What a hostile review found the serializer let through, each now a build error that names
/// the mistake, or written so it deploys as meant.
#[test]
fn mistakes_that_would_not_deploy_fail_the_build() {
    let fails = |source: &str, said: &str| {
        let (_d, root) = project(&[("a.ts", source)]);
        let out = chant(&root, &["build", "src"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{source}\n{err}");
        assert!(err.contains(said), "{source}\nwanted: {said}\ngot: {err}");
    };
    let head = "import { Topic, Sub, AWS, If, Condition, Equals, Parameter, output } from \"@intentius/chant-lexicon-aws\";\n";
    fails(
        &format!(
            "{head}export const a = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\" }});\nexport const b = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\", DisplayName: `${{a.TopicArn}}-${{AWS.StackName}}` }});\n"
        ),
        "the attribute TopicArn is a reference, not text — put it in a Sub`…` template (aws), not a plain template literal or +",
    );
    fails(
        &format!(
            "{head}export const a = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\", DisplayName: `${{AWS.StackName}}-data` }});\n"
        ),
        "AWS::StackName is known only when the stack is deployed, not text",
    );
    fails(
        &format!(
            "{head}export const a = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\", DisplayName: Sub`x` + \"-y\" }});\n"
        ),
        "Fn::Sub is computed when the template is deployed, not text",
    );
    fails(
        &format!(
            "{head}export const my_topic = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\" }});\n"
        ),
        "the export \"my_topic\" (Topic) is not a CloudFormation logical id (letters and digits only, at most 255) — rename the export",
    );
    fails(
        &format!(
            "{head}export const t = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\" }});\nexport const o = output(t.TopicArn, \"Out-1\");\n"
        ),
        "the output name \"Out-1\" is not a CloudFormation logical id",
    );
    fails(
        &format!(
            "{head}export const env = new Parameter(\"String\");\nexport const isProd = new Condition(Equals(env, \"prod\"));\nexport const t = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\", DisplayName: isProd }});\n"
        ),
        "the Condition \"isProd\" is used as a value: use it in If(isProd, …)",
    );
    fails(
        &format!(
            "{head}export const t = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\" }});\nexport const u = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\", DisplayName: If(t, \"a\", \"b\") }});\n"
        ),
        "If: expected a Condition, got t (Topic)",
    );
    fails(
        &format!(
            "{head}export const t = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\", DisplayName: NaN }});\n"
        ),
        "a number that is not finite (NaN) has no CloudFormation form",
    );
    fails(
        &format!(
            "{head}export const a = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\" }}, {{ DependsOn: \"b\" }});\nexport const b = new Topic({{ KmsMasterKeyId: \"alias/aws/sns\" }}, {{ DependsOn: [\"a\"] }});\n"
        ),
        "Circular dependency: a → b → a",
    );
    fails(
        "import { Topic, Ref, GetAtt } from \"@intentius/chant-lexicon-aws\";\nexport const t = new Topic({ KmsMasterKeyId: \"alias/aws/sns\", DisplayName: Ref(\"Ghost\"), TopicName: GetAtt(\"t\", \"Nope\") });\n",
        "t references \"Ghost\", which is no parameter or resource of the template",
    );
    // A secret written into the template fails the build.
    fails(
        "import { Function } from \"@intentius/chant-lexicon-aws\";\nexport const f = new Function({ Runtime: \"nodejs22.x\", Handler: \"i.h\", Code: { ZipFile: \"x\" }, Role: \"arn:aws:iam::123456789012:role/r\", VpcConfig: {}, Environment: { Variables: { DB_PASSWORD: \"hunter22\" } } });\n",
        "Lambda function \"f\" sets \"DB_PASSWORD\" to a literal in its environment",
    );
    // An attribute the resource lacks reads as undefined: the build says so.
    let (_d, root) = project(&[(
        "a.ts",
        "import { Role, Function } from \"@intentius/chant-lexicon-aws\";\nexport const r = new Role({ AssumeRolePolicyDocument: { Version: \"2012-10-17\", Statement: [] } });\nexport const f = new Function({ Runtime: \"nodejs22.x\", Handler: \"i.h\", Code: { ZipFile: \"x\" }, Role: r.Rn, VpcConfig: {} });\n",
    )]);
    let out = chant(&root, &["build", "src"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("warning: [f] property Role of f is undefined, so it is left out — if it reads an attribute, AWS::Lambda::Function has no such attribute; leave the key out to omit it (aws)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A string in Sub is text: a `${` in it stays literal.
    let (_d, root) = project(&[(
        "a.ts",
        "import { Topic, Sub } from \"@intentius/chant-lexicon-aws\";\nconst text = \"${AWS::AccountId}\";\nexport const t = new Topic({ KmsMasterKeyId: \"alias/aws/sns\", DisplayName: Sub`id-${text}` });\n",
    )]);
    let t = build(&root, "sub-text");
    assert_eq!(
        t["Resources"]["t"]["Properties"]["DisplayName"],
        json!({"Fn::Sub": "id-${!AWS::AccountId}"})
    );
}

/// The importer keeps what it used to change: a `Condition` key that is data, a `__proto__`
/// key, a CR in a `Sub`.
#[test]
fn import_keeps_data_that_looks_like_syntax() {
    let (_d, root) = project(&[]);
    let template = json!({
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "T": {
                "Type": "AWS::SNS::Topic",
                "Metadata": {"Condition": {"a": 1}, "__proto__": {"b": 2}, "Other": {"Condition": "NotOne"}},
                "Properties": {"KmsMasterKeyId": "alias/aws/sns", "DisplayName": {"Fn::Sub": "a\r\nb-${AWS::Region}"}}
            }
        }
    });
    std::fs::write(root.join("t.json"), template.to_string()).unwrap();
    let out = chant(&root, &["import", "t.json", "-o", "src"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let built = build(&root, "import-data");
    assert_eq!(
        built["Resources"]["T"]["Metadata"],
        template["Resources"]["T"]["Metadata"]
    );
    assert_eq!(
        built["Resources"]["T"]["Properties"]["DisplayName"],
        template["Resources"]["T"]["Properties"]["DisplayName"]
    );
}

/// A nested stack: the child project (beside the parent's sources, its own config) builds to
/// `<name>.template.json` beside the parent's; the parent points at it through
/// `TemplateBasePath` and reads its outputs. A cycle, a directory outside the walls, inside the
/// sources or without a config is refused naming it.
#[test]
fn nested_stacks_build_their_child_projects() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    let config = "export default { lexicons: [\"aws\"] };\n";
    for d in ["src", "network", "loop"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("chant.config.ts"), config).unwrap();
    std::fs::write(root.join("network/chant.config.ts"), config).unwrap();
    std::fs::write(
        root.join("network/vpc.ts"),
        "import { Vpc, Subnet, Parameter, stackOutput } from \"@intentius/chant-lexicon-aws\";\nexport const Environment = new Parameter(\"String\");\nexport const vpc = new Vpc({ CidrBlock: \"10.0.0.0/16\" });\nexport const subnet = new Subnet({ VpcId: vpc.VpcId, CidrBlock: \"10.0.0.0/24\" });\nexport const subnetId = stackOutput(subnet.SubnetId, { description: \"the subnet\" });\n",
    )
    .unwrap();
    let app = |path: &str| {
        format!(
            "import {{ Function, nestedStack }} from \"@intentius/chant-lexicon-aws\";\nexport const network = nestedStack(\"network\", \"{path}\", {{ parameters: {{ Environment: \"prod\" }} }});\nexport const handler = new Function({{ Runtime: \"nodejs22.x\", Handler: \"index.handler\", Role: \"arn:aws:iam::123456789012:role/r\", Code: {{ ZipFile: \"x\" }}, VpcConfig: {{ SubnetIds: [network.outputs.subnetId], SecurityGroupIds: [] }} }});\n"
        )
    };
    std::fs::write(root.join("src/app.ts"), app("../network")).unwrap();
    let out = chant(&root, &["build", "src", "-o", "dist/template.json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parent: Value =
        serde_json::from_slice(&std::fs::read(root.join("dist/template.json")).unwrap()).unwrap();
    let child: Value =
        serde_json::from_slice(&std::fs::read(root.join("dist/network.template.json")).unwrap())
            .unwrap();
    assert_eq!(
        parent["Resources"]["network"],
        json!({"Type": "AWS::CloudFormation::Stack", "Properties": {
            "TemplateURL": {"Fn::Sub": "${TemplateBasePath}/network.template.json"},
            "Parameters": {"Environment": "prod", "TemplateBasePath": {"Ref": "TemplateBasePath"}}
        }})
    );
    assert_eq!(
        parent["Parameters"]["TemplateBasePath"],
        json!({"Type": "String", "Default": ".", "Description": "Base URL/path for nested stack templates"})
    );
    assert_eq!(
        parent["Resources"]["handler"]["Properties"]["VpcConfig"]["SubnetIds"][0],
        json!({"Fn::GetAtt": ["network", "Outputs.subnetId"]})
    );
    assert_eq!(child["Outputs"]["subnetId"]["Description"], "the subnet");
    if let Ok(keep) = std::env::var("CHANT_AWS_TEMPLATES") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(
            root.join("dist/template.json"),
            Path::new(&keep).join("nested-parent.json"),
        )
        .unwrap();
        std::fs::copy(
            root.join("dist/network.template.json"),
            Path::new(&keep).join("nested-child.json"),
        )
        .unwrap();
    }
    // Over MCP the child's file follows the output.
    let mut s = serve(&root);
    let r = call(&mut s, 1, "build", json!({"path": "src"}));
    let output = r["structuredContent"]["output"].as_str().unwrap();
    assert!(
        output.contains("\n--- network.template.json ---\n"),
        "{output}"
    );
    drop(s);
    // The child declares the TemplateBasePath the parent passes it.
    assert_eq!(child["Parameters"]["TemplateBasePath"]["Default"], ".");
    // Checked against the child: a parameter it lacks, one it needs, an output it lacks;
    // two stacks (or -o) on one file name.
    let checked = |source: String, args: &[&str], said: &str| {
        std::fs::write(root.join("src/app.ts"), source).unwrap();
        let out = chant(&root, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{said}: {err}");
        assert!(err.contains(said), "wanted {said}, got {err}");
    };
    let build = ["build", "src"];
    checked(
        app("../network").replace("Environment: \"prod\"", "Environment: \"prod\", Nope: 1"),
        &build,
        "nested stack network: passes the parameter \"Nope\", which the child does not declare (it declares Environment)",
    );
    checked(
        app("../network").replace("{ parameters: { Environment: \"prod\" } }", "{}"),
        &build,
        "nested stack network: the child's parameter \"Environment\" has no default and is not passed",
    );
    checked(
        app("../network").replace("network.outputs.subnetId", "network.outputs.Nope"),
        &build,
        "nested stack network: reads the output \"Nope\", which the child does not declare (it declares subnetId)",
    );
    checked(
        format!(
            "{}export const again = nestedStack(\"network\", \"../network\", {{ parameters: {{ Environment: \"dev\" }} }});\n",
            app("../network")
        ),
        &build,
        "another nested stack of this build is also written as network.template.json",
    );
    checked(
        app("../network"),
        &["build", "src", "-o", "dist/network.template.json"],
        "two outputs of this build would be written to",
    );
    // Refusals.
    std::fs::write(root.join("loop/chant.config.ts"), config).unwrap();
    std::fs::write(
        root.join("loop/back.ts"),
        "import { nestedStack } from \"@intentius/chant-lexicon-aws\";\nexport const again = nestedStack(\"again\", \".\");\n",
    )
    .unwrap();
    let mut inner = root.join("src/inner");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(inner.join("chant.config.ts"), config).unwrap();
    inner.pop();
    let outside = dir.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(root.join("bare")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
    for (path, said) in [
        #[cfg(unix)]
        (
            "../linked",
            "the nested stack's directory must be inside the project",
        ),
        ("../loop", "Circular nested stack: network → again"),
        ("./inner", "is inside the sources being built"),
        (
            "../../elsewhere",
            "the nested stack's directory must be inside the project",
        ),
        ("../bare", "has no chant.config.ts of its own"),
        ("../nowhere", "nested stack network:"),
    ] {
        std::fs::write(root.join("src/app.ts"), app(path)).unwrap();
        let out = chant(&root, &["build", "src"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{path}: {err}");
        assert!(err.contains(said), "{path}: wanted {said}, got {err}");
    }
}
