//! Evaluation and the sandbox: modules, exports, declarables, and what code may not reach.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chant_core::model::{Budget, DeclId, DeclKind, Value};
use chant_js::{EmbeddedModules, Engine, Limits};

const LEXICON: &str = r#"
import { declarableClass, Tagged } from "@intentius/chant";
export const Job = declarableClass("test", "Test::Job", "Job", "resource", ["Id"]);
export const Image = declarableClass("test", "Test::Image", "Image", "property", []);
export function reference(...path: string[]) { return new Tagged("!reference", path); }
"#;

fn engine() -> Engine {
    let mut m = EmbeddedModules::new();
    m.add("@intentius/chant-lexicon-test", LEXICON);
    Engine::new(m, Limits::default())
}

/// Two seconds, no stop signal.
fn budget() -> Budget {
    Budget {
        time: Some(Duration::from_secs(2)),
        stop: None,
    }
}

fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        paths.push(p);
    }
    (dir, paths)
}

fn eval_one(src: &str) -> chant_core::model::Evaluation {
    let (dir, files) = project(&[("main.ts", src)]);
    engine().evaluate(dir.path(), &files, &budget())
}

fn error_of(src: &str) -> String {
    let e = eval_one(src);
    assert_eq!(e.errors.len(), 1, "{:?}", e.errors);
    e.errors[0].message.clone()
}

#[test]
fn exports_and_declarables_are_extracted() {
    let (dir, files) = project(&[
        (
            "images.ts",
            "import { Image } from \"@intentius/chant-lexicon-test\";\nexport const node: Image = new Image({ name: \"node:20\" });\n",
        ),
        (
            "jobs.ts",
            "import { Job, reference } from \"@intentius/chant-lexicon-test\";\nimport { node } from \"./images\";\nexport const build = new Job({ image: node, script: [\"make\"], x: undefined, n: null, r: reference(\".setup\", \"script\") });\nexport const test = new Job({ needs: [build], id: build.Id });\nexport default new Job({});\nexport const notDecl = { a: 1 };\n",
        ),
    ]);
    let e = engine().evaluate(dir.path(), &files, &budget());
    assert!(e.errors.is_empty(), "{:?}", e.errors);
    assert_eq!(e.decls.len(), 4);
    assert_eq!(e.decls[0].kind, DeclKind::Property);
    assert_eq!(e.decls[1].class_name, "Job");
    assert_eq!(
        e.modules[0].exports,
        vec![("node".into(), Value::Decl(DeclId(0)))]
    );
    let names: Vec<&str> = e.modules[1]
        .exports
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["build", "default", "notDecl", "test"]);
    let build = &e.decls[1].props;
    assert_eq!(build.get("image"), Some(&Value::Decl(DeclId(0))));
    assert_eq!(build.get("x"), Some(&Value::Undefined));
    assert_eq!(build.get("n"), Some(&Value::Null));
    assert_eq!(
        build.get("r"),
        Some(&Value::Tagged {
            tag: "!reference".into(),
            value: Box::new(Value::Array(vec![
                Value::String(".setup".into()),
                Value::String("script".into())
            ]))
        })
    );
    assert_eq!(
        e.decls[2].props.get("id"),
        Some(&Value::AttrRef {
            decl: DeclId(1),
            attribute: "Id".into()
        })
    );
}

#[test]
fn the_clock_and_randomness_are_deterministic() {
    let src = "export const t = Date.now();\nexport const d = new Date().toISOString();\nexport const r = [Math.random(), Math.random()];\nexport const env = process.env.HOME ?? \"none\";\nexport const perf = typeof performance;\n";
    let a = eval_one(src);
    let b = eval_one(src);
    assert_eq!(
        a.modules,
        b.modules
            .iter()
            .map(|m| {
                let mut m = m.clone();
                m.file = a.modules[0].file.clone();
                m
            })
            .collect::<Vec<_>>()
    );
    let ex = &a.modules[0].exports;
    let get = |n: &str| ex.iter().find(|(k, _)| k == n).unwrap().1.clone();
    assert_eq!(get("t"), Value::Number(0.0));
    assert_eq!(get("d"), Value::String("1970-01-01T00:00:00.000Z".into()));
    assert_eq!(get("env"), Value::String("none".into()));
    assert_eq!(get("perf"), Value::String("undefined".into()));
}

#[test]
fn host_access_is_refused() {
    for (src, needle) in [
        (
            "import { readFileSync } from \"fs\";\nexport const x = readFileSync(\"/etc/passwd\");\n",
            "Cannot find module 'fs'",
        ),
        (
            "import cp from \"node:child_process\";\nexport const y = cp;\n",
            "Cannot find module 'node:child_process'",
        ),
        (
            "export const x = require(\"fs\");\n",
            "require is not defined",
        ),
        (
            "export const x = fetch(\"http://127.0.0.1/\");\n",
            "fetch is not defined",
        ),
        (
            "process.env.X = \"1\";\nexport const x = process.env.X;\n",
            "",
        ),
        (
            "import { a } from \"../outside\";\nexport const b = a;\n",
            "outside the project",
        ),
    ] {
        let e = eval_one(src);
        if needle.is_empty() {
            // Writing to the frozen environment is silently ignored in sloppy mode, an error in
            // strict (module) mode; either way nothing leaks.
            assert!(
                e.errors.len() == 1 || e.modules[0].exports[0].1 == Value::Undefined,
                "{e:?}"
            );
            continue;
        }
        assert_eq!(e.errors.len(), 1, "{src}: {:?}", e);
        assert!(
            e.errors[0].message.contains(needle),
            "{src}: {}",
            e.errors[0].message
        );
    }
}

#[test]
fn errors_name_file_line_and_column() {
    let msg = error_of(
        "type T = { a: string };\n\nexport const x: T = { a: \"1\" };\nthrow new Error(\"boom\");\n",
    );
    assert!(
        msg.ends_with("main.ts:4:1: boom") || msg.contains("main.ts:4:"),
        "{msg}"
    );
    let msg = error_of("export const a = {\n  b: 1,,\n};\n");
    assert!(msg.contains("main.ts:2:"), "{msg}");
}

#[test]
fn an_infinite_loop_is_stopped() {
    let t = Instant::now();
    let msg = error_of("while (true) {}\n");
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(msg.contains("exceeded its 2 s budget"), "{msg}");
}

#[test]
fn runaway_allocation_is_stopped() {
    let mut m = EmbeddedModules::new();
    m.add("@intentius/chant-lexicon-test", LEXICON);
    let engine = Engine::new(
        m,
        Limits {
            memory_bytes: 64 << 20,
            ..Limits::default()
        },
    );
    let (dir, files) = project(&[(
        "main.ts",
        "const a: string[] = [];\nwhile (true) { a.push(\"x\".repeat(1000000) + a.length); }\n",
    )]);
    let e = engine.evaluate(dir.path(), &files, &budget());
    assert_eq!(e.errors.len(), 1, "{e:?}");
    assert!(
        e.errors[0].message.contains("memory limit"),
        "{}",
        e.errors[0].message
    );
}

#[test]
fn deep_recursion_is_an_error_not_a_crash() {
    let msg = error_of(
        "function f(n: number): number { return f(n + 1) + 1; }\nexport const x = f(0);\n",
    );
    assert!(msg.to_lowercase().contains("stack"), "{msg}");
}

#[test]
fn a_failing_file_does_not_stop_the_others() {
    let (dir, files) = project(&[
        ("a.ts", "throw new Error(\"a fails\");\n"),
        ("b.ts", "export const ok = 1;\n"),
    ]);
    let e = engine().evaluate(dir.path(), &files, &budget());
    assert_eq!(e.errors.len(), 1);
    assert_eq!(e.modules.len(), 1);
    assert_eq!(e.modules[0].file, files[1]);
}

#[test]
fn config_default_export() {
    let (dir, files) = project(&[(
        "chant.config.ts",
        "import type { ChantConfig } from \"@intentius/chant\";\nexport default { lexicons: [\"gitlab\"] } satisfies ChantConfig;\n",
    )]);
    let v = engine()
        .default_export(dir.path(), &files[0], &budget())
        .unwrap();
    assert_eq!(v, serde_json::json!({"lexicons": ["gitlab"]}));
    let _ = Path::new("");
}

/// Evaluates `files` with `time`, returning the evaluation and how long it took.
fn timed(files: &[(&str, &str)], time: Duration) -> (chant_core::model::Evaluation, Duration) {
    let (dir, paths) = project(files);
    let b = Budget {
        time: Some(time),
        stop: None,
    };
    let t = Instant::now();
    let e = engine().evaluate(dir.path(), &paths, &b);
    (e, t.elapsed())
}

#[test]
fn one_budget_covers_every_file() {
    let spin = "while (true) {}\n";
    let (e, took) = timed(
        &[
            ("a.ts", spin),
            ("b.ts", spin),
            ("c.ts", spin),
            ("d.ts", spin),
        ],
        Duration::from_millis(500),
    );
    assert!(
        took < Duration::from_millis(1500),
        "four looping files took {took:?}"
    );
    assert!(
        e.errors
            .iter()
            .any(|x| x.message.contains("exceeded its 0.5 s budget")),
        "{e:?}"
    );
    assert!(e.modules.is_empty() && e.decls.is_empty());
}

#[test]
fn javascript_run_while_values_are_read_back_is_bounded_too() {
    for (what, src) in [
        (
            "a Proxy get trap",
            "export const v = new Proxy({}, { get() { for (;;) {} }, ownKeys() { for (;;) {} } });\n",
        ),
        (
            "a Proxy ownKeys trap",
            "export const v = new Proxy({}, { ownKeys() { for (;;) {} } });\n",
        ),
        (
            "a getter",
            "export const v = { get x() { for (;;) {} } };\n",
        ),
        (
            "a getter on a declarable's props",
            "import { Job } from \"@intentius/chant-lexicon-test\";\nexport const j = new Job({ variables: { get A() { for (;;) {} } } });\n",
        ),
        (
            "a Proxy as a declarable's props",
            "import { Job } from \"@intentius/chant-lexicon-test\";\nexport const j = new Job({ variables: new Proxy({}, { get() { for (;;) {} }, ownKeys() { for (;;) {} } }) });\n",
        ),
    ] {
        let (e, took) = timed(&[("main.ts", src)], Duration::from_millis(300));
        assert!(took < Duration::from_millis(1300), "{what}: {took:?}");
        assert!(
            e.errors.iter().any(|x| x.message.contains("budget")),
            "{what}: {e:?}"
        );
    }
}

#[test]
fn a_stop_signal_interrupts_an_evaluation_in_progress() {
    let (dir, paths) = project(&[("main.ts", "while (true) {}\n")]);
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let f = std::sync::Arc::clone(&flag);
    let b = Budget {
        time: Some(Duration::from_secs(60)),
        stop: Some(std::sync::Arc::new(move || {
            f.load(std::sync::atomic::Ordering::SeqCst)
        })),
    };
    let setter = std::sync::Arc::clone(&flag);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        setter.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let t = Instant::now();
    let e = engine().evaluate(dir.path(), &paths, &b);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(e.errors[0].message.contains("stopped"), "{e:?}");
}

#[test]
fn a_forged_declarable_marker_is_an_error_not_a_crash() {
    for src in [
        "export const v = { __chant: 7 };\n",
        "export const v = new Proxy({}, { get: (_t, k) => (k === \"__chant\" ? 4294967295 : undefined) });\n",
        "import { Job } from \"@intentius/chant-lexicon-test\";\nexport const j = new Job({ needs: [{ __chant: 99 }] });\n",
    ] {
        let e = eval_one(src);
        assert!(
            e.errors
                .iter()
                .any(|x| x.message.contains("claims to be declarable")),
            "{src}: {e:?}"
        );
        assert!(e.modules.is_empty() && e.decls.is_empty());
    }
}

#[test]
fn shared_references_cannot_blow_up_what_is_read_back() {
    // 2^40 leaves once every shared reference is copied.
    let src =
        "let v: any = [\"x\"];\nfor (let i = 0; i < 40; i++) v = [v, v];\nexport const big = v;\n";
    let (e, took) = timed(&[("main.ts", src)], Duration::from_secs(10));
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        e.errors.iter().any(|x| x.message.contains("MiB once read")),
        "{e:?}"
    );
}

#[test]
fn imports_resolve_symlinks_before_the_boundary_check() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.ts"),
        "export const s = \"outside\";\n",
    )
    .unwrap();
    let (dir, files) = project(&[(
        "main.ts",
        "import { s } from \"./link/secret\";\nexport const v = s;\n",
    )]);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
    let e = engine().evaluate(dir.path(), &files, &budget());
    assert_eq!(e.errors.len(), 1, "{e:?}");
    assert!(
        e.errors[0].message.contains("outside the project"),
        "{}",
        e.errors[0].message
    );
    let abs = format!(
        "import {{ s }} from \"{}\";\nexport const v = s;\n",
        outside.path().join("secret.ts").display()
    );
    let e = eval_one(&abs);
    assert!(e.errors[0].message.contains("outside the project"), "{e:?}");
}

#[test]
fn built_ins_that_never_ask_the_interrupt_handler_are_bounded() {
    for src in [
        "export const v = Array.prototype.join.call({ length: 2 ** 53 - 1 }, \"\");\n",
        "export const v = Array.prototype.reverse.call({ length: 2 ** 53 - 1 });\n",
        "export const v = Array.prototype.copyWithin.call({ length: 2 ** 53 - 1 }, 0, 1);\n",
        "export const v = Array.prototype.shift.call({ length: 2 ** 53 - 1 });\n",
        "export const v = Array.prototype.unshift.call({ length: 2 ** 53 - 2 }, 1);\n",
        "export const v = Array.prototype.sort.call({ length: 2 ** 32 - 1 });\n",
        "export const v = Array.prototype.flat.call({ length: 2 ** 53 - 1 });\n",
        "export const v = Array.prototype.toString.call({ length: 2 ** 53 - 1, join: Array.prototype.join });\n",
        "export const v = String(new Array(2 ** 32 - 1));\n",
        "const keys = Array.from({ length: 200000 }, (_, i) => \"k\" + i);\nexport const v = Reflect.ownKeys(new Proxy({}, { ownKeys() { return keys; } }));\n",
        "export const v = typeof Atomics === \"undefined\" ? (() => { for (;;) {} })() : Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);\n",
    ] {
        let (e, took) = timed(&[("main.ts", src)], Duration::from_millis(300));
        assert!(took < Duration::from_millis(1200), "{src}: {took:?}");
        assert_eq!(e.errors.len(), 1, "{src}: {e:?}");
    }
}

#[test]
fn source_nested_too_deeply_is_an_error_not_a_crash() {
    let src = format!(
        "export const a = {}{};\n",
        "[".repeat(20_000),
        "]".repeat(20_000)
    );
    let e = eval_one(&src);
    assert!(
        e.errors[0].message.contains("nested more than 1000 levels"),
        "{e:?}"
    );
    // Long operator chains recurse in the parser too; the parse stack holds them.
    let src = format!(
        "export const b = {}1;\n",
        "-".repeat(50_000).replace("--", "- -")
    );
    let e = eval_one(&src);
    assert!(e.modules.len() + e.errors.len() == 1, "{e:?}");
}

#[test]
fn guards_cannot_be_answered_one_length_and_called_with_another() {
    for src in [
        "const x = new Array(2 ** 24);\nexport const v = new Array(2 ** 20).fill(x).flat();\n",
        "let c = 0;\nexport const v = Array.prototype.fill.call({ get length() { return c++ ? 2 ** 53 - 1 : 0; } }, 1);\n",
        "let c = 0;\nexport const v = Array.prototype.join.call(new Proxy({}, { get: (_t, k) => (k === \"length\" ? (c++ ? 2 ** 53 - 1 : 0) : undefined) }));\n",
        "export const v = Array.prototype.join.call(Object.create(new Proxy({}, { get: () => 2 ** 53 - 1 })));\n",
        "export const v = Array.from({ length: 2 ** 32 - 1 });\n",
    ] {
        let (e, took) = timed(&[("main.ts", src)], Duration::from_millis(300));
        assert!(took < Duration::from_millis(1200), "{src}: {took:?}");
        assert_eq!(e.errors.len(), 1, "{src}: {e:?}");
    }
    // Ordinary use still works.
    let e = eval_one(
        "export const v = [[1], [2, [3]]].flat(2).join(\",\") + Array.from({ length: 3 }, (_, i) => i).join(\"\") + [3, 1, 2].sort().toString();\n",
    );
    assert!(e.errors.is_empty(), "{e:?}");
    assert_eq!(
        e.modules[0].exports[0].1,
        Value::String("1,2,30121,2,3".into())
    );
}

#[test]
fn a_length_that_is_not_a_plain_number_and_huge_sparse_arrays_are_refused() {
    for src in [
        "(Object.prototype as any).value = 1;\nlet c = 0;\nconst o: any = { get length() { return c++ === 0 ? 1 : 2 ** 53 - 1; } };\nObject.setPrototypeOf(o, Array.prototype);\nexport const v = o.join(\"\");\n",
        "let c = 0;\nconst o: any = { length: { valueOf() { return c++ === 0 ? 1 : 2 ** 53 - 1; } } };\nexport const v = Array.prototype.join.call(o, \"\");\n",
        "const a: any[] = [];\na.length = 2 ** 32 - 1;\nexport const v = JSON.stringify(a);\n",
        "const a: any[] = [];\na.length = 2 ** 32 - 1;\nexport const v = JSON.stringify([a]);\n",
        "const a: any[] = [];\na.length = 2 ** 32 - 2;\nexport const v = [].concat(a);\n",
        "const a: any[] = [];\na.length = 2 ** 32 - 1;\nexport const v = a.slice(0);\n",
        "const a: any[] = [];\na.length = 2 ** 32 - 1;\nexport const v = a.splice(0, 0, 1);\n",
        "const a: any[] = [];\na.length = 2 ** 32 - 1;\nexport const x = { a };\n",
    ] {
        let (e, took) = timed(&[("main.ts", src)], Duration::from_millis(300));
        assert!(took < Duration::from_millis(1200), "{src}: {took:?}");
        assert_eq!(e.errors.len(), 1, "{src}: {e:?}");
        assert!(!e.errors[0].message.contains("left behind"), "{src}: {e:?}");
        assert!(!e.errors[0].message.contains("crashed"), "{src}: {e:?}");
    }
    let e = eval_one(
        "export const v = JSON.stringify({ a: [1, [2]], b: \"x\" }) + [1].concat([2], 3).slice(1).join();\n",
    );
    assert!(e.errors.is_empty(), "{e:?}");
}
