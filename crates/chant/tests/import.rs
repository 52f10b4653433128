//! `chant import`: templates in, chant TypeScript out, and the round trip back to the same
//! pipeline.

use std::path::{Path, PathBuf};
use std::process::Command;

use chant_yaml::read as yaml_in;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_chant");

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/chant")
}

fn chant(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("chant.config.ts"),
        "export default { lexicons: [\"gitlab\"] };\n",
    )
    .unwrap();
    (dir, root)
}

/// Imports `template` (written as `name`) into `src/`, builds it, and returns the template and
/// the built pipeline, both read as values (mapping order aside, equal means the same pipeline).
fn round_trip(name: &str, template: &str) -> (Value, Value, String) {
    let (_d, root) = project();
    std::fs::write(root.join(name), template).unwrap();
    let imported = chant(&root, &["import", name, "-o", "src"]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let built = chant(&root, &["build", "src"]);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    (
        yaml_in::parse(template).unwrap(),
        yaml_in::parse(&String::from_utf8_lossy(&built.stdout)).unwrap(),
        String::from_utf8_lossy(&imported.stderr).into_owned(),
    )
}

#[test]
fn every_gitlab_fixtures_pipeline_round_trips() {
    let mut checked = 0;
    for entry in std::fs::read_dir(fixtures()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let built = entry.path().join("expected/build.stdout.txt");
        if !name.starts_with("gitlab-") || std::fs::metadata(&built).map_or(true, |m| m.len() == 0)
        {
            continue;
        }
        let yaml = std::fs::read_to_string(&built).unwrap();
        if name == "gitlab-yaml-quoting" {
            // The reference's emitter wrote `TRAILING_COLON: label:` and the like, which no
            // YAML reader accepts; the import says where instead of guessing.
            let (_d, root) = project();
            std::fs::write(root.join("ci.yml"), &yaml).unwrap();
            let out = chant(&root, &["import", "ci.yml"]);
            assert_eq!(out.status.code(), Some(1));
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                format!(
                    "error: Template {} is neither valid JSON nor valid YAML: mapping values are not allowed in this context at line 29 column 26\n",
                    root.join("ci.yml").display()
                )
            );
            continue;
        }
        let (original, rebuilt, _) = round_trip(".gitlab-ci.yml", &yaml);
        assert_eq!(rebuilt, original, "{name}");
        assert_eq!(rebuilt["stages"], original["stages"], "{name}: stage order");
        checked += 1;
    }
    assert!(checked >= 6, "{checked} fixtures");
}

const HAND_WRITTEN: &str = r#"# A pipeline as people write them: anchors, merge keys, extends, hidden templates.
stages: [build, test, deploy]

variables:
  DOCKER_DRIVER: overlay2
  APP_NAME: shop

default:
  image: node:22-alpine
  retry: 2

workflow:
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH

.node_cache: &node_cache
  key: node-$CI_COMMIT_REF_SLUG
  paths: [node_modules/]

.job_defaults: &job_defaults
  tags: [docker]
  interruptible: true

.setup:
  script:
    - npm ci

compile:
  <<: *job_defaults
  stage: build
  cache: *node_cache
  script:
    - !reference [.setup, script]
    - npm run build
  artifacts:
    paths: [dist/]
    expire_in: 1 week

test:unit:
  <<: *job_defaults
  stage: test
  needs: [compile]
  cache:
    <<: *node_cache
    policy: pull
  script: [npm test]
  rules:
    - if: $CI_COMMIT_BRANCH
      when: always

lint js:
  extends: .setup
  stage: test
  script: [npm run lint]

deploy-staging:
  stage: deploy
  extends: [.setup]
  environment:
    name: staging
    url: https://staging.example.test
  when: manual
  needs:
    - job: compile
      artifacts: true
"#;

#[test]
fn a_hand_written_pipeline_with_anchors_and_extends_round_trips() {
    let (original, rebuilt, warnings) = round_trip(".gitlab-ci.yml", HAND_WRITTEN);
    assert_eq!(rebuilt, original);
    assert_eq!(rebuilt["stages"], json!(["build", "test", "deploy"]));
    assert_eq!(
        rebuilt["variables"],
        json!({"DOCKER_DRIVER": "overlay2", "APP_NAME": "shop"}),
        "top-level variables kept"
    );
    assert_eq!(
        rebuilt["compile"]["script"][0],
        json!({"!reference": [".setup", "script"]})
    );
    assert_eq!(warnings, "");
}

#[test]
fn the_captured_json_templates_round_trip() {
    let fixture = fixtures().join("gitlab-import");
    let pipeline = std::fs::read_to_string(fixture.join("pipeline.json")).unwrap();
    let (mut original, rebuilt, warnings) = round_trip("pipeline.json", &pipeline);
    // `buildWheel` cannot keep its capitals (chant names a job by its export's kebab-case):
    // it is renamed, references with it, and the import says so.
    let o = original.as_object_mut().unwrap();
    let job = o.shift_remove("buildWheel").unwrap();
    o.insert("build-wheel".into(), job);
    original["deploy_pypi"]["dependencies"] = json!(["build-wheel"]);
    assert_eq!(rebuilt, original);
    assert_eq!(
        warnings,
        "warning: job \"buildWheel\" is renamed \"build-wheel\" (chant names jobs by the kebab-case of their export), and the references to it with it\n"
    );
    // Hidden templates and names that are no identifier keep their names exactly.
    let tricky = std::fs::read_to_string(fixture.join("tricky.json")).unwrap();
    let (original, rebuilt, _) = round_trip("tricky.json", &tricky);
    assert_eq!(rebuilt, original);
}

#[test]
fn import_messages_and_refusals() {
    let (_d, root) = project();
    for f in ["pipeline.json", "pipeline.yml", "cloudformation.json"] {
        std::fs::copy(fixtures().join("gitlab-import").join(f), root.join(f)).unwrap();
    }
    let out = chant(&root, &["import", "pipeline.json"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Detected lexicon: gitlab\nGenerated files:\n  01-lint.ts\n  02-test.ts\n  03-package.ts\n  04-deploy.ts\n  pipeline.ts\n"
    );
    assert!(
        root.join("infra/pipeline.ts").is_file(),
        "default output directory"
    );
    // Again without --force: nothing is overwritten, and the command says why.
    std::fs::write(root.join("infra/pipeline.ts"), "// edited by hand\n").unwrap();
    let again = chant(&root, &["import", "pipeline.json"]);
    assert!(again.status.success());
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        "Detected lexicon: gitlab\nNo files generated.\n"
    );
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains(&format!(
            "warning: Output directory {} is not empty. Use --force to overwrite.\n",
            root.join("infra").display()
        )),
        "{err}"
    );
    assert!(
        err.contains("warning: File pipeline.ts already exists, skipping\n"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("infra/pipeline.ts")).unwrap(),
        "// edited by hand\n"
    );
    let forced = chant(&root, &["import", "pipeline.json", "--force"]);
    assert!(forced.status.success());
    assert!(
        std::fs::read_to_string(root.join("infra/pipeline.ts"))
            .unwrap()
            .contains("new Variables(")
    );
    // YAML is accepted (the reference took JSON only).
    let yaml = chant(&root, &["import", "pipeline.yml", "-o", "from-yaml"]);
    assert!(
        yaml.status.success(),
        "{}",
        String::from_utf8_lossy(&yaml.stderr)
    );
    // Refusals name the file and the reason, and write nothing.
    let cfn = chant(&root, &["import", "cloudformation.json", "-o", "aws"]);
    assert_eq!(cfn.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&cfn.stderr),
        format!(
            "error: Could not detect template lexicon. No installed lexicon recognizes this template: {} (gitlab looks for a `stages` list or a job with script, trigger, run, extends, stage or needs)\n",
            root.join("cloudformation.json").display()
        )
    );
    assert!(!root.join("aws").exists());
    let missing = chant(&root, &["import", "nope.yml"]);
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        format!(
            "error: Template file not found: {}\n",
            root.join("nope.yml").display()
        )
    );
    std::fs::write(root.join("broken.yml"), "build:\n  script: [make\n").unwrap();
    let broken = chant(&root, &["import", "broken.yml"]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&broken.stderr).starts_with(&format!(
            "error: Template {} is neither valid JSON nor valid YAML: ",
            root.join("broken.yml").display()
        ))
    );
}

fn aws_project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("chant.config.ts"),
        "export default { lexicons: [\"aws\"] };\n",
    )
    .unwrap();
    (dir, root)
}

/// A template with CloudFormation's equivalent spellings made one: `GetAtt "a.b"` is
/// `["a", "b"]`, a one-name `DependsOn` list is the name, a `Select` index is a string.
fn cfn_normal(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("Fn::GetAtt", Value::String(s)) => {
                            let (r, a) = s.split_once('.').unwrap();
                            json!([r, a])
                        }
                        ("DependsOn", Value::Array(a)) if a.len() == 1 => a[0].clone(),
                        ("Fn::Select", Value::Array(a)) if a[0].is_number() => {
                            json!([a[0].to_string(), a[1]])
                        }
                        _ => v.clone(),
                    };
                    (k.clone(), cfn_normal(&v))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(cfn_normal).collect()),
        other => other.clone(),
    }
}

/// Imports `name` (already in `root`) into `infra/`, builds it, and returns the generated
/// TypeScript and the built template.
fn aws_round_trip(root: &Path, name: &str) -> (String, Value) {
    let imported = chant(root, &["import", name, "-o", "infra", "--force"]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let built = chant(root, &["build", "infra"]);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    // Kept for cfn-lint (scripts/test) when asked.
    if let Ok(dir) = std::env::var("CHANT_AWS_TEMPLATES") {
        let label = name.replace('.', "-");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            Path::new(&dir).join(format!("import-{label}.json")),
            &built.stdout,
        )
        .unwrap();
    }
    (
        std::fs::read_to_string(root.join("infra/main.ts")).unwrap(),
        serde_json::from_slice(&built.stdout).unwrap(),
    )
}

/// The captured CloudFormation template imports with its parameters' allowed values, its
/// conditions, `DependsOn` and outputs (the reference dropped all four) and builds back to it.
#[test]
fn the_cloudformation_fixture_round_trips_without_loss() {
    let (_d, root) = aws_project();
    let template = fixtures().join("aws-import-cfn/template.json");
    std::fs::copy(&template, root.join("template.json")).unwrap();
    let (ts, built) = aws_round_trip(&root, "template.json");
    let original: Value = serde_json::from_slice(&std::fs::read(&template).unwrap()).unwrap();
    assert_eq!(cfn_normal(&built), cfn_normal(&original), "{ts}");
    for kept in [
        "allowedValues: [\"dev\", \"prod\"]",
        "export const IsProd = new Condition(Equals(Ref(Env), \"prod\"));",
        "VisibilityTimeout: If(IsProd, 120, 30)",
        "{ DependsOn: [EventsQueue] }",
        "output(EventsTopic, \"TopicArn\", { export: Sub`${AWS.StackName}-topic` })",
    ] {
        assert!(ts.contains(kept), "{kept}:\n{ts}");
    }
}

/// Every intrinsic, section and resource attribute, written in JSON and in YAML with the
/// short-form tags, imports and builds back to the same template.
#[test]
fn every_intrinsic_round_trips_from_json_and_yaml() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let original: Value =
        serde_json::from_slice(&std::fs::read(data.join("cfn-every-intrinsic.json")).unwrap())
            .unwrap();
    for name in ["cfn-every-intrinsic.json", "cfn-every-intrinsic.yaml"] {
        let (_d, root) = aws_project();
        std::fs::copy(data.join(name), root.join(name)).unwrap();
        let (ts, built) = aws_round_trip(&root, name);
        assert_eq!(cfn_normal(&built), cfn_normal(&original), "{name}:\n{ts}");
        // A logical id that is a class name or a reserved word keeps its name.
        assert!(
            ts.contains("export { QueueResource as \"Queue\" };"),
            "{ts}"
        );
        assert!(
            ts.contains("export { deleteResource as \"delete\" };"),
            "{ts}"
        );
        assert!(ts.contains("resource(\"Custom::Seeder\""), "{ts}");
    }
}

/// A template that cannot be written as chant is refused with what is wrong, and nothing is
/// written.
#[test]
fn broken_cloudformation_templates_are_refused_by_name() {
    let (_d, root) = aws_project();
    let cases = [
        (
            "notype.json",
            r#"{"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"A": {"Properties": {}}}}"#,
            "resource A has no Type (a string such as \"AWS::S3::Bucket\")",
        ),
        (
            "cycle.json",
            r#"{"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"A": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": {"Ref": "B"}}}, "B": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": {"Fn::GetAtt": ["A", "TopicName"]}}}}}"#,
            "these reference each other in a cycle: A, B",
        ),
        (
            "props.json",
            r#"{"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"A": {"Type": "AWS::SNS::Topic", "Properties": [1]}}}"#,
            "resource A: Properties must be an object",
        ),
    ];
    for (name, text, message) in cases {
        std::fs::write(root.join(name), text).unwrap();
        let out = chant(&root, &["import", name, "-o", "infra"]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{name}: {err}");
        assert!(!root.join("infra").exists(), "{name}");
    }
}
