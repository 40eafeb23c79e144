"""The geometry paper's black-box detection (docs/PAPERS.md) proven on our own served drive.

For each configuration, `nandlab serve` exports the simulated SSD over NBD (a Unix socket;
replies held until their simulated completion, so the probes see the device's timing through a
real client's round trip) and `nandlab.probe` detects its effective page, block and mapping-zone
sizes and its parallel units from the outside. The configured values come from the same config
(`nandlab.probe("sim:", ...)` reports them as ``configured``). Writes RESULTS.md (the table),
results.csv, and one PNG per configuration with the raw curves (the paper's Figures 5-7).

Usage: make build python && .venv/bin/python experiments/geometry/run.py [--quick]
(--quick: two configurations, fewer repeats; the full run takes about ten minutes.)
"""

from __future__ import annotations

import argparse
import os
import pathlib
import socket
import subprocess
import tempfile
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

import nandlab

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BINARY = ROOT / "target" / "release" / "nandlab"

MIB = 1 << 20
BASE = {"device.logical_bytes": 64 * MIB, "ftl.placement": "host-gc"}

# (name, overrides on BASE, probes). Where the parallel units are probed, reads take 1 ms and
# programs 3 ms: the estimate (best throughput / depth-1 throughput) reads high by the client's
# round trip (tens of microseconds) / a read, so reads must be long beside the round trip.
CONFIGS: list[tuple[str, dict[str, object], list[str]]] = [
    # Block sizes are probed without mapping zones: zone loads on scattered writes would
    # flatten the throughput curve the block probe reads.
    (
        "A: 4 KiB page, 128 KiB block",
        {"device.pages_per_block": 32},
        ["page", "block"],
    ),
    (
        "B: 8 KiB page (2 channels), 512 KiB block",
        {"device.channels_per_gang": 2, "device.pages_per_block": 64},
        ["page", "block"],
    ),
    (
        "C: 16 KiB page (4 channels), 2 x 2 dies",
        {
            "device.channels_per_gang": 4,
            "device.pages_per_block": 32,
            "device.gangs": 2,
            "device.chips_per_channel": 2,
            "timing.read_page_ns": 1_000_000,
            "timing.program_page_ns": 3_000_000,
        },
        ["page", "parallel"],
    ),
    (
        "D: 32 KiB page (4 x 8 KiB), 8 MiB zone",
        {
            "device.channels_per_gang": 4,
            "device.page_size_bytes": 8192,
            "device.pages_per_block": 16,
            "ftl.mapping_zone_bytes": 8 * MIB,
        },
        ["page", "zone"],
    ),
    (
        "E: 4 KiB page behind a 1 MiB FAB write buffer, 16 MiB zone (MLC-like times)",
        {
            "buffer.kind": "fab",
            "buffer.size_bytes": MIB,
            "ftl.mapping_zone_bytes": 16 * MIB,
            # The buffer hides the writes' step, so the reads decide: reads long beside the
            # client's round trip (25 us reads would be two thirds round trip).
            "timing.read_page_ns": 200_000,
            "timing.program_page_ns": 1_000_000,
        },
        ["page", "zone"],
    ),
    (
        "F: 8 KiB page, 2 dies on one channel, 4 MiB zone",
        {
            "device.channels_per_gang": 2,
            "device.chips_per_channel": 2,
            "device.pages_per_block": 16,
            "ftl.mapping_zone_bytes": 4 * MIB,
            "timing.read_page_ns": 1_000_000,
            "timing.program_page_ns": 3_000_000,
        },
        ["page", "zone", "parallel"],
    ),
]


def set_args(overrides: dict[str, object]) -> list[str]:
    out: list[str] = []
    for k, v in overrides.items():
        out += ["--set", f"{k}={v}"]
    return out


def serve(config: dict[str, object], tmp: pathlib.Path) -> tuple[subprocess.Popen[bytes], str]:
    sock = tmp / "nl.sock"
    image = tmp / "image"
    for p in (sock, image):
        if p.exists():
            p.unlink()
    proc = subprocess.Popen(
        [str(BINARY), "serve", "--image", str(image), "--unix", str(sock), *set_args(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 30
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"nandlab serve exited: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(str(sock))
            break
        except OSError:
            if time.time() > deadline:
                raise SystemExit("nandlab serve did not start") from None
            time.sleep(0.02)
    return proc, f"nbd+unix:///?socket={sock}"


def fmt(v: object) -> str:
    if v is None:
        return "not found"
    if isinstance(v, int) and v >= 1024:
        return f"{v // 1024} KiB" if v < MIB else f"{v // MIB} MiB"
    return str(v)


def plot(name: str, report: nandlab.GeometryProbe, path: pathlib.Path) -> None:
    curves = report.data["curves"]
    groups: dict[str, list[dict[str, object]]] = {}
    for c in curves:
        groups.setdefault(str(c["name"]).split(":")[0], []).append(c)
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 3.8), squeeze=False)
    for ax, (probe, cs) in zip(axes[0], groups.items()):
        for c in cs:
            ax.plot(c["x"], c["y"], marker=".", label=str(c["name"]).split(": ", 1)[-1])
        ax.set_title(probe)
        ax.set_xlabel(str(cs[0]["x_label"]))
        ax.set_ylabel(str(cs[0]["y_label"]))
        if probe in ("zone", "block", "parallel units"):
            ax.set_xscale("log", base=2)
        ax.legend(fontsize=7)
    fig.suptitle(name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if not BINARY.exists():
        raise SystemExit(f"{BINARY} not found: run `make build` first")
    configs = CONFIGS[:2] if args.quick else CONFIGS
    repeats = 1 if args.quick else 7
    rows = []
    keys = {
        "page": "effective_page_bytes",
        "block": "block_bytes",
        "zone": "zone_bytes",
        "parallel": "parallel_units",
    }
    truth_keys = {
        "page": "effective_page_bytes",
        "block": "block_bytes",
        "zone": "zone_bytes",
        "parallel": "dies",
    }
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        for name, extra, probes in configs:
            config = {**BASE, **extra}
            configured = nandlab.probe("sim:", set=config, only=["page"]).data["configured"]
            proc, target = serve(config, tmp)
            started = time.time()
            try:
                report = nandlab.probe(target, only=probes, repeats=repeats)
            finally:
                proc.terminate()
                proc.wait()
            seconds = time.time() - started
            stem = name.split(":")[0]
            plot(name, report, HERE / f"{stem}.png")
            for p in probes:
                d = report.data[p]
                want = configured[truth_keys[p]]
                got = report.data[keys[p]]
                rows.append(
                    {
                        "configuration": name,
                        "probe": p,
                        "configured": fmt(want),
                        "detected": fmt(got),
                        "exact": got == want,
                        "confidence": round(float(d["confidence"]), 2),
                        "how": d["how"],
                        "probe seconds": round(seconds, 1),
                    }
                )
                print(f"{name} | {p}: configured {fmt(want)}, detected {fmt(got)} ({d['how']})")
    frame = pd.DataFrame(rows)
    nandlab.write_csv(frame, HERE / "results.csv")
    cols = ["configuration", "probe", "configured", "detected", "exact", "confidence", "how"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    exact = sum(r["exact"] for r in rows)
    (HERE / "table.md").write_text("\n".join(lines) + "\n")
    print(f"{exact} of {len(rows)} detections exact; version {nandlab.build_version}")
    if os.environ.get("NANDLAB_GEOMETRY_STRICT") and exact != len(rows):
        raise SystemExit("some detections were not exact")


if __name__ == "__main__":
    main()
