//! What the read commands print, in the reference CLI's shapes: `events` (the log's entries,
//! filtered), `history` (run summaries with what the reference derives when it prints them) and
//! `status` (the run with everything the reference's `status --json` derives around it). Data
//! only: they read, never write, and the command line decides how to show them.

pub mod decisions;
pub mod doctor;
pub mod events;
pub mod history;
pub mod status;
