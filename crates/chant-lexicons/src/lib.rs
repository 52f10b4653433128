//! The lexicons this chant embeds: one line each, in delivery order. The only place in the
//! workspace that names lexicon crates; every other crate finds a lexicon through the
//! [`Registry`] this returns.

use chant_core::lexicon::Registry;

/// Every embedded lexicon.
pub fn registry() -> Registry {
    Registry::new(vec![
        Box::new(chant_lexicon_gitlab::Gitlab),
        Box::new(chant_lexicon_aws::Aws),
        Box::new(chant_lexicon_temporal::Temporal),
    ])
}
