//! placeholder
pub mod declaration;
pub mod digest;
pub mod error;
pub mod json;
pub mod kind;
pub mod quorum;
pub mod read;
pub mod tree;
pub mod trust;
