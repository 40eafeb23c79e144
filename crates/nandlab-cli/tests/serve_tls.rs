//! Goal: the network side of `nandlab serve` as users meet it: TLS-PSK with real clients (and
//! plaintext refused under `--tls require`), `--read-only` (which never creates an image), bad
//! TLS/listen/stats/limit flags failing at start-up with messages naming the file, address or
//! flag (a failed bind is not preceded by "listening on"), clients that never read their
//! replies — a few, or sixteen pipelining 32 MiB reads — leaving the server's RSS within the
//! in-flight cap while another client is served, and a flood of sockets that never finish the
//! handshake leaving a PSK client served at once.
//! Method: run the built binary on a small image; `nbdinfo`/`qemu-io` as clients (a missing
//! one prints SKIP and the check is skipped); server memory from `/proc/PID/status`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nandlab_testkit::Scratch;

const PSK_HEX: &str = "5e7a9c0e2f4b6d8f10325476981badcfe1f3a5c7092b4d6f8091a2b3c4d5e6f7";

fn have(bin: &str) -> bool {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
        .unwrap_or(false);
    if !found {
        eprintln!("SKIP: `{bin}` not installed");
    }
    found
}

/// A scratch directory of the test's own, removed when it drops.
fn tmp_dir(tag: &str) -> Scratch {
    Scratch::new(&format!("nandlab-serve-tls-{tag}"))
}

/// A running `nandlab serve`, stopped with SIGTERM on drop.
struct Serve {
    child: Child,
    port: u16,
    stderr: String,
}

impl Serve {
    /// Starts on an ephemeral loopback port and waits for the "listening on" line.
    fn start(dir: &Path, extra: &[&str]) -> Serve {
        let image = dir.join("disk.img");
        let mut child = Command::new(env!("CARGO_BIN_EXE_nandlab"))
            .args(["serve", "--image"])
            .arg(&image)
            .args(["--listen", "127.0.0.1:0"])
            .args(["--set", "device.logical_bytes=268435456"])
            .args(["--set", "serve.emulate_latency=false"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut stderr = String::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let port = loop {
            let line = lines.next().expect("server stderr ended").unwrap();
            stderr += &line;
            stderr.push('\n');
            if let Some(rest) = line.split("listening on ").nth(1) {
                let hostport = rest.split("://").nth(1).unwrap().split(' ').next().unwrap();
                break hostport.rsplit(':').next().unwrap().parse().unwrap();
            }
            assert!(Instant::now() < deadline, "no listening line: {stderr}");
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Serve { child, port, stderr }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(cmd: &mut Command) -> (bool, String) {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// Runs `nandlab serve` expecting a start-up failure; returns its stderr.
fn serve_fails(dir: &Path, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_nandlab"))
        .args(["serve", "--image"])
        .arg(dir.join("fail.img"))
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{extra:?} should fail: {stderr}");
    assert!(!stderr.contains("listening on"), "{extra:?}: {stderr}");
    stderr
}

#[test]
fn tls_psk_serves_real_clients_and_require_refuses_plaintext() {
    if !have("nbdinfo") {
        return;
    }
    let dir = tmp_dir("psk");
    let psk = dir.join("keys.psk");
    std::fs::write(&psk, format!("alice:{PSK_HEX}\n")).unwrap();
    let srv = Serve::start(&dir, &["--tls-psk", psk.to_str().unwrap()]);
    assert!(srv.stderr.contains("nbds://127.0.0.1:") && srv.stderr.contains("TLS required"));
    let uri = format!("nbds://alice@127.0.0.1:{}/?tls-psk-file={}", srv.port, psk.display());
    let (ok, out) = run(Command::new("nbdinfo").arg(&uri));
    assert!(ok && out.contains("export-size: 268435456"), "{out}");
    let (ok, out) = run(Command::new("nbdinfo").arg(format!("nbd://127.0.0.1:{}", srv.port)));
    assert!(!ok && !out.contains("export-size"), "plaintext must be refused: {out}");
    if have("qemu-io") {
        let (ok, out) = run(Command::new("qemu-io")
            .arg("--object")
            .arg(format!(
                "tls-creds-psk,id=t0,dir={},username=alice,endpoint=client",
                dir.display()
            ))
            .arg("--image-opts")
            .arg(format!("driver=nbd,host=127.0.0.1,port={},tls-creds=t0", srv.port))
            .args(["-c", "write -P 0x6b 0 256k", "-c", "read -P 0x6b 0 256k"]));
        assert!(ok && !out.contains("verification failed") && !out.contains("error"), "{out}");
    }
    drop(srv);
}

#[test]
fn read_only_export_refuses_writes() {
    if !have("nbdinfo") || !have("qemu-io") {
        return;
    }
    let dir = tmp_dir("ro");
    // `--read-only` never creates an image: one made by a served drive that stopped cleanly.
    drop(Serve::start(&dir, &[]));
    let srv = Serve::start(&dir, &["--read-only"]);
    let uri = format!("nbd://127.0.0.1:{}", srv.port);
    let (ok, out) = run(Command::new("nbdinfo").arg(&uri));
    assert!(ok && out.contains("is_read_only: true"), "{out}");
    let (_, out) = run(Command::new("qemu-io").args(["-f", "raw", &uri, "-c", "write 0 4k"]));
    assert!(!out.contains("wrote 4096"), "the write must fail: {out}");
    drop(srv);
}

#[test]
fn bad_flags_fail_at_start_up_naming_the_culprit() {
    let dir = tmp_dir("bad");
    let e = serve_fails(&dir, &["--listen", "0.0.0.0:10999"]);
    assert!(e.contains("0.0.0.0:10999") && e.contains("--allow-insecure-listen"), "{e}");
    let e = serve_fails(&dir, &["--tls", "require"]);
    assert!(e.contains("--tls-psk FILE"), "{e}");
    let e = serve_fails(&dir, &["--tls", "maybe"]);
    assert!(e.contains("'--tls <MODE>'") && e.contains("off, on, require"), "{e}");
    let bad = dir.join("bad.psk");
    std::fs::write(&bad, "alice:00ff\nbob 1234\n").unwrap();
    let e = serve_fails(&dir, &["--tls-psk", bad.to_str().unwrap()]);
    assert!(e.contains(&format!("{}:2:", bad.display())), "{e}");
    let e = serve_fails(&dir, &["--tls-certificates", dir.to_str().unwrap()]);
    assert!(e.contains("server-cert.pem: cannot read"), "{e}");
    let e = serve_fails(&dir, &["--stats-json", "/nonexistent-dir/stats.json"]);
    assert!(e.contains("/nonexistent-dir/stats.json"), "{e}");
    let e = serve_fails(&dir, &["--handshake-timeout-s", "0"]);
    assert!(e.contains("--handshake-timeout-s"), "{e}");
    let e = serve_fails(&dir, &["--max-handshakes", "none"]);
    assert!(e.contains("--max-handshakes"), "{e}");
    // A port in use: the bind error names the address.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let e = serve_fails(&dir, &["--listen", &addr]);
    assert!(e.contains(&format!("cannot listen on {addr}")), "{e}");
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Negotiates (fixed newstyle, `NBD_OPT_GO` on the default export) on a raw socket.
fn nbd_open(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut hello = [0u8; 18];
    s.read_exact(&mut hello).unwrap();
    s.write_all(&3u32.to_be_bytes()).unwrap();
    let mut opt = Vec::new();
    opt.extend_from_slice(b"IHAVEOPT");
    opt.extend_from_slice(&7u32.to_be_bytes());
    opt.extend_from_slice(&6u32.to_be_bytes());
    opt.extend_from_slice(&[0u8; 6]);
    s.write_all(&opt).unwrap();
    loop {
        let mut h = [0u8; 20];
        s.read_exact(&mut h).unwrap();
        let kind = u32::from_be_bytes(h[12..16].try_into().unwrap());
        let mut data = vec![0u8; u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize];
        s.read_exact(&mut data).unwrap();
        match kind {
            1 => return s,
            3 => {}
            k => panic!("GO refused: {k:#x}"),
        }
    }
}

fn read_request(handle: u64, offset: u64, len: u32) -> Vec<u8> {
    let mut m = Vec::with_capacity(28);
    m.extend_from_slice(&0x2560_9513u32.to_be_bytes());
    m.extend_from_slice(&0u32.to_be_bytes()); // flags, READ
    m.extend_from_slice(&handle.to_be_bytes());
    m.extend_from_slice(&offset.to_be_bytes());
    m.extend_from_slice(&len.to_be_bytes());
    m
}

#[test]
fn stalled_clients_keep_server_rss_bounded() {
    let dir = tmp_dir("rss");
    let srv = Serve::start(&dir, &[]);
    let pid = srv.child.id();
    // Warm up: one client reads 32 MiB so the image and allocator are in their steady state.
    let mut warm = nbd_open(srv.port);
    for i in 0..32u64 {
        warm.write_all(&read_request(i, i << 20, 1 << 20)).unwrap();
        let mut reply = vec![0u8; 16 + (1 << 20)];
        warm.read_exact(&mut reply).unwrap();
    }
    let before = rss_kib(pid);
    // Four clients each ask for 2 GiB of 1 MiB reads and never read a reply.
    let stalled: Vec<TcpStream> = (0..4)
        .map(|_| {
            let s = nbd_open(srv.port);
            let mut w = s.try_clone().unwrap();
            w.set_write_timeout(Some(Duration::from_millis(500))).unwrap();
            std::thread::spawn(move || {
                for i in 0..2048u64 {
                    if w.write_all(&read_request(i, (i % 255) << 20, 1 << 20)).is_err() {
                        return;
                    }
                }
            });
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    let during = rss_kib(pid);
    // The served client still gets its data.
    warm.write_all(&read_request(99, 0, 4096)).unwrap();
    let mut reply = vec![0u8; 16 + 4096];
    warm.read_exact(&mut reply).unwrap();
    assert_eq!(&reply[0..4], &0x6744_6698u32.to_be_bytes(), "simple reply");
    let growth_mib = (during.saturating_sub(before)) as f64 / 1024.0;
    eprintln!(
        "server RSS {before} KiB -> {during} KiB with 4 stalled clients (+{growth_mib:.1} MiB)"
    );
    // 4 × 8 MiB of budget plus buffers; before the budgets it grew by about 1 GiB.
    assert!(growth_mib < 128.0, "RSS grew by {growth_mib:.1} MiB");
    drop(stalled);
    drop(srv);
}

/// Runs `cmd` to the end, or kills it after `limit` (`None` then).
fn output_within(cmd: &mut Command, limit: Duration) -> Option<std::process::Output> {
    let mut child =
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

#[test]
fn read_only_never_creates_an_image() {
    let dir = tmp_dir("ro-missing");
    let typo = dir.join("disk.imgg");
    let empty = dir.join("empty.img");
    std::fs::write(&empty, b"").unwrap();
    for (image, says) in [(&typo, "no such file"), (&empty, "empty")] {
        let out = output_within(
            Command::new(env!("CARGO_BIN_EXE_nandlab"))
                .args(["serve", "--read-only", "--image"])
                .arg(image)
                .args(["--listen", "127.0.0.1:0"]),
            Duration::from_secs(30),
        )
        .unwrap_or_else(|| panic!("--read-only on {} served instead of failing", image.display()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&image.display().to_string())
                && stderr.contains(says)
                && stderr.contains("--read-only never creates"),
            "{stderr}"
        );
        assert!(!stderr.contains("listening on") && !stderr.contains("panicked"), "{stderr}");
    }
    assert!(!typo.exists(), "an image was created");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0, "the empty file was written");
}

/// Sends `count` reads of `len` bytes on an open connection and never reads a reply; the
/// sending thread stops once the server stops reading.
fn stalled_reader(port: u16, count: u64, len: u32) -> TcpStream {
    let s = nbd_open(port);
    let mut w = s.try_clone().unwrap();
    w.set_write_timeout(Some(Duration::from_millis(500))).unwrap();
    std::thread::spawn(move || {
        for i in 0..count {
            let offset = (i * u64::from(len)) % (256 << 20);
            if w.write_all(&read_request(i, offset, len)).is_err() {
                return;
            }
        }
    });
    s
}

/// Sixteen clients each pipeline 32 MiB reads and never read a reply: all together they pin no
/// more than the documented cap on in-flight payload (`DEFAULT_TOTAL_BUDGET_BYTES`, 128 MiB),
/// where each used to pin one 32 MiB request beyond any budget (+516 MiB RSS measured), and a
/// client reading and writing within its reserve is served meanwhile.
#[test]
fn sixteen_clients_pipelining_large_reads_keep_rss_within_the_cap() {
    const CAP_MIB: f64 = 128.0;
    // Buffers (256 KiB each way per connection), thread stacks, allocator slack.
    const SLACK_MIB: f64 = 32.0;
    let dir = tmp_dir("rss-large");
    let srv = Serve::start(&dir, &[]);
    let pid = srv.child.id();
    // Warm up: 32 MiB read once whole and once in 1 MiB pieces, 512 KiB writes.
    let mut warm = nbd_open(srv.port);
    let mut reply = vec![0u8; 16 + (32 << 20)];
    warm.write_all(&read_request(1, 0, 32 << 20)).unwrap();
    warm.read_exact(&mut reply).unwrap();
    exercise(&mut warm, 32);
    let before = rss_kib(pid);
    let stalled: Vec<TcpStream> = (0..16).map(|_| stalled_reader(srv.port, 4, 32 << 20)).collect();
    std::thread::sleep(Duration::from_secs(2));
    let mut during = rss_kib(pid);
    // The served client still gets its data, promptly, while they sit there.
    let t = Instant::now();
    exercise(&mut warm, 8);
    let served_in = t.elapsed();
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(200));
        during = during.max(rss_kib(pid));
    }
    let growth_mib = during.saturating_sub(before) as f64 / 1024.0;
    eprintln!(
        "server RSS {before} KiB -> {during} KiB with 16 clients pipelining 32 MiB reads \
         (+{growth_mib:.1} MiB); the served client's 8 write+read rounds took {served_in:?}"
    );
    assert!(served_in < Duration::from_secs(5), "served in {served_in:?}");
    assert!(
        growth_mib <= CAP_MIB + SLACK_MIB,
        "RSS grew by {growth_mib:.1} MiB, more than the {CAP_MIB} MiB cap + {SLACK_MIB} MiB"
    );
    drop(stalled);
    drop(srv);
}

/// `rounds` of a 512 KiB write then its read-back (within a connection's 1 MiB reserve).
fn exercise(s: &mut TcpStream, rounds: u64) {
    let data: Vec<u8> = (0..512 << 10).map(|i: u32| (i % 251) as u8).collect();
    for r in 0..rounds {
        let offset = (r % 64) << 20;
        let mut m = read_request(1000 + r, offset, data.len() as u32);
        m[7] = 1; // NBD_CMD_WRITE
        m.extend_from_slice(&data);
        s.write_all(&m).unwrap();
        let mut head = [0u8; 16];
        s.read_exact(&mut head).unwrap();
        assert_eq!(&head[4..8], &[0, 0, 0, 0], "write failed");
        s.write_all(&read_request(2000 + r, offset, data.len() as u32)).unwrap();
        let mut back = vec![0u8; 16 + data.len()];
        s.read_exact(&mut back).unwrap();
        assert_eq!(&back[4..8], &[0, 0, 0, 0], "read failed");
        assert!(back[16..] == data[..], "read back other data");
    }
}

/// 64 sockets that connect and send nothing, against `--tls require` with a PSK and two slots:
/// qemu-io with the right key still writes and reads at once, and a socket that stays silent is
/// closed at the handshake deadline.
#[test]
fn a_flood_of_silent_sockets_cannot_lock_out_a_psk_client() {
    if !have("qemu-io") {
        return;
    }
    let dir = tmp_dir("flood");
    let psk = dir.join("keys.psk");
    std::fs::write(&psk, format!("alice:{PSK_HEX}\n")).unwrap();
    let srv = Serve::start(
        &dir,
        &[
            "--tls-psk",
            psk.to_str().unwrap(),
            "--max-connections",
            "2",
            "--max-handshakes",
            "8",
            "--handshake-timeout-s",
            "4",
        ],
    );
    let silent: Vec<TcpStream> =
        (0..64).map(|_| TcpStream::connect(("127.0.0.1", srv.port)).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(300));
    for round in 0..2 {
        let t = Instant::now();
        let (ok, out) = run(Command::new("qemu-io")
            .arg("--object")
            .arg(format!(
                "tls-creds-psk,id=t0,dir={},username=alice,endpoint=client",
                dir.display()
            ))
            .arg("--image-opts")
            .arg(format!("driver=nbd,host=127.0.0.1,port={},tls-creds=t0", srv.port))
            .args(["-c", "write -P 0x5a 0 256k", "-c", "read -P 0x5a 0 256k"]));
        let took = t.elapsed();
        eprintln!("qemu-io under a flood of 64 silent sockets, round {round}: {took:?}");
        assert!(
            ok && out.contains("read 262144/262144 bytes")
                && !out.contains("error")
                && !out.contains("failed"),
            "round {round}: {out}"
        );
        assert!(took < Duration::from_secs(5), "round {round}: qemu-io took {took:?}");
    }
    // A silent socket that was not evicted (the newest) is closed at the deadline.
    let mut late = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    let t = Instant::now();
    late.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut greeting = [0u8; 18];
    late.read_exact(&mut greeting).unwrap();
    let end = late.read(&mut [0u8; 1]);
    let waited = t.elapsed();
    assert!(matches!(end, Ok(0)) || end.is_err(), "{end:?}");
    assert!(
        waited > Duration::from_secs(2) && waited < Duration::from_secs(8),
        "closed after {waited:?}, the deadline is 4 s"
    );
    drop(silent);
    drop(srv);
}
