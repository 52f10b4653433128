//! Property test: hostile JavaScript values (Proxies whose traps throw, loop, allocate or lie;
//! getters that register declarables while they are read; forged markers; cycles; odd numbers
//! and strings) fed through evaluation, extraction, discovery, build, explain and lint. Nothing
//! may panic and every call must return.
//!
//! `cargo test -p chant --test hostile_values` runs 64 cases; `CHANT_HOSTILE_CASES=N` runs N
//! (the issue 9 run: see docs/testing.md).

use std::path::Path;
use std::time::Duration;

use chant_core::build::Format;
use chant_core::model::Budget;
use chant_core::session::Chant;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn chant() -> Chant {
    let lexicons = std::sync::Arc::new(chant_lexicons::registry());
    let engine = chant_js::Engine::new(
        chant_js::EmbeddedModules::with_lexicons(std::sync::Arc::clone(&lexicons)),
        chant_js::Limits {
            memory_bytes: 64 << 20,
            extract_bytes: 16 << 20,
            ..chant_js::Limits::default()
        },
    );
    Chant {
        lexicons,
        evaluator: Box::new(engine),
    }
}

/// JavaScript expressions, built from hostile atoms.
fn expr() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just("1".to_owned()),
        Just("NaN".to_owned()),
        Just("-0".to_owned()),
        Just("1e308 * 10".to_owned()),
        Just("4294967296".to_owned()),
        Just("-1".to_owned()),
        Just("10n".to_owned()),
        Just("\"\\ud800 lone surrogate\"".to_owned()),
        Just("\"x\".repeat(1 << 16)".to_owned()),
        Just("null".to_owned()),
        Just("undefined".to_owned()),
        Just("Symbol(\"s\")".to_owned()),
        Just("(() => 1)".to_owned()),
        Just("new Date()".to_owned()),
        Just("new Map([[1, 2]])".to_owned()),
        Just("new Uint8Array(4)".to_owned()),
        Just("Object.create(null)".to_owned()),
        Just("[, , 1]".to_owned()),
        Just("{ __chant: 0 }".to_owned()),
        Just("{ __chant: 1e9 }".to_owned()),
        Just("{ __chant: -3 }".to_owned()),
        Just("{ __chant: \"attr\", parent: {}, attribute: 1 }".to_owned()),
        Just("{ __chant: \"attr\", parent: { __chant: 99 }, attribute: \"Arn\" }".to_owned()),
        Just("{ __chant: \"tagged\", tag: {}, value: 1 }".to_owned()),
        Just("{ __chant: \"intrinsic\", name: null, args: [] }".to_owned()),
        Just("{ __chant: \"composite\", members: 5 }".to_owned()),
        Just("{ __chant: \"composite\", compositeName: 7, members: { a: new Job({}) } }".to_owned()),
        Just("{ get a() { throw new Error(\"getter\"); } }".to_owned()),
        Just("{ get a() { for (;;) {} } }".to_owned()),
        Just("{ get a() { return new Job({ stage: \"x\" }); } }".to_owned()),
        Just("{ get a() { const x = []; for (let i = 0; i < 1e6; i++) x.push({ i }); return x.length; } }".to_owned()),
        Just("new Proxy({}, { get() { throw 1; } })".to_owned()),
        Just("new Proxy({}, { ownKeys() { return [\"a\", \"a\", 1]; } })".to_owned()),
        Just("new Proxy({}, { ownKeys() { return [\"k\"]; }, getOwnPropertyDescriptor() { return { value: 1, enumerable: true, configurable: true }; } })".to_owned()),
        Just("new Proxy({}, { get: (_t, k) => (k === \"__chant\" ? 2 : new Job({})) })".to_owned()),
        Just("new Proxy({}, { get: (_t, k) => (k === \"__chant\" ? \"attr\" : undefined) })".to_owned()),
        Just("new Proxy([], { get: (t, k) => (k === \"length\" ? 1e9 : undefined) })".to_owned()),
        Just("new Proxy({}, { ownKeys() { for (;;) {} } })".to_owned()),
        Just("(() => { const o: any = {}; o.self = o; return o; })()".to_owned()),
        Just("(() => { let v: any = [1]; for (let i = 0; i < 30; i++) v = [v, v]; return v; })()".to_owned()),
        Just("new Job({})".to_owned()),
        Just("new Job({ stage: \"test\", script: [\"make\"] })".to_owned()),
    ];
    atom.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(("[a-z]{1,3}", inner.clone()), 0..4).prop_map(|v| {
                let body: Vec<String> = v.into_iter().map(|(k, e)| format!("{k}: {e}")).collect();
                format!("{{ {} }}", body.join(", "))
            }),
            inner.clone().prop_map(|e| format!(
                "new Job({{ stage: \"test\", script: [\"x\"], variables: {e} }})"
            )),
            inner
                .clone()
                .prop_map(|e| format!("new Job({{ needs: [{e}] }})")),
            inner.prop_map(|e| format!(
                "{{ toJSON() {{ return {e}; }}, valueOf() {{ for (;;) {{}} }} }}"
            )),
        ]
    })
}

fn program() -> impl Strategy<Value = String> {
    prop::collection::vec(expr(), 1..4).prop_map(|exprs| {
        let mut src = String::from("import { Job } from \"@intentius/chant-lexicon-gitlab\";\n");
        for (i, e) in exprs.iter().enumerate() {
            src.push_str(&format!("export const v{i}: any = {e};\n"));
        }
        src
    })
}

fn exercise(chant: &Chant, root: &Path, src: &str) {
    std::fs::write(root.join("hostile.ts"), src).unwrap();
    let budget = Budget {
        time: Some(Duration::from_millis(300)),
        stop: None,
    };
    let Ok(project) = chant.locate(root, &budget) else {
        return;
    };
    for format in [Format::Json, Format::Yaml] {
        let (d, _) = chant.build(&project, format, None, &budget);
        let _ = chant_core::explain::markdown(&d);
        let _ = chant_core::explain::json_with_knowledge(&d, project.dir());
    }
    if let Ok(setup) = chant_core::lint::setup(&chant.lexicons, &project, root, &[]) {
        let _ = setup.linter().lint(&setup.files);
    }
}

#[test]
fn hostile_values_never_panic() {
    let cases: u32 = std::env::var("CHANT_HOSTILE_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(64);
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("chant.config.json"), r#"{"lexicons":["gitlab"]}"#).unwrap();
    let chant = chant();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let started = std::time::Instant::now();
    runner
        .run(&program(), |src| {
            exercise(&chant, &root, &src);
            Ok(())
        })
        .unwrap();
    eprintln!(
        "{cases} hostile programs in {:.1} s, no panic",
        started.elapsed().as_secs_f64()
    );
}
