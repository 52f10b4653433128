//! chant's TypeScript evaluation.
//!
//! Owns type stripping with the `oxc` crates, the sandboxed QuickJS runtime (`rquickjs`: no
//! filesystem, network, process or environment access; a frozen clock and a seeded `Math.random`;
//! time and memory limits), module resolution (project files inside a boundary, plus runtime
//! modules embedded in the binary for `@intentius/chant` and `@intentius/chant-lexicon-<name>`),
//! and the one place where JavaScript values become `chant-core` data. It knows nothing of
//! serializers or MCP.

pub mod extract;
pub mod runtime;
pub mod strip;

pub use runtime::{CORE_SPECIFIER, EmbeddedModules, Engine, Limits};
