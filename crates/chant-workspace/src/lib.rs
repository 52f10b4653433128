//! chant's workspaces: the declaration (`chant.workspace.json` or `.jsonc`, found walking up to
//! the git root and judged by its published schema), record kinds (data-only modules read
//! through the caller's [`kind::ModuleReader`]), the records read (parse, schema, ids,
//! supersession, evidence pins, digest, quorum, closing seals, provenance with trust read at the
//! base revision), `ls`, and the record writes with every refusal. It returns plain JSON
//! documents that follow the schemas in `schemas/`, the reference's own.
//!
//! It knows no JavaScript (kind files are evaluated by whoever implements `ModuleReader`), no
//! MCP (the server adds its channel rules on top: `Source`), no command line and no lexicon.
//! Reads may ask git about the tree (a commit's files, the base revision, signatures); writes
//! never run git.
//!
//! By stage: [`json`] and [`digest`] read text; [`declaration`], [`kind`] and [`trust`] read what
//! judges records; [`read`] and [`quorum`] judge them; [`ls`] and [`records`] make the read
//! documents and [`mod@write`] the writes; [`tree`] is the working tree or a commit under all of them.

pub mod declaration;
pub mod digest;
pub mod error;
pub mod frontmatter;
pub mod jobs;
pub mod json;
pub mod kind;
pub mod ledger;
pub mod ls;
pub mod quorum;
pub mod read;
pub mod records;
pub mod seal;
pub mod since;
pub mod tree;
pub mod trust;
pub mod write;
