//! Resume: rebuild a stored conversation the way Claude Code does.
//!
//! Pure functions over transcript records (`serde_json::Value`, one JSON
//! object per JSONL line, in file order), ported from the resume oracle's
//! reference model (`oracle/tool/apiview.py`, rules R1–R24 of the oracle
//! README) for Claude Code 2.1.332:
//!
//! * [`chain`]: which records form the conversation (R1–R3, R18);
//! * [`repair`]: load-time repairs (R11, R12, R17, R19) and the interruption
//!   state;
//! * [`api`]: the API `messages` view (R4–R10, R13–R15) and the entry points
//!   [`api_view`] / [`load_conversation`];
//! * [`mod@validate`]: a checker for the Messages API's structural rules.

pub mod api;
pub mod chain;
pub mod repair;
mod util;
pub mod validate;

pub use api::{api_view, load_conversation, normalize, ApiOptions, Conversation};
pub use chain::{build_chain, build_chain_from, pick_leaf, ChainError};
pub use repair::{Interruption, Repair, RepairKind};
pub use validate::{validate, Violation, ViolationKind};
