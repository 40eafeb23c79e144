//! Host requests: the single vocabulary every front end (trace replay, synthetic workloads,
//! the NBD virtual drive, benchmarks) uses to drive a simulated device.

/// What the host asks the device to do with a byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RequestKind {
    Read,
    Write,
    /// Discard (TRIM / UNMAP): the range's data is no longer needed.
    Trim,
    /// Make everything acknowledged so far durable (no byte range).
    Flush,
}

/// One host request on a byte range.
///
/// `arrival_ns` is the simulated time the request reaches the device; `None` means closed-loop
/// issue: the request arrives the moment the device finished the previous one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub kind: RequestKind,
    pub offset_bytes: u64,
    pub length_bytes: u64,
    pub arrival_ns: Option<u64>,
}

impl Request {
    #[must_use]
    pub fn write(offset_bytes: u64, length_bytes: u64) -> Self {
        Self { kind: RequestKind::Write, offset_bytes, length_bytes, arrival_ns: None }
    }
    #[must_use]
    pub fn read(offset_bytes: u64, length_bytes: u64) -> Self {
        Self { kind: RequestKind::Read, offset_bytes, length_bytes, arrival_ns: None }
    }
    #[must_use]
    pub fn trim(offset_bytes: u64, length_bytes: u64) -> Self {
        Self { kind: RequestKind::Trim, offset_bytes, length_bytes, arrival_ns: None }
    }
    /// A host FLUSH (cache write-back; no range).
    #[must_use]
    pub fn flush() -> Self {
        Self { kind: RequestKind::Flush, offset_bytes: 0, length_bytes: 0, arrival_ns: None }
    }
    #[must_use]
    pub fn at(mut self, arrival_ns: u64) -> Self {
        self.arrival_ns = Some(arrival_ns);
        self
    }
}
