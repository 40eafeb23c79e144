#!/usr/bin/env python3
# Differential check of two nandlab builds on random multi-die configurations (gangs, channels,
# chips, dies, planes, schedulers, FTL kinds, open and closed loops): every metric but wall time
# must be identical. For engine speed work, whose timing semantics must not change (the golden
# metrics are all one die).
#   python3 scripts/engine_diff.py BEFORE_BINARY AFTER_BINARY CONFIGS SEED
import json, random, subprocess, sys
a, b, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
bad = 0
for i in range(n):
    ppd = rng.choice([1, 1, 2, 2, 4])
    gangs = rng.choice([1, 2, 3, 4, 8])
    chans = rng.choice([1, 2, 3])
    chips = rng.choice([1, 2, 4])
    dies = rng.choice([1, 2])
    if i % 7 == 0:
        gangs, chans, chips, dies = 8, 2, 4, 1   # 64 dies: heap events
    units = gangs * chans * chips * dies * ppd
    blocks = units * rng.choice([16, 24, 32])
    kind = rng.choice(["page", "page", "page", "bast", "fast"])
    sets = {
        "device.gangs": gangs, "device.channels_per_gang": chans, "device.chips_per_channel": chips,
        "device.dies_per_chip": dies, "device.planes_per_die": ppd, "device.blocks": blocks,
        "device.pages_per_block": rng.choice([16, 32, 64]),
        "ftl.kind": kind, "ftl.scheduler": rng.choice(["fifo", "read-priority"]),
        "timing.command_ns": rng.choice([0, 2000]),
        "timing.copy_page_ns": rng.choice([0, 0, 100000]),
        "workload.kind": rng.choice(["uniform", "hotcold"]),
        "workload.read_fraction": rng.choice([0.0, 0.3, 0.7]),
        "workload.arrival": rng.choice(["poisson", "closed"]),
        "workload.queue_depth": rng.choice([1, 4, 32]),
        "workload.passes": 2.0, "workload.warmup_passes": 1.0,
        "run.seed": rng.randrange(1000),
    }
    if kind == "page":
        sets["ftl.gc_mode"] = rng.choice(["foreground", "background"])

    if sets["workload.arrival"] == "poisson":
        sets["workload.arrival_rate_per_s"] = rng.choice([2000, 20000, 200000])
        del sets["workload.queue_depth"]
    if kind != "page":
        sets["device.blocks"] = blocks * 2
    out = []
    for binary in (a, b):
        args = [binary, "run", "-q", "--json", "-"]
        for k, v in sets.items():
            args += ["--set", f"{k}={v}"]
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode != 0:
            out.append(("error", p.stderr.strip()[-300:]))
            continue
        m = json.loads(p.stdout)["metrics"]
        out.append({k: v for k, v in m.items() if "wall" not in k and "seconds" not in k and "rss" not in k})
    same = out[0] == out[1]
    if not same:
        bad += 1
        diff = [k for k in out[0] if isinstance(out[0], dict) and out[0].get(k) != out[1].get(k)] if isinstance(out[0], dict) else out
        print("DIFF", i, sets, diff[:8])
    elif isinstance(out[0], tuple):
        print("both failed", i, out[0][1][:200])
print(f"{n - bad} of {n} identical")
