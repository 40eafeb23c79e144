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
    /// A payload buffer whose length is not the request's length.
    PayloadLength { expected_bytes: u64, got_bytes: u64 },
    /// The storage behind the simulated flash failed (e.g. an I/O error on the image file).
    Media(MediaError),
    /// A write to a device worn out beyond use: too few good blocks remain (`[wear]`
    /// endurance). Reads still work.
    WornOut { retired_blocks: u32, host_write_bytes: u64 },
    /// Simulated time would pass what u64 nanoseconds hold (584 years).
    TimeOverflow { start_ns: u64, service_ns: u64 },
}

/// A failure of the storage behind a `Media` (file I/O of a payload-storing media). The
/// metadata-only media never fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaError(pub String);

impl fmt::Display for MediaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "media: {}", self.0)
    }
}

impl std::error::Error for MediaError {}

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
            Self::PayloadLength { expected_bytes, got_bytes } => write!(
                f,
                "payload buffer of {got_bytes} bytes for a request of {expected_bytes} bytes"
            ),
            Self::Media(e) => write!(f, "{e}"),
            Self::TimeOverflow { start_ns, service_ns } => write!(
                f,
                "simulated time overflows: a request starting at {start_ns} ns would end \
                 {service_ns} ns later, past the 2^64 ns (584 years) the clock holds"
            ),
            Self::WornOut { retired_blocks, host_write_bytes } => write!(
                f,
                "the flash is worn out: {retired_blocks} blocks retired, too few good blocks \
                 remain to accept writes (after {host_write_bytes} host bytes written)"
            ),
        }
    }
}

impl std::error::Error for RequestError {}

/// Why an FTL could not rebuild its tables from what the flash holds (a served drive's image
/// after a restart). Recovery never panics on what it reads: damage it can repair is repaired
/// and reported (`ftl::FtlRecovery`); damage it cannot repair, or an image written under a
/// different layout, is one of these.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecoveryError {
    /// The configuration itself is invalid.
    Config(ConfigError),
    /// The image was written under a different layout: `key` is the config key, with the
    /// image's value and the configuration's.
    Mismatch { key: &'static str, image: String, config: String },
    /// The flash content is inconsistent in a way recovery cannot repair without risking an
    /// older version of some page being served (`what` says where).
    Damaged { what: String },
    /// Recovery needs free blocks to finish interrupted work and the flash has none left.
    NoSpace { what: String },
}

impl fmt::Display for RecoveryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config(e) => write!(f, "{e}"),
            Self::Mismatch { key, image, config } => write!(
                f,
                "the image was written with {key} = {image} but the configuration says                  {config}; serve it with --set {key}={image} or use a new image"
            ),
            Self::Damaged { what } => write!(f, "the image is damaged beyond repair: {what}"),
            Self::NoSpace { what } => {
                write!(f, "recovery cannot finish: no free block left ({what})")
            }
        }
    }
}

impl std::error::Error for RecoveryError {}

impl From<ConfigError> for RecoveryError {
    fn from(e: ConfigError) -> Self {
        Self::Config(e)
    }
}
