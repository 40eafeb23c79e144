//! Helpers shared by the recovery test files (each `tests/*.rs` is its own crate and includes
//! this module with `mod common;`).

// Each test crate uses only part of the helpers; the rest would warn as dead code there.
#![allow(dead_code)]

pub mod tracked;
