//! The temporal lexicon: Ops (`*.op.ts`) and their builders. The runtime module provides `Op`,
//! `phase`, `activity`, `gate`, `shell` and the activity shortcuts; Ops run through `chant-ops`,
//! which calls the activities this lexicon offers ([`activities`]).
//! The serializer writes the Temporal server's compose file, Helm values, setup script and
//! schedules ([`serialize`]).

mod activities;
mod checks;
mod serialize;

use std::sync::OnceLock;

use chant_core::discover::Discovery;
use chant_core::lexicon::{
    Activity, ActivityHint, Catalog, Finding, Lexicon, Serialized, catalog_module,
};

const CATALOG: &str = include_str!("../data/temporal.surface.json");
const RUNTIME: &str = include_str!("../runtime/temporal.ts");

const CONTEXT: &str = "## Ops (lexicon `temporal`)

An Op is a `*.op.ts` file whose default export is `Op({ name, overview, phases })`. Phases hold steps:
`shell(\"cmd\")`, `build(\"path\")`, `httpCheck(\"url\")`, `kubectlApply(\"manifest\")`, the other builders,
`activity(\"fn\", args, profile)`, and `gate(\"name\", { timeout, description })`. Run one with
`op-run` (or `chant run <op>` at a shell); a run that reaches a gate stops there until a person runs
`chant approve <op> <gate>`. `neverOverMcp: true` keeps an Op from being run or approved from here.
";

/// The temporal lexicon.
#[derive(Debug, Default)]
pub struct Temporal;

fn catalog() -> &'static Catalog {
    static C: OnceLock<Catalog> = OnceLock::new();
    C.get_or_init(|| {
        Catalog::from_surface_json(CATALOG).expect("the embedded temporal catalog parses")
    })
}

impl Lexicon for Temporal {
    fn name(&self) -> &'static str {
        "temporal"
    }

    fn version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    /// The root module for every subpath.
    fn runtime_subpath(&self, _subpath: &str) -> Option<String> {
        Some(String::new())
    }

    fn runtime_module(&self, subpath: &str) -> Option<String> {
        if !subpath.is_empty() {
            return None;
        }
        Some(catalog_module("temporal", RUNTIME, catalog(), &[]))
    }

    fn catalog(&self) -> &Catalog {
        catalog()
    }

    fn serialize(&self, d: &Discovery, entities: &[usize]) -> Option<Result<Serialized, String>> {
        Some(serialize::serialize(d, entities))
    }

    fn post_synth_checks(
        &self,
        d: &Discovery,
        entities: &[usize],
        _output: &chant_core::lexicon::Output,
    ) -> Vec<Finding> {
        checks::run(d, entities)
    }

    fn context(&self) -> &str {
        CONTEXT
    }

    fn activities(&self) -> Vec<&dyn Activity> {
        activities::all()
    }

    fn activity_hints(&self) -> &[ActivityHint] {
        &activities::HINTS
    }
}
