//! YAML for chant, in and out.
//!
//! Owns reading YAML into JSON values ([`read`]: anchors, aliases and merge keys expanded, plain
//! scalars by the YAML 1.2 core schema, bounded against alias bombs) and writing YAML in two
//! styles: [`gitlab`], byte-compatible with the GitLab lexicon's reference (its own quoting, `|`
//! blocks, `!reference` tags), and [`safe`], whose output always reads back to the JSON it was
//! made from under the YAML 1.2 core schema (and under YAML 1.1 readers too), for outputs such
//! as CloudFormation and Kubernetes manifests. It knows nothing of lexicons, projects or MCP: it
//! turns values into text and back.

pub mod gitlab;
pub mod read;
pub mod safe;
