//! Expected failures at the core's boundaries, as typed errors.
//!
//! Bugs are assertions; these are the failures a user can cause: a bad configuration (named by
//! its key) or a bad request (named by its offset and length).

use std::fmt;

/// A configuration that cannot be run. `key` is the dotted config key at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self { key: key.into(), message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "config: {}", self.message)
        } else {
            write!(f, "config key `{}`: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// A host request the device cannot accept.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestError {
    /// The byte range ends past the device's logical capacity.
    OutOfRange { offset_bytes: u64, length_bytes: u64, capacity_bytes: u64 },
    /// The request arrives before simulated time already reached by an earlier arrival.
    TimeWentBackwards { arrival_ns: u64, previous_arrival_ns: u64 },
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { offset_bytes, length_bytes, capacity_bytes } => write!(
                f,
                "request [{offset_bytes}, +{length_bytes}) bytes ends past the device's logical \
                 capacity of {capacity_bytes} bytes"
            ),
            Self::TimeWentBackwards { arrival_ns, previous_arrival_ns } => write!(
                f,
                "request arrival time {arrival_ns} ns is earlier than the previous arrival \
                 {previous_arrival_ns} ns"
            ),
        }
    }
}

impl std::error::Error for RequestError {}
