#!/usr/bin/env python3
"""Write the side-by-side benchmark as an MQSim ASCII trace (Python stdlib only).

Each line is "arrival_ns device start_sector size_sectors type", space separated, where
sectors are 512 bytes and type 0 is a write (1 would be a read). Request i arrives at
i * interval_ns and writes one aligned 4 KiB page (8 sectors) chosen uniformly at random
from [0, pages). The output depends only on the arguments.
"""

import argparse
import random
import sys
from typing import TextIO

SECTORS_PER_PAGE = 4096 // 512


def write_trace(out: TextIO, rng: random.Random, args: argparse.Namespace) -> None:
    buf = []
    for i in range(args.requests):
        sector = rng.randrange(args.pages) * SECTORS_PER_PAGE
        buf.append(f"{i * args.interval_ns} {args.device} {sector} {SECTORS_PER_PAGE} 0\n")
        if len(buf) >= 65536:
            out.write("".join(buf))
            buf.clear()
    out.write("".join(buf))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1_000_000,
                    help="number of writes (default 1,000,000)")
    ap.add_argument("--pages", type=int, default=48_000,
                    help="4 KiB pages addressed uniformly (default 48,000)")
    ap.add_argument("--interval-ns", type=int, default=600_000,
                    help="gap between arrivals in ns (default 600,000 = 600 µs)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--device", type=int, default=0, help="device number column (default 0)")
    ap.add_argument("-o", "--output", default="-", help="output path (default stdout)")
    args = ap.parse_args()
    if args.requests < 1 or args.pages < 1 or args.interval_ns < 0:
        ap.error("--requests and --pages must be >= 1 and --interval-ns >= 0")

    rng = random.Random(args.seed)
    if args.output == "-":
        write_trace(sys.stdout, rng, args)
    else:
        with open(args.output, "w", encoding="ascii", newline="\n") as out:
            write_trace(out, rng, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
