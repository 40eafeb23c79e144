//! Wire constants of the NBD protocol and small big-endian encoders.
//!
//! Values are those of the public protocol description (`proto.md`); all
//! integers travel in network (big-endian) byte order.

/// `NBDMAGIC`, first 8 bytes the server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`, second server magic and the magic of every option request.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// Magic of an option reply.
pub const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Magic of a transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Magic of a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
/// Magic of a structured reply chunk.
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

// Handshake flags (server, 16 bits).
/// Server supports fixed newstyle.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
/// Server can omit the 124 zero bytes after `NBD_OPT_EXPORT_NAME`.
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
// Client flags (32 bits).
/// Client speaks fixed newstyle.
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
/// Client wants no zero padding.
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

// Transmission flags (16 bits).
/// Always set.
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
/// Export is read-only.
pub const FLAG_READ_ONLY: u16 = 1 << 1;
/// `NBD_CMD_FLUSH` supported.
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
/// `NBD_CMD_FLAG_FUA` supported.
pub const FLAG_SEND_FUA: u16 = 1 << 3;
/// Rotational medium (never set here).
pub const FLAG_ROTATIONAL: u16 = 1 << 4;
/// `NBD_CMD_TRIM` supported.
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
/// `NBD_CMD_WRITE_ZEROES` (and `NO_HOLE`) supported.
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
/// `NBD_CMD_FLAG_DF` supported (only with structured replies).
pub const FLAG_SEND_DF: u16 = 1 << 7;
/// Flush/FUA effects are visible across connections.
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;
/// `NBD_CMD_CACHE` understood.
pub const FLAG_SEND_CACHE: u16 = 1 << 10;
/// `NBD_CMD_FLAG_FAST_ZERO` understood.
pub const FLAG_SEND_FAST_ZERO: u16 = 1 << 11;

// Options.
/// Choose export, enter transmission (no error possible).
pub const OPT_EXPORT_NAME: u32 = 1;
/// Abort negotiation.
pub const OPT_ABORT: u32 = 2;
/// List exports.
pub const OPT_LIST: u32 = 3;
/// Upgrade to TLS.
pub const OPT_STARTTLS: u32 = 5;
/// Export details.
pub const OPT_INFO: u32 = 6;
/// Export details, then enter transmission.
pub const OPT_GO: u32 = 7;
/// Enable structured replies.
pub const OPT_STRUCTURED_REPLY: u32 = 8;
/// List metadata contexts.
pub const OPT_LIST_META_CONTEXT: u32 = 9;
/// Select metadata contexts.
pub const OPT_SET_META_CONTEXT: u32 = 10;

// Option reply types.
/// Success / end of a list.
pub const REP_ACK: u32 = 1;
/// One export in an `NBD_OPT_LIST` answer.
pub const REP_SERVER: u32 = 2;
/// One information item of `NBD_OPT_INFO`/`NBD_OPT_GO`.
pub const REP_INFO: u32 = 3;
/// One metadata context.
pub const REP_META_CONTEXT: u32 = 4;
const REP_ERR: u32 = 1 << 31;
/// Unknown option.
pub const REP_ERR_UNSUP: u32 = REP_ERR + 1;
/// Forbidden by policy.
pub const REP_ERR_POLICY: u32 = REP_ERR + 2;
/// Syntactically or semantically invalid option.
pub const REP_ERR_INVALID: u32 = REP_ERR + 3;
/// Not supported on this platform.
pub const REP_ERR_PLATFORM: u32 = REP_ERR + 4;
/// TLS required.
pub const REP_ERR_TLS_REQD: u32 = REP_ERR + 5;
/// Unknown export.
pub const REP_ERR_UNKNOWN: u32 = REP_ERR + 6;
/// Server shutting down.
pub const REP_ERR_SHUTDOWN: u32 = REP_ERR + 7;
/// Block size information must be requested.
pub const REP_ERR_BLOCK_SIZE_REQD: u32 = REP_ERR + 8;
/// Request or reply too large.
pub const REP_ERR_TOO_BIG: u32 = REP_ERR + 9;

// Information types.
/// Size and transmission flags (mandatory).
pub const INFO_EXPORT: u16 = 0;
/// Canonical export name.
pub const INFO_NAME: u16 = 1;
/// Export description.
pub const INFO_DESCRIPTION: u16 = 2;
/// Block size constraints.
pub const INFO_BLOCK_SIZE: u16 = 3;

// Commands.
/// Read.
pub const CMD_READ: u16 = 0;
/// Write (payload follows the header).
pub const CMD_WRITE: u16 = 1;
/// Disconnect.
pub const CMD_DISC: u16 = 2;
/// Flush.
pub const CMD_FLUSH: u16 = 3;
/// Trim / discard.
pub const CMD_TRIM: u16 = 4;
/// Cache (prefetch hint).
pub const CMD_CACHE: u16 = 5;
/// Write zeroes.
pub const CMD_WRITE_ZEROES: u16 = 6;
/// Block status (needs metadata contexts; never negotiated here).
pub const CMD_BLOCK_STATUS: u16 = 7;

// Command flags.
/// Force unit access.
pub const CMD_FLAG_FUA: u16 = 1 << 0;
/// Write zeroes: do not punch a hole.
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;
/// Read: do not fragment the structured reply.
pub const CMD_FLAG_DF: u16 = 1 << 2;
/// Block status: one extent only.
pub const CMD_FLAG_REQ_ONE: u16 = 1 << 3;
/// Write zeroes: fail fast with `ENOTSUP` unless faster than a write.
pub const CMD_FLAG_FAST_ZERO: u16 = 1 << 4;

// Structured reply.
/// Last chunk of a reply.
pub const REPLY_FLAG_DONE: u16 = 1 << 0;
/// No payload (final chunk).
pub const REPLY_TYPE_NONE: u16 = 0;
/// Offset + data.
pub const REPLY_TYPE_OFFSET_DATA: u16 = 1;
/// Offset + hole size.
pub const REPLY_TYPE_OFFSET_HOLE: u16 = 2;
/// Error + message.
pub const REPLY_TYPE_ERROR: u16 = (1 << 15) + 1;
/// Error + message + offset.
pub const REPLY_TYPE_ERROR_OFFSET: u16 = (1 << 15) + 2;

/// Size of a transmission request header.
pub const REQUEST_HEADER_LEN: usize = 28;
/// Size of a simple reply header.
pub const SIMPLE_REPLY_LEN: usize = 16;
/// Size of a structured reply chunk header.
pub const STRUCTURED_HEADER_LEN: usize = 20;

/// Appends an option reply (header and data) to `out`.
pub fn put_option_reply(out: &mut Vec<u8>, option: u32, reply_type: u32, data: &[u8]) {
    out.extend_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
    out.extend_from_slice(&option.to_be_bytes());
    out.extend_from_slice(&reply_type.to_be_bytes());
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
}

/// Appends a simple reply header to `out`.
pub fn put_simple_reply(out: &mut Vec<u8>, error: u32, handle: u64) {
    out.extend_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    out.extend_from_slice(&error.to_be_bytes());
    out.extend_from_slice(&handle.to_be_bytes());
}

/// Appends a structured reply chunk header to `out` (payload not included).
pub fn put_structured_header(
    out: &mut Vec<u8>,
    flags: u16,
    reply_type: u16,
    handle: u64,
    length: u32,
) {
    out.extend_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&reply_type.to_be_bytes());
    out.extend_from_slice(&handle.to_be_bytes());
    out.extend_from_slice(&length.to_be_bytes());
}

/// Appends a complete final `NBD_REPLY_TYPE_ERROR` chunk (message cut to 4096 bytes on a char boundary).
pub fn put_structured_error(out: &mut Vec<u8>, handle: u64, error: u32, message: &str) {
    let mut end = message.len().min(4096);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let msg = &message.as_bytes()[..end];
    put_structured_header(out, REPLY_FLAG_DONE, REPLY_TYPE_ERROR, handle, 6 + msg.len() as u32);
    out.extend_from_slice(&error.to_be_bytes());
    out.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    out.extend_from_slice(msg);
}

/// Big-endian field readers over a byte slice (callers check lengths first).
pub(crate) fn be_u16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
pub(crate) fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
pub(crate) fn be_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}
