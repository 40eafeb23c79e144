"""Coordinate descent over the six classes' band boundaries for `bounds rate`: the tuned bands
of README.md. Each step scales one boundary by 0.5, 0.7, 1.4 or 2 and keeps it if WA drops.

    python3 tune_bands.py WORKDIR TRACE TRUTH   (WORKDIR as run.sh left it)
"""
import os
import subprocess
import sys


def wa(workdir: str, trace: str, truth: str, bands: list[float]) -> float:
    env = dict(os.environ, BANDS=",".join(repr(b) for b in bands))
    out = subprocess.run(
        ["./bounds", f"{trace}.bin", "rate", truth],
        cwd=workdir, env=env, capture_output=True, text=True, check=True,
    ).stdout
    return float(out.split()[2])


def main() -> None:
    workdir, trace, truth = sys.argv[1:4]
    # Start: geometric ratio 6, distances scaled by 8 (the best geometric start found by hand).
    bands = [6.0 ** (i - 2) / 8 for i in range(5)]
    best = wa(workdir, trace, truth, bands)
    print("start", bands, best, flush=True)
    for _ in range(3):
        for i in range(len(bands)):
            for f in (0.5, 0.7, 1.4, 2.0):
                c = list(bands)
                c[i] *= f
                if any(c[j] >= c[j + 1] for j in range(len(c) - 1)):
                    continue
                w = wa(workdir, trace, truth, c)
                if w < best:
                    best, bands = w, c
                    print("better", bands, best, flush=True)
    print("final", ",".join(repr(b) for b in bands), best)


if __name__ == "__main__":
    main()
