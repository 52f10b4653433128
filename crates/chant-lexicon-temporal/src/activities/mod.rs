//! The Op activities the temporal lexicon runs on one machine. chant's own work (a build, a
//! snapshot, a digest diff, a command) is asked of the run's host; activities that drive a
//! tool fail as `ToolMissing` when it is not on PATH; the ones a lexicon of another product
//! provides are [`HINTS`]. One module per concern:
//! - `call`: what every activity reads of its call (args, choices, environment, tools);
//! - `build`: `chantBuild`, `chantTeardown`, `policyGate`;
//! - `http`: `httpCheck` and the GET the web-API activities share;
//! - `tools`: `kubectlApply`, `helmInstall`, `waitForReady`, `k3dUp`/`k3dDown`, the Floci
//!   emulators, `azGroupEnsure`/`azGroupDelete`;
//! - `lifecycle`: `lifecycleSnapshot`, `lifecycleDiff`;
//! - `apply`: `nativeApply`, `compensateApply`;
//! - `reconcile`: `reconcilePr`;
//! - `audit`: `workflowSupplyChainAudit`, `pipelineSupplyChainAudit`;
//! - `upgrade`: `lexiconUpgrade`.

mod apply;
mod audit;
mod build;
mod call;
mod http;
mod lifecycle;
mod reconcile;
mod tools;
mod upgrade;

use chant_core::lexicon::{Activity, ActivityHint};

/// Every activity this lexicon offers.
pub fn all() -> Vec<&'static dyn Activity> {
    let mut all: Vec<&'static dyn Activity> = vec![
        &build::ChantBuild,
        &build::ChantTeardown,
        &http::HttpCheck,
        &lifecycle::LifecycleSnapshot,
        &lifecycle::LifecycleDiff,
        &build::PolicyGate,
        &apply::NativeApply,
        &apply::CompensateApply,
        &reconcile::ReconcilePr,
        &audit::WorkflowAudit,
        &audit::PipelineAudit,
        &upgrade::LexiconUpgrade,
    ];
    all.extend(tools::TOOLS.iter().map(|t| t as &dyn Activity));
    all
}

/// The builders' activities that need a cloud API, and the lexicon that provides each.
pub const HINTS: [ActivityHint; 8] = [
    ActivityHint {
        activity: "waitForStack",
        provider: "aws",
    },
    ActivityHint {
        activity: "awsApply",
        provider: "aws",
    },
    ActivityHint {
        activity: "awsDelete",
        provider: "aws",
    },
    ActivityHint {
        activity: "azApply",
        provider: "azure",
    },
    ActivityHint {
        activity: "azDelete",
        provider: "azure",
    },
    ActivityHint {
        activity: "gcpApply",
        provider: "gcp",
    },
    ActivityHint {
        activity: "gcpDelete",
        provider: "gcp",
    },
    ActivityHint {
        activity: "gitlabPipeline",
        provider: "gitlab",
    },
];
