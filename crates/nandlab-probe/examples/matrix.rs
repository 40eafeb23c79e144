//! Runs the geometry probes on the seeded random device matrix (`nandlab_probe::matrix`) and
//! writes one CSV row per probe and device.
//!
//!   cargo run --release -p nandlab-probe --example matrix -- [DEVICES] [SEED] [JOBS] > matrix.csv
//!
//! Progress goes to stderr. Defaults: 100 devices, seed 1, 2 jobs. `matrix show SEED INDEX` prints
//! one device's `--set` arguments for `nandlab probe sim:`.

use nandlab_probe::matrix::{check, draw};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `matrix show SEED INDEX`: the device's overrides as `nandlab probe sim:` arguments.
    if args.first().map(String::as_str) == Some("show") {
        let n = |i: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(0);
        let d = draw(n(1), n(2) as u32);
        println!(
            "{}",
            d.overrides.iter().map(|o| format!("--set {o}")).collect::<Vec<_>>().join(" ")
        );
        return;
    }
    let arg = |i: usize, default: u64| -> u64 {
        args.get(i).map_or(default, |s| {
            s.parse().unwrap_or_else(|_| {
                eprintln!("matrix: argument {} is not a number: {s:?}", i + 1);
                std::process::exit(2)
            })
        })
    };
    let (devices, seed, jobs) = (arg(0, 100) as u32, arg(1, 1), arg(2, 2).max(1));
    let next = AtomicU32::new(0);
    let rows = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= devices {
                    break;
                }
                let d = draw(seed, i);
                let t = std::time::Instant::now();
                let mut lines = Vec::new();
                match check(&d) {
                    Ok((outcomes, _)) => {
                        for o in outcomes {
                            lines.push(format!(
                                "{seed},{i},\"{}\",{},{},{},{},{:.3},\"{}\"",
                                d.summary,
                                o.probe,
                                o.want.map_or(String::new(), |v| v.to_string()),
                                o.got.map_or(String::new(), |v| v.to_string()),
                                o.exact(),
                                o.confidence,
                                o.how.replace('"', "'")
                            ));
                        }
                    }
                    Err(e) => lines.push(format!(
                        "{seed},{i},\"{}\",error,,,false,0,\"{}\"",
                        d.summary,
                        e.replace('"', "'")
                    )),
                }
                let misses = lines.iter().filter(|l| l.contains(",false,")).count();
                eprintln!(
                    "device {i}: {} ({:.1} s, {misses} miss{})",
                    d.summary,
                    t.elapsed().as_secs_f64(),
                    if misses == 1 { "" } else { "es" }
                );
                rows.lock().unwrap().push((i, lines));
            });
        }
    });
    let mut rows = rows.into_inner().unwrap();
    rows.sort_by_key(|r| r.0);
    println!("seed,device,summary,probe,want,got,exact,confidence,how");
    for (_, lines) in rows {
        for l in lines {
            println!("{l}");
        }
    }
}
