//! `lexiconUpgrade` (LexiconUpgradeOp): in the TypeScript chant it regenerates a lexicon's
//! source tree (`lexicons/<name>`) from a newer upstream spec with that chant's codegen and
//! opens a pull request. This chant's lexicons are compiled into the binary, generated from
//! the catalogs it was built with: there is no lexicon source tree to regenerate, and a newer
//! spec arrives with a newer chant. The activity says so and is never retried.

use chant_core::lexicon::{Activity, ActivityCall, ActivityError};
use serde_json::Value as Json;

use super::call::required;

/// The lexicons whose upstream spec a LexiconUpgradeOp tracks (the runtime's
/// `IN_SCOPE_LEXICONS`).
const IN_SCOPE: [&str; 9] = [
    "k8s", "gcp", "docker", "gitlab", "aws", "azure", "github", "fly", "cedar",
];

/// `lexiconUpgrade {lexicon, lexiconDir?, mode?}`.
pub struct LexiconUpgrade;

impl Activity for LexiconUpgrade {
    fn name(&self) -> &'static str {
        "lexiconUpgrade"
    }

    fn run(&self, call: &ActivityCall<'_>) -> Result<Json, ActivityError> {
        let lexicon = required(call, "lexiconUpgrade", "lexicon")?;
        if !IN_SCOPE.contains(&lexicon) {
            return Err(ActivityError::new(
                "InvalidArgs",
                format!(
                    "lexiconUpgrade: \"{lexicon}\" is not in scope. In-scope lexicons: {}",
                    IN_SCOPE.join(", ")
                ),
            ));
        }
        Err(ActivityError::new(
            "InvalidArgs",
            format!(
                "lexiconUpgrade regenerates a lexicon's source tree from its upstream spec with the TypeScript chant's codegen; this chant's {lexicon} lexicon is built into the binary (chant {}), so there is no source tree to regenerate: a newer {lexicon} spec arrives with a newer chant",
                env!("CARGO_PKG_VERSION")
            ),
        ))
    }
}
