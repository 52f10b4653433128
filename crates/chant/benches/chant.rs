//! `cargo bench -p chant [-- engine|ops]`: the figures issues 4 and 6 name.
//!
//! Engine (issue 4):
//! - `chant serve mcp` cold start: spawn to the `initialize` reply (50 runs);
//! - MCP `build` of the largest gitlab fixture (median of 200 calls on one server);
//! - a generated project of 10,000 gitlab jobs across 100 files: `chant build` wall time
//!   (median of 5 runs) and, through one MCP server, the `build` call time and the server's
//!   peak RSS.
//!
//! Lint (issue 5): `chant lint` (stylish report) of the generated 10,000-job project, process
//! spawn to exit (median of 5).
//!
//! Import (issue 5): `chant import` of a generated 2,000-job `.gitlab-ci.yml` (5 stages,
//! anchors and merge keys, rules, artifacts, needs), process spawn to exit (median of 5).
//!
//! Walls (issue 9): a build whose job's `variables` is a Proxy that loops in its traps, on a
//! project with a 2 s budget: the reply time over MCP (median of 5; target: budget + 0.5 s),
//! and the time from closing stdin during such a build to the server's exit (median of 5;
//! target 1 s).
//!
//! Init (issue 15): `chant init` of a new project (files, `git init`, both MCP configs) with
//! HOME in a scratch directory, process spawn to exit (median of 20; target 50 ms), and the
//! second run that finds nothing to change.
//!
//! Ops (issue 6), in a git repository of 200 `*.op.ts` files:
//! - MCP `op-list` over the 200 Ops (median of 30 calls on one server);
//! - one ledger append (`gitledger::Ledger::append_line` on a ledger of 200 files, median of 50);
//! - `ledger`: one append followed by its push to a local bare remote (median of 30), and one
//!   gate decision's signature check (signers at base + the in-process ed25519 check, median of 30);
//! - MCP `op-run` of a one-step shell Op, minus the median time of the same command run
//!   directly with `sh -c` (medians of 50).
//! - `workspace`: `chant workspace records --json` over 2,000 decision records (median of 15),
//!   and `chant serve mcp`'s spawn-to-initialize time at a workspace root whose three members
//!   are gitlab, aws and temporal projects (median of 50).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_testkit::bench::{PipeServer, dir_size, median, p90};

/// The binary measured: this build's, or another (`CHANT_BENCH_BIN`, e.g. an earlier release,
/// for side-by-side figures).
static BIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    std::env::var("CHANT_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_chant").to_owned())
});
/// The MCP `build` call of `src`.
const BUILD_SRC: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","arguments":{"path":"src"}}}"#;
const INIT: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;

/// Spawn-to-`initialize`-reply times of 50 servers in `root` (after 5 to warm the caches).
fn cold_starts(root: &Path) -> Vec<Duration> {
    let mut cold = Vec::new();
    for i in 0..55 {
        let t = Instant::now();
        let mut s = serve(root);
        let reply = s.roundtrip(INIT);
        if i >= 5 {
            cold.push(t.elapsed());
        }
        assert!(reply.contains("\"serverInfo\""), "{reply}");
        s.stop();
    }
    cold
}

/// The times of `n` MCP `build` calls of `src` on one server, after `warm` unmeasured ones.
fn build_calls(s: &mut PipeServer, warm: usize, n: usize) -> Vec<Duration> {
    for _ in 0..warm {
        s.roundtrip(BUILD_SRC);
    }
    (0..n)
        .map(|_| {
            let t = Instant::now();
            let r = s.roundtrip(BUILD_SRC);
            let d = t.elapsed();
            assert!(
                r.contains("\\\"success\\\": true"),
                "{}",
                &r[..r.len().min(300)]
            );
            d
        })
        .collect()
}

/// `chant serve mcp` in `root`.
fn serve(root: &Path) -> PipeServer {
    let mut cmd = Command::new(&*BIN);
    cmd.args(["serve", "mcp"]).current_dir(root);
    PipeServer::start(cmd)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(name: &str, value: f64, unit: &str, target: f64, reference: &str) {
    println!(
        "{name:<46} {value:>9.3} {unit:<3} target <= {target:>6.1} {unit:<3} ratio {:>5.2}  {}  {reference}",
        value / target,
        if value <= target { "ok" } else { "MISSED" }
    );
}

/// 100 files of 100 jobs each, sharing exported property declarables.
fn generate(root: &Path) {
    std::fs::create_dir_all(root.join("src/jobs")).unwrap();
    std::fs::write(
        root.join("chant.config.ts"),
        "export default { lexicons: [\"gitlab\"] };\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/shared.ts"),
        "import { Image, Cache } from \"@intentius/chant-lexicon-gitlab\";\nexport const node = new Image({ name: \"node:22-alpine\" });\nexport const deps = new Cache({ key: \"$CI_COMMIT_REF_SLUG\", paths: [\"node_modules/\"], policy: \"pull-push\" });\n",
    )
    .unwrap();
    for f in 0..100 {
        let mut src = String::from(
            "import { Job, Artifacts } from \"@intentius/chant-lexicon-gitlab\";\nimport { node, deps } from \"../shared\";\n\n",
        );
        for j in 0..100 {
            let needs = if j > 0 {
                format!("  needs: [m{f}j{}],\n", j - 1)
            } else {
                String::new()
            };
            src.push_str(&format!(
                "export const m{f}j{j} = new Job({{\n  stage: \"{}\",\n  image: node,\n  cache: deps,\n{needs}  script: [\"npm ci\", \"npm run task-{f}-{j}\"],\n  artifacts: new Artifacts({{ paths: [\"out/{f}/{j}/\"], expire_in: \"1 day\" }}),\n  timeout: \"10m\",\n}});\n\n",
                ["build", "test", "deploy"][j % 3]
            ));
        }
        std::fs::write(root.join(format!("src/jobs/f{f:03}.ts")), src).unwrap();
    }
}

fn main() {
    let scratch = std::env::temp_dir().join(format!("chant-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wants = |group: &str| only.is_empty() || only.iter().any(|o| o == group);
    println!("chant benchmark ({})", *BIN);
    if wants("engine") {
        engine(&scratch);
    }
    if wants("ops") {
        ops(&scratch);
    }
    if wants("lint") {
        lint(&scratch);
    }
    if wants("import") {
        import(&scratch);
    }
    if wants("walls") {
        walls(&scratch);
    }
    if wants("ledger") {
        ledger(&scratch);
    }
    if wants("init") {
        init(&scratch);
    }
    if wants("aws") {
        aws(&scratch);
    }
    if wants("workspace") {
        workspace(&scratch);
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A 10-resource aws project (S3 with encryption and a TLS-only policy, an IAM role with an
/// inline policy, a Lambda function, a log group, an SQS queue with its mapping, an SNS topic
/// and subscription, a parameter and outputs): its imports either named (each file gets just
/// the classes it names) or through `import * as aws` (the whole module, every class).
fn aws_project(root: &Path, namespace: bool) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("chant.config.ts"),
        "export default { lexicons: [\"aws\"] };\n",
    )
    .unwrap();
    let body = r#"export const stage = new Parameter("String", { defaultValue: "dev" });
export const data = new Bucket({ BucketName: Sub`${AWS.StackName}-data`, BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "aws:kms" } }] }, PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true } });
export const tls = new S3BucketPolicy({ Bucket: data, PolicyDocument: { Version: "2012-10-17", Statement: [{ Effect: "Deny", Principal: "*", Action: "s3:*", Resource: [data.Arn, Sub`${data.Arn}/*`], Condition: { Bool: { "aws:SecureTransport": "false" } } }] } });
export const role = new Role({ AssumeRolePolicyDocument: { Version: "2012-10-17", Statement: [{ Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" }] }, Policies: [new Role_Policy({ PolicyName: "read", PolicyDocument: { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "s3:GetObject", Resource: Sub`${data.Arn}/*` }] } })] });
export const fn = new Function({ Runtime: "nodejs22.x", Handler: "index.handler", Role: role.Arn, Code: { ZipFile: "exports.handler = async () => 1;" }, Environment: { Variables: { STAGE: Ref(stage) } } });
export const logs = new LogGroup({ LogGroupName: Join("", ["/aws/lambda/", Ref(fn)]), RetentionInDays: 14 });
export const queue = new Queue({ SqsManagedSseEnabled: true });
export const mapping = new EventSourceMapping({ EventSourceArn: queue.Arn, FunctionName: fn.Arn });
export const topic = new Topic({ KmsMasterKeyId: "alias/aws/sns" });
export const sub = new Subscription({ TopicArn: topic, Protocol: "sqs", Endpoint: queue.Arn });
export const fnArn = output(fn.Arn, "FunctionArn");
"#;
    let names = "Parameter, Bucket, S3BucketPolicy, Role, Role_Policy, Function, LogGroup, Queue, EventSourceMapping, Topic, Subscription, Sub, Ref, Join, AWS, output";
    let src = if namespace {
        let mut b = body.to_owned();
        for n in names.split(", ") {
            b = b
                .replace(&format!("new {n}("), &format!("new aws.{n}("))
                .replace(&format!("{n}`"), &format!("aws.{n}`"))
                .replace(&format!(" {n}("), &format!(" aws.{n}("))
                .replace(&format!("[{n}("), &format!("[aws.{n}("))
                .replace(&format!("${{{n}."), &format!("${{aws.{n}."));
        }
        format!("import * as aws from \"@intentius/chant-lexicon-aws\";\n{b}")
    } else {
        format!("import {{ {names} }} from \"@intentius/chant-lexicon-aws\";\n{body}")
    };
    std::fs::write(root.join("src/stack.ts"), src).unwrap();
}

/// `n` aws resources in files of 100: per group of five, a queue, a topic subscribed to it,
/// a role, a function using the role and a log group naming the function (references, `Sub`,
/// attributes), so the build walks real edges.
fn aws_scale_project(root: &Path, n: usize) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("chant.config.ts"),
        "export default { lexicons: [\"aws\"] };\n",
    )
    .unwrap();
    for f in 0..n.div_ceil(100) {
        let mut src = String::from(
            "import { Queue, Topic, Subscription, Role, Function, LogGroup, Sub, Join, Ref, AWS } from \"@intentius/chant-lexicon-aws\";\n",
        );
        for g in 0..20 {
            let i = f * 20 + g;
            if i * 5 >= n {
                break;
            }
            src.push_str(&format!(
                "export const q{i} = new Queue({{ QueueName: Sub`${{AWS.StackName}}-q{i}`, SqsManagedSseEnabled: true }});\n\
export const t{i} = new Subscription({{ TopicArn: \"arn:aws:sns:us-east-1:123456789012:t\", Protocol: \"sqs\", Endpoint: q{i}.Arn }});\n\
export const r{i} = new Role({{ AssumeRolePolicyDocument: {{ Version: \"2012-10-17\", Statement: [{{ Effect: \"Allow\", Principal: {{ Service: \"lambda.amazonaws.com\" }}, Action: \"sts:AssumeRole\" }}] }} }});\n\
export const f{i} = new Function({{ Runtime: \"nodejs22.x\", Handler: \"index.handler\", Role: r{i}.Arn, Code: {{ ZipFile: \"x\" }}, Environment: {{ Variables: {{ QUEUE: Ref(q{i}) }} }} }});\n\
export const l{i} = new LogGroup({{ LogGroupName: Join(\"\", [\"/aws/lambda/\", Ref(f{i})]), RetentionInDays: 7 }});\n"
            ));
        }
        std::fs::write(root.join(format!("src/s{f:03}.ts")), src).unwrap();
    }
}

/// The aws lexicon (issue 12): `serve mcp` cold start in an aws project, and a 10-resource
/// build (process spawn to exit, and over MCP), named imports against the whole module.
fn aws(scratch: &Path) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/chant");
    let root = scratch.join("aws-composites");
    mcp_testkit::copy_fixture(&fixtures.join("aws-composites"), &root);
    let cold = cold_starts(&root);
    report(
        "aws: `chant serve mcp` cold start, median",
        ms(median(cold.clone())),
        "ms",
        3.0,
        &format!("p90 {:.3} ms", ms(p90(cold))),
    );
    for (label, namespace) in [("named imports", false), ("import * as aws", true)] {
        let root = scratch.join(format!("aws-10-{namespace}"));
        aws_project(&root, namespace);
        let mut runs = Vec::new();
        for i in 0..35 {
            let t = Instant::now();
            let out = Command::new(&*BIN)
                .args(["build", "src"])
                .current_dir(&root)
                .output()
                .unwrap();
            if i >= 5 {
                runs.push(t.elapsed());
            }
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        report(
            &format!("aws: `chant build`, 10 resources, {label}"),
            ms(median(runs.clone())),
            "ms",
            20.0,
            &format!("p90 {:.3} ms", ms(p90(runs))),
        );
        let mut s = serve(&root);
        s.roundtrip(INIT);
        let calls = build_calls(&mut s, 5, 100);
        report(
            &format!("aws: MCP `build`, 10 resources, {label}"),
            ms(median(calls.clone())),
            "ms",
            20.0,
            &format!("p90 {:.3} ms", ms(p90(calls))),
        );
        s.stop();
    }
    // Growth: 200, 2,000 and 20,000 resources (`chant build`, median of 5; target for 2,000).
    let mut per: Vec<(usize, f64)> = Vec::new();
    for n in [200, 2_000, 20_000] {
        let root = scratch.join(format!("aws-scale-{n}"));
        aws_scale_project(&root, n);
        let runs: Vec<Duration> = (0..6)
            .map(|_| {
                let t = Instant::now();
                let out = Command::new(&*BIN)
                    .args(["build", "src"])
                    .current_dir(&root)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                t.elapsed()
            })
            .skip(1)
            .collect();
        let m = ms(median(runs));
        per.push((n, m));
        let target = if n == 2_000 { 150.0 } else { m.max(1.0) };
        report(
            &format!("aws: `chant build`, {n} resources"),
            m,
            "ms",
            target,
            &format!("{:.1} µs per resource", m * 1e3 / n as f64),
        );
    }
    println!(
        "aws: growth 200 → 2,000 → 20,000 resources: ×{:.1}, ×{:.1} (linear: ×10, ×10)",
        per[1].1 / per[0].1,
        per[2].1 / per[1].1
    );
}

/// The shared ledger: one append followed by its push to a local bare remote (the remote
/// check: a push the remote refuses would fetch and merge), and one gate decision's signature
/// verification (signers read at base, one sealed resolution checked).
fn ledger(scratch: &Path) {
    let dir = scratch.join("ledger");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "--bare", "origin.git"]);
    git(&dir, &["clone", "-q", "origin.git", "a"]);
    let a = dir.join("a");
    for (k, v) in [("user.name", "Bench"), ("user.email", "bench@example.com")] {
        git(&a, &["config", k, v]);
    }
    let ledger = gitledger::Ledger::open(&a).unwrap();
    for i in 0..200 {
        ledger
            .append_line(
                &format!("local/runs__op{i:03}.jsonl"),
                r#"{"version":1}"#,
                "seed",
            )
            .unwrap();
    }
    ledger.publish().unwrap();
    // The append alone, in a clone that tracks the remote: it builds on the latest tip known
    // (local branch or origin's, whichever is ahead), the check that no write drops a commit.
    let checked: Vec<Duration> = (0..30)
        .map(|i| {
            let t = Instant::now();
            ledger
                .append_line(
                    "_gates/checked.jsonl",
                    &format!(r#"{{"version":1,"kind":"pending","op":"bench","gate":"c{i}"}}"#),
                    "bench append",
                )
                .unwrap();
            t.elapsed()
        })
        .collect();
    ledger.publish().unwrap();
    // The floor a push cannot beat: git's own push of one new commit to the same remote.
    let floor: Vec<Duration> = (0..10)
        .map(|i| {
            git(
                &a,
                &["commit", "-q", "--allow-empty", "-m", &format!("floor {i}")],
            );
            let t = Instant::now();
            git(&a, &["push", "-q", "origin", "HEAD:refs/heads/floor"]);
            t.elapsed()
        })
        .collect();
    let pushes: Vec<Duration> = (0..30)
        .map(|i| {
            let t = Instant::now();
            ledger
                .append_line(
                    "_gates/bench.jsonl",
                    &format!(r#"{{"version":1,"kind":"resolution","op":"bench","gate":"g{i}"}}"#),
                    "bench append",
                )
                .unwrap();
            assert_eq!(ledger.publish().unwrap().as_deref(), Some("origin"));
            t.elapsed()
        })
        .collect();

    // A signers file on main and one resolution sealed with the listed key.
    let key = dir.join("sam");
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "sam", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(ok.success());
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let mut p = public.split_whitespace();
    let line = format!(
        "sam@example.com {} {}\n",
        p.next().unwrap(),
        p.next().unwrap()
    );
    std::fs::create_dir_all(a.join(".chant")).unwrap();
    std::fs::write(a.join(".chant/allowed_signers"), line).unwrap();
    git(&a, &["add", "."]);
    git(&a, &["commit", "-q", "-m", "signers"]);
    git(&a, &["branch", "-M", "main"]);
    git(&a, &["config", "gpg.format", "ssh"]);
    git(&a, &["config", "user.signingkey", key.to_str().unwrap()]);
    let mut record = serde_json::json!({"version": 1, "kind": "resolution", "op": "o", "gate": "g",
        "resolvedBy": "sam", "timestamp": "2026-12-01T00:00:00.000Z", "origin": "cli"});
    record["signature"] =
        chant_ops::attest::seal(&a, &chant_ops::attest::payload(&record)).unwrap();
    let verifies: Vec<Duration> = (0..30)
        .map(|_| {
            let t = Instant::now();
            let signers = chant_ops::attest::Signers::at_base(&ledger)
                .unwrap()
                .unwrap();
            assert!(signers.check(&record).attested());
            t.elapsed()
        })
        .collect();
    report(
        "one ledger append, remote-tracking clone, median",
        ms(median(checked)),
        "ms",
        30.0,
        "(builds on the latest known tip: local branch or origin's)",
    );
    println!(
        "{:<46} {:>9.3} ms",
        "git push of one commit (the floor), median",
        ms(median(floor))
    );
    report(
        "one ledger append + push to a local remote, median",
        ms(median(pushes.clone())),
        "ms",
        30.0,
        "(append, then a never-forced push; refused pushes fetch and merge)",
    );
    println!(
        "{:<46} {:>9.3} ms",
        "one ledger append + push, p90",
        ms(p90(pushes))
    );
    report(
        "signature check per gate decision, median",
        ms(median(verifies.clone())),
        "ms",
        10.0,
        "(signers read at base with one git process; ed25519 checked in process)",
    );
    println!(
        "{:<46} {:>9.3} ms",
        "signature check per gate decision, p90",
        ms(p90(verifies))
    );
}

fn engine(scratch: &Path) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/chant");
    let largest: PathBuf = std::fs::read_dir(&fixtures)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("gitlab-")
                && !p.ends_with("gitlab-import")
        })
        .filter(|p| !p.to_string_lossy().contains("-err-"))
        .max_by_key(|p| dir_size(&p.join("src")))
        .unwrap();
    let fixture_root = scratch.join("fixture");
    mcp_testkit::copy_fixture(&largest, &fixture_root);

    let cold = cold_starts(&fixture_root);

    let mut s = serve(&fixture_root);
    s.roundtrip(INIT);
    let builds = build_calls(&mut s, 10, 200);
    s.stop();

    let big = scratch.join("big");
    generate(&big);
    let mut cli = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let out = Command::new(&*BIN)
            .args(["build", "src", "-o", "out.yml"])
            .current_dir(&big)
            .output()
            .unwrap();
        cli.push(t.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let yaml = std::fs::read_to_string(big.join("out.yml")).unwrap();
    let jobs = yaml
        .lines()
        .filter(|l| l.starts_with('m') && l.ends_with(':'))
        .count();
    assert_eq!(jobs, 10_000);
    let mut s = serve(&big);
    s.roundtrip(INIT);
    let mcp_build: Vec<Duration> = (0..3)
        .map(|_| {
            let t = Instant::now();
            let r = s.roundtrip(BUILD_SRC);
            assert!(
                r.contains("\\\"resourceCount\\\": 10002"),
                "{}",
                &r[..r.len().min(300)]
            );
            t.elapsed()
        })
        .collect();
    let rss = s.peak_rss_kib().unwrap_or(0) as f64 / 1024.0;
    s.stop();

    println!(
        "largest gitlab fixture: {}",
        largest.file_name().unwrap().to_string_lossy()
    );
    report(
        "serve mcp cold start to initialize, median",
        ms(median(cold.clone())),
        "ms",
        3.0,
        "(TypeScript reference: ~2.5 s to first reply)",
    );
    println!(
        "{:<46} {:>9.3} ms",
        "serve mcp cold start to initialize, p90",
        ms(p90(cold))
    );
    report(
        "MCP build of the largest gitlab fixture, median",
        ms(median(builds.clone())),
        "ms",
        5.0,
        "(reference: 5-50 ms per call, and no real output)",
    );
    println!(
        "{:<46} {:>9.3} ms",
        "MCP build of the largest gitlab fixture, p90",
        ms(p90(builds))
    );
    report(
        "chant build, 10,000 jobs / 100 files, median",
        ms(median(cli)),
        "ms",
        300.0,
        "(process spawn to exit, YAML written)",
    );
    report(
        "MCP build, 10,000 jobs / 100 files, median",
        ms(median(mcp_build)),
        "ms",
        300.0,
        "",
    );
    report(
        "peak RSS of the server building 10,000 jobs",
        rss,
        "MiB",
        100.0,
        "",
    );
}

fn walls(scratch: &Path) {
    let root = scratch.join("hostile");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["gitlab"],"timeout":"2s"}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("hostile.ts"),
        "import { Job } from \"@intentius/chant-lexicon-gitlab\";\nexport const j = new Job({ stage: \"test\", script: [\"x\"], variables: new Proxy({}, { get() { for (;;) {} }, ownKeys() { for (;;) {} } }) });\n",
    )
    .unwrap();
    let build = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","arguments":{"path":"."}}}"#;
    let mut answers = Vec::new();
    let mut exits = Vec::new();
    for _ in 0..5 {
        let mut s = serve(&root);
        s.roundtrip(INIT);
        let t = Instant::now();
        let r = s.roundtrip(build);
        answers.push(t.elapsed());
        assert!(r.contains("budget"), "{}", &r[..r.len().min(300)]);
        // End of input while the next hostile build runs.
        s.send(build);
        std::thread::sleep(Duration::from_millis(200));
        exits.push(s.close_and_wait());
    }
    report(
        "hostile Proxy build answered (2 s budget), median",
        ms(median(answers)),
        "ms",
        2500.0,
        "(before: never; the server spun at 100% CPU)",
    );
    report(
        "exit after EOF during a hostile build, median",
        ms(median(exits)),
        "ms",
        1000.0,
        "(before: never exited)",
    );
}

fn git(root: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
}

fn tool_call(id: usize, name: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{args}}}}}"#
    )
}

fn ops(scratch: &Path) {
    let root = scratch.join("ops-repo");
    std::fs::create_dir_all(root.join("ops/team")).unwrap();
    git(&root, &["init", "-q"]);
    std::fs::write(
        root.join("chant.config.json"),
        r#"{"lexicons":["temporal"]}"#,
    )
    .unwrap();
    for i in 0..200 {
        std::fs::write(
            root.join(format!("ops/team/op{i:03}.op.ts")),
            format!(
                "import {{ Op, phase, shell, gate }} from \"@intentius/chant-lexicon-temporal\";\n\nexport default Op({{\n  name: \"op{i:03}\",\n  overview: \"Operation number {i}\",\n  labels: {{ team: \"t{}\" }},\n  phases: [\n    phase(\"Stage\", [shell(\"echo stage {i}\"), shell(\"echo check {i}\")]),\n    phase(\"Approve\", [gate(\"ok-{i}\", {{ timeout: \"4h\" }})]),\n    phase(\"Apply\", [shell(\"echo apply {i}\")], {{ parallel: true }}),\n  ],\n}});\n",
                i % 7
            ),
        )
        .unwrap();
    }
    std::fs::write(
        root.join("ops/one.op.ts"),
        "import { Op, phase, shell } from \"@intentius/chant-lexicon-temporal\";\nexport default Op({ name: \"one\", overview: \"one step\", phases: [phase(\"Run\", [shell(\"true\")])] });\n",
    )
    .unwrap();

    // Fill the ledger: one run file per Op.
    let ledger = gitledger::Ledger::open(&root).unwrap();
    for i in 0..200 {
        ledger
            .append_line(
                &format!("local/runs__op{i:03}.jsonl"),
                r#"{"version":1,"op":"x"}"#,
                "seed",
            )
            .unwrap();
    }
    let appends: Vec<Duration> = (0..50)
        .map(|i| {
            let t = Instant::now();
            ledger
                .append_line(
                    "_gates/bench.jsonl",
                    &format!(r#"{{"version":1,"kind":"pending","op":"bench","gate":"g{i}"}}"#),
                    "bench append",
                )
                .unwrap();
            t.elapsed()
        })
        .collect();

    let mut s = serve(&root);
    s.roundtrip(INIT);
    let list = tool_call(1, "op-list", "{}");
    let first = s.roundtrip(&list);
    assert!(
        first.contains("op199") && first.contains("\\\"errors\\\": []"),
        "{}",
        &first[..first.len().min(400)]
    );
    let lists: Vec<Duration> = (0..30)
        .map(|_| {
            let t = Instant::now();
            let r = s.roundtrip(&list);
            let d = t.elapsed();
            assert!(r.contains("op199"));
            d
        })
        .collect();
    let run = tool_call(2, "op-run", r#"{"name":"one"}"#);
    for _ in 0..3 {
        s.roundtrip(&run);
    }
    let runs: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            let r = s.roundtrip(&run);
            let d = t.elapsed();
            assert!(r.contains("completed"), "{}", &r[..r.len().min(400)]);
            d
        })
        .collect();
    s.stop();
    let direct: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            let out = Command::new("sh")
                .args(["-c", "true"])
                .current_dir(&root)
                .output()
                .unwrap();
            assert!(out.status.success());
            t.elapsed()
        })
        .collect();

    report(
        "MCP op-list over 200 Ops, median",
        ms(median(lists.clone())),
        "ms",
        50.0,
        "",
    );
    println!(
        "{:<46} {:>9.3} ms",
        "MCP op-list over 200 Ops, p90",
        ms(p90(lists))
    );
    report(
        "one ledger append (200-file ledger), median",
        ms(median(appends.clone())),
        "ms",
        20.0,
        "(6 git processes: for-each-ref, cat-file --batch, hash-object, mktree --batch, commit-tree, update-ref)",
    );
    println!(
        "{:<46} {:>9.3} ms",
        "one ledger append, p90",
        ms(p90(appends))
    );
    let run_median = median(runs);
    let cmd_median = median(direct);
    report(
        "MCP op-run of a one-step shell Op, overhead",
        ms(run_median.saturating_sub(cmd_median)),
        "ms",
        30.0,
        &format!(
            "(op-run {:.3} ms - `sh -c true` {:.3} ms)",
            ms(run_median),
            ms(cmd_median)
        ),
    );
}

fn lint(scratch: &Path) {
    let big = scratch.join("lint-big");
    generate(&big);
    let mut runs = Vec::new();
    let mut last = String::new();
    for _ in 0..5 {
        let t = Instant::now();
        let out = Command::new(&*BIN)
            .args(["lint", "src"])
            .current_dir(&big)
            .output()
            .unwrap();
        runs.push(t.elapsed());
        last = String::from_utf8_lossy(&out.stdout).into_owned();
    }
    let summary = last.lines().last().unwrap_or_default().to_owned();
    assert!(summary.contains("warning"), "{summary}");
    report(
        "chant lint, 10,000 jobs / 100 files, median",
        ms(median(runs)),
        "ms",
        300.0,
        &format!("({summary})"),
    );
}

fn import(scratch: &Path) {
    let root = scratch.join("import");
    std::fs::create_dir_all(&root).unwrap();
    let stages = ["build", "test", "package", "review", "deploy"];
    let mut yaml = format!(
        "stages: [{}]\n\nvariables:\n  GIT_DEPTH: \"10\"\n\n.defaults: &defaults\n  image: node:22-alpine\n  tags: [docker]\n  retry: 2\n\n",
        stages.join(", ")
    );
    for i in 0..2000 {
        let stage = stages[i % stages.len()];
        yaml.push_str(&format!(
            "job-{i}:\n  <<: *defaults\n  stage: {stage}\n  script:\n    - npm ci\n    - npm run task-{i}\n  rules:\n    - if: $CI_COMMIT_BRANCH == \"main\"\n  artifacts:\n    paths: [out/{i}/]\n    expire_in: 1 day\n"
        ));
        if i >= stages.len() {
            yaml.push_str(&format!("  needs: [job-{}]\n", i - stages.len()));
        }
        yaml.push('\n');
    }
    std::fs::write(root.join(".gitlab-ci.yml"), &yaml).unwrap();
    let mut runs = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let out = Command::new(&*BIN)
            .args(["import", ".gitlab-ci.yml", "-o", "infra", "--force"])
            .current_dir(&root)
            .output()
            .unwrap();
        runs.push(t.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let files = std::fs::read_dir(root.join("infra")).unwrap().count();
    report(
        "chant import, 2,000-job pipeline, median",
        ms(median(runs)),
        "ms",
        200.0,
        &format!("({} KB of YAML, {files} files written)", yaml.len() / 1024),
    );
}

fn init(scratch: &Path) {
    let home = scratch.join("init-home");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let run = |dir: &Path| {
        let t = Instant::now();
        let out = Command::new(&*BIN)
            .arg("init")
            .arg(dir)
            .env("HOME", &home)
            .output()
            .unwrap();
        let took = t.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (took, String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (mut fresh, mut again) = (Vec::new(), Vec::new());
    for i in 0..20 {
        let dir = scratch.join(format!("init-{i}"));
        let (t, said) = run(&dir);
        assert!(said.contains("create chant.config.ts"), "{said}");
        fresh.push(t);
        let (t, said) = run(&dir);
        assert!(said.starts_with("Nothing to change"), "{said}");
        again.push(t);
    }
    report(
        "chant init, new project, median",
        ms(median(fresh)),
        "ms",
        50.0,
        "(files, git init, two MCP configs)",
    );
    report(
        "chant init, nothing to change, median",
        ms(median(again)),
        "ms",
        50.0,
        "",
    );
}

/// A git workspace with three `chant` members (gitlab, aws, temporal) and a decision kind
/// holding `n` records, each with two reviews and an evidence list.
fn workspace_tree(root: &Path, n: usize) {
    std::fs::create_dir_all(root.join("decisions")).unwrap();
    std::fs::write(
        root.join("chant.workspace.json"),
        r#"{"name": "bench", "schema": 1, "records": [{"kind": "decisions/decision.kind.mjs"}],
  "members": [{"name": "ci", "dir": "ci", "kind": "chant"}, {"name": "cloud", "dir": "cloud", "kind": "chant"},
              {"name": "flows", "dir": "flows", "kind": "chant"}]}"#,
    )
    .unwrap();
    for (dir, lexicon) in [("ci", "gitlab"), ("cloud", "aws"), ("flows", "temporal")] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        std::fs::write(
            root.join(dir).join("chant.config.ts"),
            format!("export default {{ lexicons: [\"{lexicon}\"] }};\n"),
        )
        .unwrap();
    }
    std::fs::write(
        root.join("decisions/decision.kind.mjs"),
        r#"export const recordKind = {
  name: "decision",
  location: { dir: ".", match: "^[a-z][a-z0-9]{0,15}-[0-9]{3,}-.+\\.md$" },
  format: "markdown-front-matter",
  schema: { id: "urn:bench:decision:1", path: "decision.schema.json" },
  idField: "id", stateField: "state",
  states: ["proposed", "decided", "ratified", "superseded", "withdrawn"],
  closedStates: ["ratified", "superseded"],
  supersedes: { field: "supersedes", key: "decision" },
  approval: { proposed: 0, withdrawn: 0, decided: 1, ratified: 2, superseded: 2 },
  pins: { field: "evidence" },
  reviews: { field: "reviews", decider: "decided_by", ratified: "ratified" },
  proposedBy: "proposed_by",
};
"#,
    )
    .unwrap();
    std::fs::write(
        root.join("decisions/decision.schema.json"),
        r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:bench:decision:1", "type": "object",
 "required": ["id", "title", "state"], "properties": {"id": {"type": "string", "pattern": "^[a-z][a-z0-9]*-[0-9]{3,}$"},
 "title": {"type": "string"}, "state": {"enum": ["proposed", "decided", "ratified", "superseded", "withdrawn"]},
 "decided_by": {"type": "string"}, "evidence": {"type": "array"}, "supersedes": {"type": "array"}, "reviews": {"type": "array"}}}"#,
    )
    .unwrap();
    for i in 1..=n {
        let supersedes = if i > 1 && i % 10 == 0 {
            format!("supersedes:\n  - decision: \"ws-{:04}\"\n", i - 1)
        } else {
            String::new()
        };
        std::fs::write(
            root.join(format!("decisions/ws-{i:04}-decision-number-{i}.md")),
            format!(
                "---\nid: \"ws-{i:04}\"\ntitle: \"Decision number {i}\"\nstate: \"decided\"\ndecided_by: \"lex\"\n{supersedes}evidence:\n  - title: \"spec\"\n    url: \"https://example.com/{i}\"\nreviews:\n  - reviewer: \"alice\"\n    verdict: \"agree\"\n    on: \"2026-12-03\"\n  - reviewer: \"bob\"\n    verdict: \"dissent\"\n    note: \"why\"\n    on: \"2026-12-03\"\n---\n\n# Decision number {i}\n\nSome body text for decision {i}.\n"
            ),
        )
        .unwrap();
    }
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(
        root,
        &[
            "-c",
            "user.email=b@example.com",
            "-c",
            "user.name=b",
            "commit",
            "-qm",
            "records",
        ],
    );
}

/// `chant workspace records --json` on 2,000 records (target 100 ms), and a server's cold
/// start at a workspace root with three members (target 10 ms).
fn workspace(scratch: &Path) {
    let root = scratch.join("workspace");
    workspace_tree(&root, 2000);
    let run = || {
        let t = Instant::now();
        let out = Command::new(&*BIN)
            .args(["workspace", "records", "--kind", "decision", "--json"])
            .current_dir(&root)
            .output()
            .unwrap();
        let d = t.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.len() > 2_000_000, "2,000 records printed");
        d
    };
    for _ in 0..3 {
        run();
    }
    let times: Vec<Duration> = (0..15).map(|_| run()).collect();
    report(
        "workspace records --json, 2,000 records",
        ms(median(times)),
        "ms",
        100.0,
        "issue 13",
    );
    let cold = cold_starts(&root);
    report(
        "serve mcp cold start at a workspace root, 3 members",
        ms(median(cold)),
        "ms",
        10.0,
        "issue 13",
    );
}
