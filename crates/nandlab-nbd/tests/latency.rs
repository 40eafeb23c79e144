//! Latency emulation: with an engine that releases every reply at
//! `received + 2 ms`, a queue-depth-1 client measures at least 2 ms per
//! request and a median under 4 ms; the server-side figures reported
//! through `Engine::completed` agree. The only test in this binary, so it
//! does not compete with other tests for the CPU.

mod common;
use common::*;
use nandlab_nbd::MemoryEngine;
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[test]
fn replies_are_released_at_received_plus_latency() {
    let lat = Duration::from_millis(2);
    let eng = MemoryEngine::new("disk", 16 << 20).with_latency(lat);
    let probe = eng.probe();
    let srv = Server::start(eng);
    let mut c = srv.connect();
    c.open(true);
    let n = 300u64;
    let mut client = Vec::new();
    let block = pattern(5, 4096);
    for i in 0..n {
        let t = Instant::now();
        if i % 2 == 0 {
            c.request(0, CMD_WRITE, i, (i % 64) * 4096, 4096, &block);
            let ch = c.chunk();
            assert_eq!((ch.handle, ch.chunk_type), (i, 0));
        } else {
            c.request(0, CMD_READ, i, (i % 64) * 4096, 4096, &[]);
            let ch = c.chunk();
            assert_eq!((ch.handle, ch.chunk_type, ch.payload.len()), (i, 1, 4104));
        }
        client.push(t.elapsed());
    }
    drop(c);
    let report = srv.stop();
    assert_eq!(report.requests, n);

    client.sort();
    let (min, med, p99) = (client[0], percentile(&client, 0.5), percentile(&client, 0.99));
    let server: Vec<_> = probe.completions();
    assert_eq!(server.len() as u64, n, "one completion per request");
    let mut srv_lat: Vec<Duration> = server.iter().map(|c| c.replied - c.received).collect();
    srv_lat.sort();
    let late: Vec<Duration> = server.iter().map(|c| c.replied - c.release_at).collect();
    let max_late = late.iter().max().copied().unwrap_or_default();
    let mut late_sorted = late.clone();
    late_sorted.sort();
    eprintln!(
        "client latency: min {:?} median {:?} p99 {:?} | server received->replied: min {:?} median {:?} | \
         release overshoot: median {:?} max {:?}",
        min,
        med,
        p99,
        srv_lat[0],
        percentile(&srv_lat, 0.5),
        percentile(&late_sorted, 0.5),
        max_late
    );
    assert!(min >= lat, "no reply before the release instant (min {min:?})");
    assert!(med < Duration::from_millis(4), "median {med:?} < 4 ms");
    assert!(server.iter().all(|c| c.replied >= c.release_at), "server never replies early");
    assert!(srv_lat[0] >= lat);
}
