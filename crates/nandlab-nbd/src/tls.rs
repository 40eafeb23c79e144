//! TLS for `NBD_OPT_STARTTLS`: credentials (X.509 certificates or pre-shared keys) loaded into
//! one OpenSSL context, and a TLS session that a connection's reader and writer threads share.
//!
//! **Credentials** follow the conventions of nbdkit and qemu, so the same files serve both:
//! a certificate directory holds `server-cert.pem` (the certificate, optionally followed by its
//! chain), `server-key.pem` and, for client verification only, `ca-cert.pem`; a PSK file holds
//! lines `username:hexkey` (what `psktool` writes), and the identity the client sends picks the
//! key. Every file problem is a [`TlsError`] naming the file (and the line, for PSK files).
//!
//! **Threading.** An OpenSSL session must not be used by two threads at once, but the
//! connection reads requests on one thread while another writes replies. The session therefore
//! sits behind a mutex, and its transport is a [`Bridge`] whose *read side never blocks*: it
//! serves bytes from an in-memory buffer and says "would block" when that is empty. The reader
//! thread alone reads the socket, *without* holding the lock, and feeds what it got into the
//! buffer under the lock; so the lock is only ever held for decryption or encryption plus a
//! socket write, never across a wait for the client. The writer's socket writes do block (under
//! the lock) when the client stops reading, which stalls decryption too: that is back-pressure,
//! as on a plain connection. Renegotiation is disabled, so writing never needs to read.

use crate::stream::Conn;
use openssl::error::ErrorStack;
use openssl::pkey::PKey;
use openssl::ssl::{
    ErrorCode, Ssl, SslContext, SslMethod, SslMode, SslOptions, SslStream, SslVerifyMode,
    SslVersion,
};
use openssl::x509::{X509Name, X509};
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// How the server treats `NBD_OPT_STARTTLS` (nbdkit's `--tls` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsMode {
    /// No TLS: `STARTTLS` is refused (`NBD_REP_ERR_POLICY`).
    Off,
    /// Clients choose: plaintext and TLS sessions are both served.
    On,
    /// Every option other than `STARTTLS` and `ABORT` is refused before TLS with
    /// `NBD_REP_ERR_TLS_REQD` (`NBD_OPT_EXPORT_NAME`, which cannot fail, closes the connection).
    Require,
}

impl TlsMode {
    /// Parses `off`, `on` or `require`.
    pub fn parse(s: &str) -> Option<TlsMode> {
        match s {
            "off" => Some(TlsMode::Off),
            "on" => Some(TlsMode::On),
            "require" => Some(TlsMode::Require),
            _ => None,
        }
    }
}

/// Where the TLS credentials come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TlsCredentials {
    /// A directory with `server-cert.pem` and `server-key.pem` (and `ca-cert.pem` when
    /// `verify_peer` is set: clients must then present a certificate signed by that CA).
    Certificates { dir: PathBuf, verify_peer: bool },
    /// A PSK file of `username:hexkey` lines.
    Psk { file: PathBuf },
}

/// Why TLS could not be set up.
#[derive(Debug)]
pub enum TlsError {
    /// A credential file could not be read.
    Read { path: PathBuf, error: io::Error },
    /// A certificate or key file is malformed, or the key does not match the certificate.
    Certificate { path: PathBuf, message: String },
    /// A PSK file line is malformed (1-based line number).
    Psk { path: PathBuf, line: usize, message: String },
    /// A PSK file without any key.
    PskEmpty { path: PathBuf },
    /// OpenSSL refused the configuration (should not happen with valid files).
    OpenSsl(String),
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsError::Read { path, error } => write!(f, "{}: cannot read: {error}", path.display()),
            TlsError::Certificate { path, message } => write!(f, "{}: {message}", path.display()),
            TlsError::Psk { path, line, message } => {
                write!(f, "{}:{line}: {message}", path.display())
            }
            TlsError::PskEmpty { path } => {
                write!(f, "{}: no `username:hexkey` line (an empty PSK file)", path.display())
            }
            TlsError::OpenSsl(m) => write!(f, "TLS set-up failed: {m}"),
        }
    }
}

impl std::error::Error for TlsError {}

/// Largest PSK accepted, bytes (OpenSSL's own limit is 512).
const MAX_PSK_BYTES: usize = 256;

/// TLS 1.2 suites for PSK mode. TLS 1.3 is preferred and works with GnuTLS clients; these keep
/// TLS 1.2-only PSK clients working (forward-secret ECDHE-PSK first, then plain PSK with AEAD).
const PSK_TLS12_CIPHERS: &str = "ECDHE-PSK-CHACHA20-POLY1305:ECDHE-PSK-AES256-CBC-SHA384:\
ECDHE-PSK-AES128-CBC-SHA256:PSK-AES256-GCM-SHA384:PSK-AES128-GCM-SHA256:PSK-CHACHA20-POLY1305";

/// A loaded TLS configuration: the mode and an OpenSSL context built from the credentials.
/// Cheap to clone (the context is reference-counted).
#[derive(Clone)]
pub struct TlsConfig {
    mode: TlsMode,
    credentials: TlsCredentials,
    context: SslContext,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("mode", &self.mode)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// Loads the credentials and builds the context. `mode` must not be [`TlsMode::Off`]
    /// (serve without a `TlsConfig` for that); it is accepted and behaves like no TLS.
    pub fn load(mode: TlsMode, credentials: TlsCredentials) -> Result<TlsConfig, TlsError> {
        let ossl = |e: ErrorStack| TlsError::OpenSsl(e.to_string());
        // A plain context rather than `SslAcceptor::mozilla_*`: those set RELEASE_BUFFERS, which
        // frees and reallocates the record buffers around every record (measurably slower with
        // one small record per NBD request); OpenSSL 3's default cipher list is already modern.
        let mut b = SslContext::builder(SslMethod::tls_server()).map_err(ossl)?;
        b.set_min_proto_version(Some(SslVersion::TLS1_2)).map_err(ossl)?;
        b.set_mode(SslMode::ACCEPT_MOVING_WRITE_BUFFER | SslMode::ENABLE_PARTIAL_WRITE);
        // A client closing without close_notify is an ordinary end of file, not an error; and
        // no renegotiation, so a write never has to wait for the peer (see the module comment).
        b.set_options(
            SslOptions::IGNORE_UNEXPECTED_EOF
                | SslOptions::NO_RENEGOTIATION
                | SslOptions::CIPHER_SERVER_PREFERENCE,
        );
        // TLS 1.3 suites, AES-GCM first: it runs on the CPU's AES instructions, where ChaCha20
        // (OpenSSL's pick for PSK sessions otherwise) is slower.
        b.set_ciphersuites(
            "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256",
        )
        .map_err(ossl)?;
        // Session resumption with client certificates needs a context id.
        b.set_session_id_context(b"nandlab-nbd").map_err(ossl)?;
        match &credentials {
            TlsCredentials::Certificates { dir, verify_peer } => {
                load_certificates(&mut b, dir, *verify_peer)?
            }
            TlsCredentials::Psk { file } => {
                let keys = parse_psk_file(file)?;
                b.set_cipher_list(PSK_TLS12_CIPHERS).map_err(ossl)?;
                b.set_psk_server_callback(move |_ssl, identity, out| {
                    // An unknown identity gets no key (0 bytes): the handshake fails.
                    let Some(key) = identity.and_then(|id| keys.get(id)) else { return Ok(0) };
                    if key.len() > out.len() {
                        return Ok(0);
                    }
                    out[..key.len()].copy_from_slice(key);
                    Ok(key.len())
                });
            }
        }
        Ok(TlsConfig { mode, credentials, context: b.build() })
    }

    /// The mode.
    pub fn mode(&self) -> TlsMode {
        self.mode
    }

    /// The credentials it was loaded from.
    pub fn credentials(&self) -> &TlsCredentials {
        &self.credentials
    }
}

/// Largest key, certificate or PSK file read: such files are a few KiB (a PSK file of many
/// clients some MiB); the bound keeps a path such as `/dev/zero` from taking the machine's
/// memory.
pub const MAX_CREDENTIAL_FILE_BYTES: u64 = 16 << 20;

fn read_file(path: &Path) -> Result<Vec<u8>, TlsError> {
    use std::io::Read;
    let read = |error| TlsError::Read { path: path.to_path_buf(), error };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CREDENTIAL_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(read)?;
    if bytes.len() as u64 > MAX_CREDENTIAL_FILE_BYTES {
        return Err(read(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "longer than {MAX_CREDENTIAL_FILE_BYTES} bytes: not a key, certificate or PSK file"
            ),
        )));
    }
    Ok(bytes)
}

/// First line of an OpenSSL error stack, without the numeric code prefix noise.
fn ossl_reason(e: &ErrorStack) -> String {
    e.errors().first().and_then(|x| x.reason().map(str::to_string)).unwrap_or_else(|| e.to_string())
}

fn load_certificates(
    b: &mut openssl::ssl::SslContextBuilder,
    dir: &Path,
    verify_peer: bool,
) -> Result<(), TlsError> {
    let cert_path = dir.join("server-cert.pem");
    let key_path = dir.join("server-key.pem");
    let bad = |path: &Path, message: String| TlsError::Certificate { path: path.into(), message };
    let chain = X509::stack_from_pem(&read_file(&cert_path)?)
        .map_err(|e| bad(&cert_path, format!("not a PEM certificate ({})", ossl_reason(&e))))?;
    let mut chain = chain.into_iter();
    let Some(leaf) = chain.next() else {
        return Err(bad(&cert_path, "no PEM certificate in the file".into()));
    };
    let key = PKey::private_key_from_pem(&read_file(&key_path)?)
        .map_err(|e| bad(&key_path, format!("not a PEM private key ({})", ossl_reason(&e))))?;
    let ossl = |e: ErrorStack| TlsError::OpenSsl(e.to_string());
    b.set_certificate(&leaf).map_err(|e| bad(&cert_path, ossl_reason(&e)))?;
    for extra in chain {
        b.add_extra_chain_cert(extra).map_err(ossl)?;
    }
    b.set_private_key(&key).map_err(|e| bad(&key_path, ossl_reason(&e)))?;
    b.check_private_key().map_err(|_| {
        bad(&key_path, format!("does not match the certificate in {}", cert_path.display()))
    })?;
    if verify_peer {
        let ca_path = dir.join("ca-cert.pem");
        let cas = X509::stack_from_pem(&read_file(&ca_path)?)
            .map_err(|e| bad(&ca_path, format!("not a PEM certificate ({})", ossl_reason(&e))))?;
        if cas.is_empty() {
            return Err(bad(&ca_path, "no PEM certificate in the file".into()));
        }
        b.set_ca_file(&ca_path).map_err(|e| bad(&ca_path, ossl_reason(&e)))?;
        let names = X509Name::load_client_ca_file(&ca_path).map_err(ossl)?;
        b.set_client_ca_list(names);
        b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    }
    Ok(())
}

/// Parses a PSK file: `username:hexkey` per line; blank lines and lines starting with `#` are
/// skipped. A repeated username is an error (which key would win would be a guess).
fn parse_psk_file(path: &Path) -> Result<HashMap<Vec<u8>, Vec<u8>>, TlsError> {
    let text = read_file(path)?;
    let text = String::from_utf8(text).map_err(|_| TlsError::Psk {
        path: path.into(),
        line: 1,
        message: "not UTF-8 text".into(),
    })?;
    let mut keys = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let err = |message: String| TlsError::Psk { path: path.into(), line: i + 1, message };
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((user, hex)) = line.split_once(':') else {
            return Err(err("expected `username:hexkey`".into()));
        };
        if user.is_empty() {
            return Err(err("empty username".into()));
        }
        let key = decode_hex(hex.trim()).ok_or_else(|| {
            err(format!("key of `{user}` must be an even number of hexadecimal digits"))
        })?;
        if key.is_empty() || key.len() > MAX_PSK_BYTES {
            return Err(err(format!(
                "key of `{user}` must be 1 to {MAX_PSK_BYTES} bytes, not {}",
                key.len()
            )));
        }
        if keys.insert(user.as_bytes().to_vec(), key).is_some() {
            return Err(err(format!("username `{user}` appears twice")));
        }
    }
    if keys.is_empty() {
        return Err(TlsError::PskEmpty { path: path.into() });
    }
    Ok(keys)
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|d| u8::from_str_radix(d, 16).ok()))
        .collect()
}

/// The TLS session's transport: reads come from bytes the reader thread fed in (never from the
/// socket, so they never block), writes go straight to the socket.
pub(crate) struct Bridge {
    incoming: Vec<u8>,
    pos: usize,
    eof: bool,
    out: Conn,
}

impl Bridge {
    fn feed(&mut self, bytes: &[u8]) {
        if self.pos == self.incoming.len() {
            self.incoming.clear();
            self.pos = 0;
        }
        self.incoming.extend_from_slice(bytes);
    }
}

impl Read for Bridge {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let avail = &self.incoming[self.pos..];
        if avail.is_empty() {
            return if self.eof { Ok(0) } else { Err(io::ErrorKind::WouldBlock.into()) };
        }
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.pos += n;
        Ok(n)
    }
}

impl Write for Bridge {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

type Session = Arc<Mutex<SslStream<Bridge>>>;

fn lock(s: &Session) -> MutexGuard<'_, SslStream<Bridge>> {
    s.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Size of one raw socket read on a TLS connection (a TLS record is at most ~16.7 KiB).
const RAW_READ_BYTES: usize = 64 * 1024;

/// The decrypting side: only this reads the socket.
pub(crate) struct TlsReader {
    session: Session,
    raw: Conn,
    buf: Vec<u8>,
}

/// The encrypting side.
pub(crate) struct TlsWriter {
    session: Session,
}

fn tls_io_error(e: openssl::ssl::Error) -> io::Error {
    match e.into_io_error() {
        Ok(io) => io,
        Err(e) => io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}")),
    }
}

/// Runs the server side of the handshake on `conn` (right after the `STARTTLS` reply) and
/// returns the two halves of the session.
pub(crate) fn accept(config: &TlsConfig, conn: &Conn) -> io::Result<(TlsReader, TlsWriter)> {
    let ssl = Ssl::new(&config.context).map_err(io::Error::other)?;
    let bridge = Bridge { incoming: Vec::new(), pos: 0, eof: false, out: conn.try_clone()? };
    let stream = SslStream::new(ssl, bridge).map_err(io::Error::other)?;
    let mut reader = TlsReader {
        session: Arc::new(Mutex::new(stream)),
        raw: conn.try_clone()?,
        buf: Vec::new(),
    };
    reader.buf.resize(RAW_READ_BYTES, 0);
    loop {
        let r = lock(&reader.session).accept();
        match r {
            Ok(()) => break,
            Err(e) if e.code() == ErrorCode::WANT_READ => {
                if !reader.fill()? {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "client closed during the TLS handshake",
                    ));
                }
            }
            Err(e) => {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("TLS handshake failed: {e}"),
                ))
            }
        }
    }
    let writer = TlsWriter { session: Arc::clone(&reader.session) };
    Ok((reader, writer))
}

impl TlsReader {
    /// Reads the socket (blocking, without the lock) and feeds the bytes to the session.
    /// `false` on end of file (recorded in the bridge too).
    fn fill(&mut self) -> io::Result<bool> {
        let n = loop {
            match self.raw.read(&mut self.buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => break r?,
            }
        };
        let mut s = lock(&self.session);
        if n == 0 {
            s.get_mut().eof = true;
            return Ok(false);
        }
        s.get_mut().feed(&self.buf[..n]);
        Ok(true)
    }
}

impl Read for TlsReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let r = {
                let mut s = lock(&self.session);
                let eof = s.get_ref().eof;
                match s.ssl_read(out) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.code() == ErrorCode::ZERO_RETURN => return Ok(0),
                    Err(e) if e.code() == ErrorCode::WANT_READ && eof => return Ok(0),
                    Err(e) if e.code() == ErrorCode::WANT_READ => Ok(()),
                    Err(e) => Err(e),
                }
            };
            match r {
                Ok(()) => {
                    if !self.fill()? {
                        // Let the session see the end of file on the next turn.
                        continue;
                    }
                }
                Err(e) => return Err(tls_io_error(e)),
            }
        }
    }
}

impl Write for TlsWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let r = lock(&self.session).ssl_write(buf);
        r.map_err(tls_io_error)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file under the temp dir, removed on drop, so also when the test panics.
    struct TmpFile(PathBuf);

    impl std::ops::Deref for TmpFile {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TmpFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn tmp(tag: &str, text: &str) -> TmpFile {
        let p = std::env::temp_dir().join(format!("nandlab-nbd-psk-{}-{tag}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        TmpFile(p)
    }

    #[test]
    fn psk_file_parses_and_names_bad_lines() {
        let p = tmp("ok", "# keys\nalice:00ff10\n\nbob:ABCDEF0123\n");
        let keys = parse_psk_file(&p).unwrap();
        assert_eq!(keys[b"alice".as_slice()], vec![0x00, 0xff, 0x10]);
        assert_eq!(keys[b"bob".as_slice()], vec![0xab, 0xcd, 0xef, 0x01, 0x23]);
        for (tag, text, line, needle) in [
            ("nocolon", "alice:00\nbob\n", 2, "expected `username:hexkey`"),
            ("odd", "alice:abc\n", 1, "an even number of hexadecimal"),
            ("nonhex", "alice:zz\n", 1, "an even number of hexadecimal"),
            ("emptykey", "alice:\n", 1, "must be 1 to"),
            ("dup", "a:00\na:01\n", 2, "appears twice"),
            ("nouser", ":00\n", 1, "empty username"),
        ] {
            let p = tmp(tag, text);
            match parse_psk_file(&p) {
                Err(e @ TlsError::Psk { line: l, .. }) => {
                    assert_eq!(l, line, "{tag}");
                    let msg = e.to_string();
                    assert!(
                        msg.contains(needle) && msg.contains(&p.display().to_string()),
                        "{msg}"
                    );
                }
                other => panic!("{tag}: {other:?}"),
            }
        }
        let p = tmp("empty", "\n# nothing\n");
        assert!(matches!(parse_psk_file(&p), Err(TlsError::PskEmpty { .. })));
        let missing = std::env::temp_dir().join("nandlab-nbd-no-such-psk-file");
        let e = parse_psk_file(&missing).unwrap_err();
        assert!(matches!(e, TlsError::Read { .. }) && e.to_string().contains("no-such-psk"));
    }

    #[test]
    fn missing_or_garbage_certificates_name_the_file() {
        let dir = std::env::temp_dir().join(format!("nandlab-nbd-certs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let creds = TlsCredentials::Certificates { dir: dir.clone(), verify_peer: false };
        let e = TlsConfig::load(TlsMode::Require, creds.clone()).unwrap_err();
        assert!(e.to_string().contains("server-cert.pem: cannot read"), "{e}");
        std::fs::write(dir.join("server-cert.pem"), "garbage").unwrap();
        let e = TlsConfig::load(TlsMode::Require, creds).unwrap_err();
        assert!(e.to_string().contains("server-cert.pem: no PEM certificate"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
