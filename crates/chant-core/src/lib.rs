//! chant's project model.
//!
//! Owns the project and its typed, validated config ([`config`]), the walls every path chant
//! reads or writes on a project's behalf goes through ([`confine`]), source discovery, the
//! entity model as plain Rust data and the evaluation budget ([`model`]), the guards that keep
//! parsing within a stack ([`parse_guard`]), the permits that bound concurrent project work
//! ([`permits`]), naming, the dependency graph and its order, the [`Lexicon`](lexicon::Lexicon)
//! trait, catalogs, build orchestration, explain, search and the composites catalog. It knows
//! nothing of QuickJS (an [`Evaluator`](model::Evaluator) is handed in), of MCP or of git.

pub mod build;
pub mod config;
pub mod confine;
pub mod discover;
pub mod explain;
pub mod knowledge;
pub mod lexicon;
pub mod model;
pub mod parse_guard;
pub mod permits;
pub mod project;
pub mod session;
