#!/usr/bin/env python3
"""Writes the generated part of the seed corpora (fuzz/corpus/<target>/gen-*) from a fixed seed.

Every trace line is synthetic (random values in each format's shape), never taken from a real
trace; `--check DIR` additionally verifies that no generated line occurs in the files under DIR
(e.g. ../shared/traces). Hand-made seeds are the files named `hand-*`; this script leaves them
alone. Usage: python3 fuzz/gen_corpus.py [--check DIR]
"""
import gzip
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
rng = random.Random(16)

FORMATS = ["msr", "spc", "disksim", "mqsim", "blkparse", "tencent", "systor", "cloudphysics"]


def trace_lines(fmt, n):
    lines = []
    t = rng.randrange(10**6)
    for _ in range(n):
        t += rng.randrange(1, 5000)
        sect = rng.choice([1, 8, 16, 64, 256])
        off = rng.randrange(1 << 20) * 8
        dev = rng.randrange(3)
        w = rng.random() < 0.6
        if fmt == "msr":
            lines.append(f"{130000000000000000 + t},host{dev},{dev},{'Write' if w else 'Read'},{off * 512},{sect * 512},{rng.randrange(9999)}")
        elif fmt == "spc":
            lines.append(f"{dev},{off},{sect * 512},{'W' if w else 'r'},{t / 1e6:.6f}")
        elif fmt == "disksim":
            lines.append(f"{t / 1000:.3f} {dev} {off} {sect} {0 if w else 1}")
        elif fmt == "mqsim":
            lines.append(f"{t * 1000} {dev} {off} {sect} {0 if w else 1}")
        elif fmt == "blkparse":
            act = rng.choice(["Q", "C", "D", "Q"])
            rw = rng.choice(["W", "R", "WS", "RA", "D", "FWS", "N"])
            lines.append(f"  8,{dev * 16:<3} {rng.randrange(4):2d} {len(lines) + 1:8d} {t // 10**6:5d}.{(t * 997) % 10**9:09d} {rng.randrange(9999):5d}  {act} {rw:>3} {off} + {sect} [proc{dev}]")
        elif fmt == "tencent":
            lines.append(f"{1600000000 + t // 10**5},{off},{sect},{1 if w else 0},{dev + 100}")
        elif fmt == "systor":
            lines.append(f"{1500000000 + t // 10**6}.{(t * 7919) % 10**9:09d},0.{rng.randrange(10**9):09d},{'W' if w else 'R'},{dev},{off * 512},{sect * 512}")
        elif fmt == "cloudphysics":
            op = rng.choice(["28", "2a", "0x28", "0x2A", "35", "42"])
            lines.append(f"1,{t},{op},{sect * 512},{off}")
    header = {"systor": ["Timestamp,Response,IOType,LUN,Offset,Size"],
              "cloudphysics": ["version,time,op,size,lbn"]}.get(fmt, [])
    return header + lines


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def gen_traces():
    generated = []
    for i, fmt in enumerate(FORMATS):
        for n, k in [(3, "a"), (12, "b")]:
            lines = trace_lines(fmt, n)
            generated += lines
            text = ("\n".join(lines) + "\n").encode()
            write("trace_readers", f"gen-{fmt}-{k}", bytes([i]) + text)
        # Detection (selector 8), gzip (0x20) and a cut gzip stream (0x60).
        text = ("\n".join(trace_lines(fmt, 6)) + "\r\n").encode()
        write("trace_readers", f"gen-{fmt}-detect", bytes([8]) + text)
        write("trace_readers", f"gen-{fmt}-gz", bytes([0x20 | i]) + text)
        write("trace_readers", f"gen-{fmt}-gzcut", bytes([0x60 | i]) + text)
    return generated


CONFIG_SEEDS = [
    ("toml-empty", ""),
    ("toml-device", '[device]\npreset = "generic"\nblocks = 64\npages_per_block = 16\nutilization = 0.8\n'),
    ("toml-deb", '[ftl]\nplacement = "deb"\n[deb]\nebr_size_bytes = 65536\nstable_time_intervals_s = [1.0, 2.0]\n'),
    ("toml-dac", '[ftl]\nplacement = "dac"\nregions = 3\ntime_threshold_s = 0.5\n[dac]\nram_region_bytes = 8192\n'),
    ("toml-oracle", '[ftl]\nplacement = "oracle"\nregions = 3\noracle_boundaries_passes = [0.5, 2.0]\n'),
    ("toml-bast", '[ftl]\nkind = "bast"\nlog_blocks = 4\nrecycling = "periodic"\nmigration_period = 3\n'),
    ("toml-sast", '[ftl]\nkind = "sast"\ngroup_data_blocks = 2\ngroup_log_blocks = 1\n[device]\nblocks = 128\n'),
    ("toml-buffer", '[buffer]\nkind = "cflru"\nsize_bytes = 1048576\ncflru_window = 0.25\n'),
    ("toml-wear", '[wear]\nkind = "lazy"\ndelta = 8.0\nadaptive = true\nlambda = -0.2\nsession_wear_erases = 10\n'),
    ("toml-static", '[wear]\nkind = "static"\nthreshold = 4.0\nset_blocks = 2\nendurance_cycles = 100\n'),
    ("toml-phases", '[workload]\nkind = "phases"\nphases = [{kind = "uniform", passes = 1.0}, {kind = "hotcold", bytes = 1048576}]\n'),
    ("toml-poisson", '[workload]\nkind = "hotcold"\narrival = "poisson"\narrival_rate_per_s = 1000.0\nread_fraction = 0.3\n'),
    ("toml-trace", '[workload]\nkind = "trace"\npath = "t.csv"\nformat = "msr"\nfit = "compact"\ncompact_chunk_bytes = 8192\ndevice = 0\n'),
    ("toml-postmark", '[workload]\nkind = "postmark"\n[workload.fs]\nfiles = 10\ntransactions = 100\ncluster_bytes = 4096\n'),
    ("toml-media", '[workload]\nkind = "media-player"\nmedia = "mp3"\n[workload.fs]\nfill_fraction = 0.5\ndelete_order = "random"\n'),
    ("toml-serve", '[serve]\nstore = "metadata-only"\nrecovery = "checkpoint"\nram_region_battery = "failed"\n[timing]\nread_page_ns = 25000\ncopy_page_ns = 0\n'),
    ("toml-run", '[run]\nseed = 7\ncheck_every_requests = 100\nsample_every_bytes = 4096\nmemory_limit_bytes = 1073741824\n'),
    ("toml-big", '[device]\nlogical_bytes = 1099511627776\npage_size_bytes = 16384\n'),
]
OVERRIDE_SEEDS = [
    ("set-basic", "", ["device.blocks=64", "workload.read_fraction=0.5", "ftl.cleaning=\"cat\""]),
    ("set-bad", "[device]\nblocks = 8\n", ["device.utilization=1.5", "ftl.kind=bast"]),
    ("set-nested", "", ["workload.fs.files=3", "workload.kind=embedded", "wear.kind=static"]),
    ("set-array", "", ["ftl.placement=deb", "deb.stable_time_intervals_s=[1, 2, 3]"]),
]
JSON_SEEDS = [
    ("json-basic", '{"device": {"blocks": 64, "utilization": 0.7}, "ftl": {"kind": "fast", "log_blocks": 3}}'),
    ("json-null", '{"device": {"blocks": null}, "workload": {"kind": "uniform", "passes": 0.5}}'),
]


def gen_config():
    for name, text in CONFIG_SEEDS:
        write("config", f"gen-{name}", b"\x00" + text.encode())
    for name, text, sets in OVERRIDE_SEEDS:
        write("config", f"gen-{name}", b"\x00" + "\0".join([text] + sets).encode())
    for name, text in JSON_SEEDS:
        write("config", f"gen-{name}", b"\x01" + text.encode())


def gen_run_small():
    # Raw bytes decoded by `arbitrary` into `Small`: 28 u8 fields, a u16 seed, then pairs.
    for i in range(24):
        fields = bytes(rng.randrange(256) for _ in range(28))
        seed = struct.pack("<H", i)
        extra = bytes(rng.randrange(256) for _ in range(2 * rng.randrange(3)))
        write("run_small", f"gen-{i:02d}", fields + seed + extra)


# NBD constants (proto.md).
IHAVEOPT = 0x49484156454F5054
REQUEST_MAGIC = 0x25609513


def opt(option, data=b""):
    return struct.pack(">QII", IHAVEOPT, option, len(data)) + data


def req(typ, handle, off, length, flags=0, payload=b""):
    return struct.pack(">IHHQQI", REQUEST_MAGIC, flags, typ, handle, off, length) + payload


def go(name=b"", infos=()):
    return opt(7, struct.pack(">I", len(name)) + name + struct.pack(">H", len(infos)) + b"".join(struct.pack(">H", i) for i in infos))


def gen_nbd():
    flags = struct.pack(">I", 3)  # FIXED_NEWSTYLE | NO_ZEROES
    rw = req(1, 1, 0, 512, payload=bytes(range(256)) * 2) + req(0, 2, 0, 512) + req(3, 3, 0, 0) \
        + req(4, 4, 4096, 4096) + req(6, 5, 8192, 4096, flags=2) + req(5, 6, 0, 4096) + req(2, 7, 0, 0)
    seeds = {
        "go-rw": b"\x00" + flags + go(b"fuzz", (0, 1, 2, 3)) + rw,
        "sr-go-rw": b"\x00" + flags + opt(8) + go() + rw + req(0, 8, 512, 1024, flags=4),
        "export-name": b"\x00" + struct.pack(">I", 1) + opt(1, b"fuzz") + rw,
        "list-info-abort": b"\x00" + flags + opt(3) + go(b"nope") + opt(6, b"\0\0\0\0\0\0") + opt(5) + opt(2),
        "meta": b"\x00" + flags + opt(8) + opt(9, struct.pack(">I", 4) + b"fuzz" + struct.pack(">II", 1, 9) + b"base:allo") + opt(10, struct.pack(">II", 0, 0)) + go(),
        "ro-min512": b"\x05" + flags + go() + req(1, 1, 0, 512, payload=b"\xaa" * 512) + req(0, 2, 512, 512) + req(0, 3, 1, 511),
        "budget": b"\x08" + flags + go() + b"".join(req(1, h, h * 4096, 4096, payload=b"\x55" * 4096) for h in range(6)) + b"".join(req(0, 100 + h, h * 4096, 4096) for h in range(6)),
        "beyond": b"\x12" + flags + go() + req(0, 1, 255 << 10, 2048) + req(1, 2, (1 << 64) - 512, 1024, payload=b"\0" * 1024) + req(6, 3, 0, 4096, flags=16) + req(9, 4, 0, 0),
    }
    for name, data in seeds.items():
        write("nbd_stream", f"gen-{name}", data)


def gen_image():
    for i in range(4):
        write("image_recovery", f"gen-clean-{i}", bytes([i]))
        for area in range(4):
            muts = b"".join(bytes([area | (0x80 if rng.random() < 0.3 else 0)]) + struct.pack("<H", rng.randrange(65536)) + bytes([rng.randrange(1, 256)]) for _ in range(1 + rng.randrange(3)))
            write("image_recovery", f"gen-{i}-area{area}", bytes([i]) + muts)
        write("image_recovery", f"gen-{i}-battery", bytes([i | 4]) + bytes([1, 0x10, 0, 0xff]))
        write("image_recovery", f"gen-{i}-truncate", bytes([i | 8]) + struct.pack("<H", 100))


def check(generated, root):
    # Header lines are the formats' fixed column names, not trace content.
    headers = {"Timestamp,Response,IOType,LUN,Offset,Size", "version,time,op,size,lbn"}
    lines = set(l.strip() for l in generated if l.strip() and l.strip() not in headers)
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            opener = gzip.open if f.endswith(".gz") else open
            with opener(p, "rb") as fh:
                for raw in fh:
                    if raw.decode("utf-8", "replace").strip() in lines:
                        sys.exit(f"generated line found in {p}: {raw!r}")
    print(f"checked {len(lines)} generated trace lines against {root}: none occurs there")


if __name__ == "__main__":
    generated = gen_traces()
    gen_config()
    gen_run_small()
    gen_nbd()
    gen_image()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(generated, sys.argv[2])
