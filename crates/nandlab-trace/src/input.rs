//! Opening a trace file: its bytes, gunzipped when it is gzip (whatever its name), for the line
//! reader of the text formats (`reader.rs`) and the record reader of SRT (`formats/srt.rs`).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use crate::TraceError;

/// Read buffer size, compressed and decompressed.
const BUFFER_BYTES: usize = 256 * 1024;

/// The content of `path`, gunzipped when it starts with the gzip magic, and whether it was.
pub(crate) fn open_input(path: &Path) -> Result<(Box<dyn BufRead + Send>, bool), TraceError> {
    let io_err = |what: &str, e: std::io::Error| TraceError::Io {
        path: path.to_path_buf(),
        message: format!("{what}: {e}"),
    };
    let file = File::open(path).map_err(|e| io_err("cannot open", e))?;
    let mut raw = BufReader::with_capacity(BUFFER_BYTES, file);
    let head = raw.fill_buf().map_err(|e| io_err("cannot read", e))?;
    let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
    let input: Box<dyn BufRead + Send> = if gzip {
        Box::new(BufReader::with_capacity(BUFFER_BYTES, MultiGzDecoder::new(raw)))
    } else {
        Box::new(raw)
    };
    Ok((input, gzip))
}
