//! TCP / Unix-domain listener and stream behind one type each: what a client connection is,
//! below the NBD protocol and below TLS.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::net::RecvFlags;

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

impl Conn {
    /// Reads like [`Read::read`], but first polls the socket with non-blocking receives for up
    /// to `window` (see `ServeOptions::busy_poll`): a request that arrives meanwhile is taken
    /// without the thread sleeping and being woken. Per receive, not per fd: the writer half
    /// shares the socket and must keep blocking writes.
    pub(crate) fn read_polling(&mut self, buf: &mut [u8], window: Duration) -> io::Result<usize> {
        if !window.is_zero() && !buf.is_empty() {
            let started = Instant::now();
            loop {
                let got = match self {
                    Conn::Tcp(s) => rustix::net::recv(s, &mut *buf, RecvFlags::DONTWAIT),
                    Conn::Unix(s) => rustix::net::recv(s, &mut *buf, RecvFlags::DONTWAIT),
                };
                match got {
                    Ok((n, _)) => return Ok(n),
                    Err(Errno::AGAIN | Errno::INTR) if started.elapsed() < window => {}
                    Err(Errno::AGAIN | Errno::INTR) => break,
                    Err(e) => return Err(e.into()),
                }
            }
        }
        self.read(buf)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Conn, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (server, _) = l.accept().unwrap();
        (Conn::Tcp(server), client)
    }

    #[test]
    fn a_polling_read_takes_bytes_that_arrive_inside_or_after_its_window() {
        for window in [Duration::ZERO, Duration::from_micros(50), Duration::from_millis(200)] {
            let (mut server, mut client) = pair();
            // Already there: polled at once.
            client.write_all(b"abc").unwrap();
            let mut buf = [0u8; 8];
            let mut got = 0;
            while got < 3 {
                got += server.read_polling(&mut buf[got..], window).unwrap();
            }
            assert_eq!(&buf[..3], b"abc");
            // Arriving 20 ms later: inside the 200 ms window (taken while polling), after the
            // others (taken by the blocking receive that follows the window).
            let writer = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                client.write_all(b"de").unwrap();
                client
            });
            let mut got = 0;
            while got < 2 {
                got += server.read_polling(&mut buf[got..], window).unwrap();
            }
            assert_eq!(&buf[..2], b"de", "window {window:?}");
            // The peer closing is end-of-file, not an error, polled or not.
            drop(writer.join().unwrap());
            assert_eq!(server.read_polling(&mut buf, window).unwrap(), 0);
        }
    }

    #[test]
    fn polling_leaves_the_socket_blocking_for_the_writer_half() {
        let (server, client) = pair();
        let mut reader = server.try_clone().unwrap();
        let mut buf = [0u8; 4];
        // Nothing to read: the poll times out and falls back to a blocking receive, which a
        // read timeout ends; a socket left non-blocking would return `WouldBlock` at once.
        if let Conn::Tcp(s) = &reader {
            s.set_read_timeout(Some(Duration::from_millis(30))).unwrap();
        }
        let started = Instant::now();
        let e = reader.read_polling(&mut buf, Duration::from_micros(100)).unwrap_err();
        assert!(matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut));
        assert!(started.elapsed() >= Duration::from_millis(25), "{:?}", started.elapsed());
        drop(client);
    }
}
