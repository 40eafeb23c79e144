"""Devices of the random matrix (crates/nandlab-probe/src/matrix.rs) probed through
`nandlab serve`, wall clock and a real client's round trip included, as a user with an unknown
drive would: each device is served on a Unix socket with emulated latency and `nandlab probe`
detects its geometry over NBD. The configured values come from the simulator (`sim:`).

    cargo build --release -p nandlab-cli -p nandlab-probe --example matrix
    python3 experiments/geometry/served_matrix.py [COUNT] [MAX_MIB]

COUNT devices (default 6): the first ones of seed 1 without a write buffer whose capacity is at
most MAX_MIB (default 128) — the devices whose values the probes find on the simulator, here
through a real client's round trip and the wall clock's noise. Writes served_matrix.md beside
this file.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NANDLAB = ROOT / "target" / "release" / "nandlab"
MATRIX = ROOT / "target" / "release" / "examples" / "matrix"
PROBES = [
    ("page", "effective_page_bytes"),
    ("block", "block_bytes"),
    ("zone", "zone_bytes"),
    ("parallel", "parallel_units"),
]


def device_args(index: int) -> list[str]:
    out = subprocess.run([MATRIX, "show", "1", str(index)], check=True, capture_output=True)
    return out.stdout.decode().split()


def capacity_mib(args: list[str]) -> float:
    for a in args:
        if a.startswith("device.logical_bytes="):
            return int(a.split("=")[1]) / (1 << 20)
    return 0.0


def truth(args: list[str]) -> dict:
    out = subprocess.run(
        [NANDLAB, "probe", "sim:", *args, "--only", "page", "--json", "-", "-q"],
        check=True,
        capture_output=True,
    )
    c = json.loads(out.stdout)["configured"]
    return {
        "effective_page_bytes": c["effective_page_bytes"],
        "block_bytes": c["block_bytes"],
        "zone_bytes": c["zone_bytes"],
        "parallel_units": c["dies"],
    }


def served(args: list[str]) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory() as d:
        sock = pathlib.Path(d) / "s.sock"
        server = subprocess.Popen(
            [NANDLAB, "serve", "--image", str(pathlib.Path(d) / "image"), "--unix", str(sock),
             *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.time() + 60
            while not sock.exists():
                if time.time() > deadline or server.poll() is not None:
                    raise RuntimeError(f"server did not start: {args}")
                time.sleep(0.05)
            time.sleep(0.2)
            start = time.time()
            out = subprocess.run(
                [NANDLAB, "probe", f"nbd+unix:///?socket={sock}", "--json", "-", "-q"],
                check=True,
                capture_output=True,
            )
            return json.loads(out.stdout), time.time() - start
        finally:
            server.terminate()
            server.wait()


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    max_mib = float(sys.argv[2]) if len(sys.argv) > 2 else 128
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, cwd=ROOT
    ).stdout.decode().strip()
    rows, hits, total, index, devices = [], 0, 0, 0, 0
    while devices < count:
        args = device_args(index)
        buffered = any(a.startswith("buffer.kind=") for a in args)
        if capacity_mib(args) <= max_mib and not buffered:
            want = truth(args)
            got, secs = served(args)
            for probe, key in PROBES:
                ok = got[key] == want[key]
                hits += ok
                total += 1
                rows.append((index, probe, want[key], got[key], ok, got[probe]["confidence"],
                             got[probe]["how"], secs))
            print(f"device {index}: {secs:.0f} s", file=sys.stderr)
            devices += 1
        index += 1
    lines = [
        f"# Matrix devices through `nandlab serve` (seed 1, commit {commit})",
        "",
        "`python3 experiments/geometry/served_matrix.py` — the first devices of the random",
        f"matrix without a write buffer and with at most {max_mib:.0f} MiB, each served over NBD",
        "(wall clock, latency emulation on) and probed.",
        "",
        f"**{hits} of {total} targeted values exact** over {len({r[0] for r in rows})} devices.",
        "",
        "| device | probe | configured | detected | exact | confidence | how | probe seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for i, probe, want, got, ok, conf, how, secs in rows:
        how = how.replace("|", "/")
        lines.append(f"| {i} | {probe} | {want} | {got} | {ok} | {conf:.2f} | {how} | {secs:.0f} |")
    (HERE / "served_matrix.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:7]))


if __name__ == "__main__":
    main()
