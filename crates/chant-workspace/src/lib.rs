//! chant's workspaces: the declaration (`chant.workspace.json` or `.jsonc`, found walking up to
//! the git root and judged by its published schema, compiled when chant is built), record kinds
//! (data-only modules read through the caller's [`kind::ModuleReader`]), the records read
//! (parse, schema, ids, supersession, evidence pins, digest, quorum, closing seals, ssh seals,
//! review sessions, provenance, with trust and quorum read at the base revision), what changed
//! between two revisions, `ls`, the record writes with every refusal, and where a member's
//! entries go on the `chant/lifecycle` ledger. It returns plain JSON documents that follow the
//! schemas in `schemas/`, the reference's own.
//!
//! It knows no JavaScript (kind files are evaluated by whoever implements `ModuleReader`), no
//! MCP (the server adds its channel rules on top: `Source`), no command line and no lexicon.
//! Reads may ask git about the tree (a commit's files, the base revision, signatures) and
//! `ssh-keygen` about seals; writes never run git.
//!
//! By stage: [`json`], [`frontmatter`] and [`digest`] read text; [`principal`] compares names;
//! [`declaration`], [`kind`] and [`trust`] read what judges records; [`seal`] makes and checks
//! ssh seals; [`read`] and [`quorum`] judge records; [`ls`] (with [`jobs`]), [`records`] and
//! [`since`] make the read documents and [`mod@write`] the writes; [`ledger`] places a member's
//! ledger entries; [`tree`] is the working tree or a commit under all of them.

pub mod declaration;
pub mod digest;
pub mod error;
pub mod frontmatter;
pub mod jobs;
pub mod json;
pub mod kind;
pub mod ledger;
pub mod ls;
pub mod principal;
pub mod quorum;
pub mod read;
pub mod records;
pub mod seal;
pub mod since;
pub mod tree;
pub mod trust;
pub mod write;
