//! chant's project model.
//!
//! Owns the project and its typed, validated config ([`config`]), source discovery, the entity
//! model as plain Rust data and the evaluation budget ([`model`]), the permits that bound
//! concurrent project work ([`permits`]), naming, the dependency graph and its order, the
//! [`Lexicon`](lexicon::Lexicon) trait of optional capabilities and the
//! [`Registry`](lexicon::Registry) every lookup of a lexicon goes through, catalogs, build
//! orchestration, a project's lint setup ([`lint`]), importing templates ([`import`]),
//! explain, search and the composites catalog. It re-exports the walls ([`confine`]) and the
//! parse guards ([`parse_guard`]) its callers share. It knows nothing of QuickJS (an
//! [`Evaluator`](model::Evaluator) is handed in), of MCP or of git, and names no lexicon: every
//! lexicon comes to it through a registry.

pub mod build;
pub mod config;
pub mod discover;
pub mod explain;
pub mod import;
pub mod init;
pub mod knowledge;
pub mod lexicon;
pub mod lint;
pub mod model;
pub mod names;
pub mod permits;
pub mod project;
pub mod search;
pub mod session;

pub use ::confine;
pub use ::parse_guard;
