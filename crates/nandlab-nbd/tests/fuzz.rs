//! Hostile input: many connections send random bytes at random points of
//! the handshake and of the transmission phase (and random but well-framed
//! requests). No thread of the server may panic, the engine is never hurt,
//! and a well-behaved client is served throughout. Own test binary because
//! it installs a process-wide panic hook.

mod common;
use common::*;
use nandlab_nbd::MemoryEngine;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn random_input_never_panics_the_server() {
    let panics = Arc::new(AtomicU64::new(0));
    let p2 = Arc::clone(&panics);
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        p2.fetch_add(1, Ordering::SeqCst);
        default_hook(info);
    }));

    let eng = MemoryEngine::new("disk", 1 << 20).with_block_sizes(512, 4096, 64 << 10);
    let probe = eng.probe();
    let srv = Server::start(eng);
    let mut good = srv.connect();
    good.open(true);
    let mut rng = pattern(42, 1 << 20).into_iter().cycle();
    let mut next = move || rng.next().unwrap();

    for round in 0..150u64 {
        let mut c = srv.connect();
        c.s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let phase = round % 5;
        let mut junk: Vec<u8> = (0..(next() as usize * 3)).map(|_| next()).collect();
        match phase {
            0 => {} // garbage instead of client flags
            1 => {
                c.greet(3);
                // A plausible option header with a random option and small length.
                let mut m = IHAVEOPT.to_be_bytes().to_vec();
                m.extend_from_slice(&[0, 0, 0, next() % 16, 0, 0, 0, next() % 32]);
                m.append(&mut junk);
                junk = m;
            }
            2 => c.greet(3), // garbage as an option
            3 => {
                c.open(round % 2 == 0);
                // Well-framed requests with random fields, then garbage.
                let mut m = Vec::new();
                for _ in 0..8 {
                    let typ = u16::from(next() % 9);
                    let flags = u16::from(next()) & 0x1f;
                    let off = u64::from(next()) << (next() % 24);
                    let len = if typ == CMD_WRITE {
                        u32::from(next()) * 4
                    } else {
                        u32::from(next()) << (next() % 24)
                    };
                    m.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
                    m.extend_from_slice(&flags.to_be_bytes());
                    m.extend_from_slice(&typ.to_be_bytes());
                    m.extend_from_slice(&u64::from(next()).to_be_bytes());
                    m.extend_from_slice(&off.to_be_bytes());
                    m.extend_from_slice(&len.to_be_bytes());
                    if typ == CMD_WRITE {
                        m.extend(std::iter::repeat_n(0xee, len as usize));
                    }
                }
                m.append(&mut junk);
                junk = m;
            }
            _ => c.open(false), // garbage as a request
        }
        let _ = c.s.write_all(&junk);
        if round % 3 == 0 {
            let _ = c.s.shutdown(std::net::Shutdown::Write);
        }
        // Drain whatever comes back, briefly.
        let mut sink = [0u8; 4096];
        while let Ok(n) = std::io::Read::read(&mut c.s, &mut sink) {
            if n == 0 {
                break;
            }
        }
        if round % 10 == 0 {
            good.request(0, CMD_READ, round, 0, 512, &[]);
            let ch = good.chunk();
            assert_eq!((ch.handle, ch.chunk_type), (round, 1));
        }
    }
    drop(good);
    let report = srv.stop();
    eprintln!("{report:?}, engine saw {} requests", probe.submitted.load(Ordering::SeqCst));
    assert_eq!(panics.load(Ordering::SeqCst), 0, "no panic anywhere");
    assert!(report.protocol_errors > 50, "{report:?}");
    assert!(probe.shut_down.load(Ordering::SeqCst));
}
