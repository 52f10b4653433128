//! The Model Context Protocol, server side, over a line-framed byte stream (stdio).
//!
//! This crate owns everything on the wire: JSON-RPC 2.0 framing (one JSON value per line, lines
//! up to 16 MiB, `-32700`/`-32600` for what is not a request), the five protocol revisions and
//! their per-request negotiation (the 2026-07-28 `_meta` envelope with fallback to the
//! `initialize` handshake, `-32022` for unsupported versions), `server/discover`, the revision-gated
//! result fields (`title`, `annotations`, `structuredContent`, `resultType`, `ttlMs`,
//! `cacheScope`), the tool/resource registry with its result conventions (pretty JSON text plus
//! `structuredContent`, `isError` texts, panic isolation), cancellation, progress, a bounded
//! worker pool with a single writer, batching on 2025-03-26 sessions, and the drain on EOF.
//! Text blocks are rendered exactly as JavaScript's `JSON.stringify` would (crate `canon`).
//!
//! It knows nothing of chant, AgentXchain or any particular tool: products hand it a
//! [`ServerBuilder`] full of [`Tool`]s and a resource reader, and call [`Server::serve_stdio`].

mod args;
mod context;
mod output;
mod pool;
mod registry;
mod server;
mod version;

pub use args::Args;
pub use context::{CancelToken, EOF_GRACE, RequestContext};
pub use registry::{
    Arguments, Resource, ResourceContents, ResourceError, ResourceReader, ResourceTemplate, Tool,
    ToolAnnotations, ToolError, ToolHandler, ToolOutput,
};
pub use server::{MAX_LINE_BYTES, NotFoundCode, Server, ServerBuilder, ServerInfo, codes};
pub use version::ProtocolVersion;
