//! TCP / Unix-domain listener and stream behind one type each: what a client connection is,
//! below the NBD protocol and below TLS.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// A bound, non-blocking listener. A Unix listener removes its socket file when cleaned up or
/// dropped (once).
pub(crate) enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, Option<PathBuf>),
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.cleanup();
    }
}

impl Listener {
    /// Accepts one connection if one is pending (`Ok(None)` otherwise).
    /// The returned stream is blocking, with `TCP_NODELAY` for TCP.
    pub(crate) fn accept(&self) -> io::Result<Option<Conn>> {
        let r = match self {
            Listener::Tcp(l) => l.accept().and_then(|(s, _)| {
                s.set_nonblocking(false)?;
                s.set_nodelay(true)?;
                Ok(Conn::Tcp(s))
            }),
            Listener::Unix(l, _) => l.accept().and_then(|(s, _)| {
                s.set_nonblocking(false)?;
                Ok(Conn::Unix(s))
            }),
        };
        match r {
            Ok(c) => Ok(Some(c)),
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.kind() == io::ErrorKind::Interrupted =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Removes the socket file of a Unix listener (the first time only).
    pub(crate) fn cleanup(&mut self) {
        if let Listener::Unix(_, path) = self {
            if let Some(p) = path.take() {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// Binds a Unix socket at `path`, removing a stale socket file first (one
/// nobody accepts on). A live socket gives `AddrInUse`; a non-socket file
/// is left alone and binding fails.
pub(crate) fn bind_unix(path: &Path) -> io::Result<UnixListener> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.file_type().is_socket() {
            if UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("{}: a server is already listening", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
    }
    UnixListener::bind(path)
}

/// One client connection.
#[derive(Debug)]
pub(crate) enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Conn {
    pub(crate) fn try_clone(&self) -> io::Result<Conn> {
        Ok(match self {
            Conn::Tcp(s) => Conn::Tcp(s.try_clone()?),
            Conn::Unix(s) => Conn::Unix(s.try_clone()?),
        })
    }

    /// Shuts down one or both directions; errors (already closed) are ignored.
    pub(crate) fn shutdown(&self, how: Shutdown) {
        let _ = match self {
            Conn::Tcp(s) => s.shutdown(how),
            Conn::Unix(s) => s.shutdown(how),
        };
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Unix(s) => s.write(buf),
        }
    }
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write_vectored(bufs),
            Conn::Unix(s) => s.write_vectored(bufs),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
