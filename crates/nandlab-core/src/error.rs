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

/// A failure of the storage behind a `Media`: an I/O error on a payload-storing media's image
/// file, data that fails its check, or a fault injected by `flash::FaultyMedia`. The
/// metadata-only media never fails.
///
/// It keeps its cause rather than a flattened message, so that callers can act on it: `kind`
/// (e.g. `StorageFull` becomes ENOSPC at the NBD server, everything else EIO), `context` (which
/// operation, page or file the failure hit) and, for an I/O error, the `std::io::Error` itself
/// (`source()`). The error is `Clone` (the device hands the same failure to several places) so
/// the `io::Error`, which is not, sits behind an `Arc`. Errors are rare and never on the
/// simulation's path (the counting media has none): the constructors are `#[cold]`, and a
/// `Result<(), MediaError>` is only returned by sync and checkpoint calls, never per page.
#[derive(Clone, Debug)]
pub struct MediaError {
    kind: std::io::ErrorKind,
    context: String,
    source: Option<std::sync::Arc<std::io::Error>>,
}

impl MediaError {
    /// A failure without an underlying `io::Error` (a CRC mismatch, an injected fault, an
    /// operation the media does not support).
    #[cold]
    #[must_use]
    pub fn new(kind: std::io::ErrorKind, context: impl Into<String>) -> Self {
        Self { kind, context: context.into(), source: None }
    }

    /// An I/O error of the storage, with what was being done when it happened.
    #[cold]
    #[must_use]
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self { kind: source.kind(), context: context.into(), source: Some(source.into()) }
    }

    /// What kind of failure it was (the `io::Error`'s kind for an I/O error).
    #[must_use]
    pub fn kind(&self) -> std::io::ErrorKind {
        self.kind
    }

    /// What failed: the operation, page or file (without the cause's own message).
    #[must_use]
    pub fn context(&self) -> &str {
        &self.context
    }

    /// The kind's name as Rust spells it (`"StorageFull"`, `"PermissionDenied"`, `"Other"`):
    /// what the Python binding reports as `io_kind`. Kinds Rust has no stable name for print
    /// as `"Uncategorized"`.
    #[must_use]
    pub fn kind_name(&self) -> String {
        format!("{:?}", self.kind)
    }
}

/// Two errors are equal when they say the same: kind, context and the cause's kind and text
/// (`io::Error` itself has no equality).
impl PartialEq for MediaError {
    fn eq(&self, other: &Self) -> bool {
        let cause = |e: &Self| e.source.as_ref().map(|s| (s.kind(), s.to_string()));
        self.kind == other.kind && self.context == other.context && cause(self) == cause(other)
    }
}

impl Eq for MediaError {}

impl fmt::Display for MediaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(e) => write!(f, "media: {}: {e}", self.context),
            None => write!(f, "media: {}", self.context),
        }
    }
}

impl std::error::Error for MediaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// A media failure handed to code that speaks `io::Error` (the NBD server, a file system
/// client): same kind, and the whole error as its inner error.
impl From<MediaError> for std::io::Error {
    fn from(e: MediaError) -> Self {
        Self::new(e.kind, e)
    }
}

impl RequestError {
    /// A stable, short name of the variant (`"out-of-range"`, `"media"`, …): what the Python
    /// binding reports as `RequestError.kind`, and what scripts may match on instead of
    /// messages.
    #[must_use]
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::OutOfRange { .. } => "out-of-range",
            Self::TimeWentBackwards { .. } => "time-went-backwards",
            Self::PayloadLength { .. } => "payload-length",
            Self::Media(_) => "media",
            Self::WornOut { .. } => "worn-out",
            Self::TimeOverflow { .. } => "time-overflow",
        }
    }
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

impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // The caller can downcast to `MediaError` for its kind; its own source is the
            // `io::Error`.
            Self::Media(e) => Some(e),
            _ => None,
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;
    use std::io::ErrorKind;

    #[test]
    fn a_media_error_keeps_its_kind_context_and_source() {
        let io = std::io::Error::from_raw_os_error(28); // ENOSPC
        let e = MediaError::io("image.img: page 7: data write", io);
        assert_eq!(e.kind(), ErrorKind::StorageFull);
        assert_eq!(e.kind_name(), "StorageFull");
        assert_eq!(e.context(), "image.img: page 7: data write");
        let shown = e.to_string();
        assert!(shown.starts_with("media: image.img: page 7: data write: "), "{shown}");
        let source = e.source().and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(source.map(std::io::Error::kind), Some(ErrorKind::StorageFull));
        // Clones compare equal; a different context does not.
        assert_eq!(e.clone(), e);
        assert_ne!(MediaError::new(ErrorKind::StorageFull, "image.img: page 8"), e);
        // Through a request error, and back into io::Error for I/O-speaking callers.
        let request = RequestError::Media(e.clone());
        assert_eq!(request.kind_name(), "media");
        let inner = request.source().and_then(|s| s.downcast_ref::<MediaError>());
        assert_eq!(inner, Some(&e));
        let io: std::io::Error = e.into();
        assert_eq!(io.kind(), ErrorKind::StorageFull);
        let check = MediaError::new(ErrorKind::InvalidData, "page 3 fails its data CRC");
        assert!(check.source().is_none());
        assert_eq!(check.to_string(), "media: page 3 fails its data CRC");
    }

    #[test]
    fn request_error_kinds_have_stable_names() {
        let names = [
            RequestError::OutOfRange { offset_bytes: 0, length_bytes: 1, capacity_bytes: 0 },
            RequestError::TimeWentBackwards { arrival_ns: 0, previous_arrival_ns: 1 },
            RequestError::PayloadLength { expected_bytes: 1, got_bytes: 0 },
            RequestError::Media(MediaError::new(ErrorKind::Other, "x")),
            RequestError::WornOut { retired_blocks: 1, host_write_bytes: 0 },
            RequestError::TimeOverflow { start_ns: 1, service_ns: u64::MAX },
        ]
        .map(|e| e.kind_name());
        let expected = [
            "out-of-range",
            "time-went-backwards",
            "payload-length",
            "media",
            "worn-out",
            "time-overflow",
        ];
        assert_eq!(names, expected);
    }
}
