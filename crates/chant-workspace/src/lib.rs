//! placeholder
pub mod declaration;
pub mod digest;
pub mod error;
pub mod json;
pub mod kind;
pub mod ls;
pub mod quorum;
pub mod read;
pub mod records;
pub mod tree;
pub mod trust;
pub mod write;
