//! Importing existing templates: reading JSON or YAML into plain values. The gitlab importer
//! that turns a pipeline into chant TypeScript builds on this (see the issue notes for what is
//! still to come).

pub mod yaml_in;
