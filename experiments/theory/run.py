"""Closed-form checks and the oracle yardstick (acceptance checks of the foundation).

1. Uniform random writes, page-mapped, one log, 64 pages per block, 4096 blocks, steady state:
   FIFO against WA = 1/(1-x), x = exp(-(1-x)/u); Greedy against the 64-page mean-field values
   2.605 (u = 0.80) and 4.840 (u = 0.90); Cost-benefit and CAT alongside.
2. Hot/cold 90/10 at u = 0.85, 64 pages per block: one mixed log (theory about 4.35 with Greedy)
   against the future-knowledge oracle with 2 and 4 logs, Greedy and Cost-benefit, next to the
   ideal-separation bound 1.759 (perfect hot/cold labels, optimal space split).

Usage: .venv/bin/python experiments/theory/run.py [--jobs N]
Writes uniform.csv and hotcold.csv next to this file and prints both tables.
"""

from __future__ import annotations

import argparse
import math
import pathlib

import nandlab

HERE = pathlib.Path(__file__).resolve().parent
BASE = {
    "device.blocks": 4096,
    "device.pages_per_block": 64,
    "workload.warmup_passes": 4,
    "workload.passes": 4,
}


def lrw_wa(u: float) -> float:
    x = 0.5
    for _ in range(500):
        x = math.exp(-(1 - x) / u)
    return 1 / (1 - x)


GREEDY_64 = {0.8: 2.605, 0.9: 4.840}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    uni = nandlab.sweep(dict(BASE, **{"workload.kind": "uniform"}),
                        {"device.utilization": [0.8, 0.9],
                         "ftl.cleaning": ["fifo", "greedy", "cost-benefit", "cat"]},
                        jobs=args.jobs)
    def theory(row):
        u = round(row["device.utilization"], 2)
        if row["ftl.cleaning"] == "fifo":
            return lrw_wa(u)
        if row["ftl.cleaning"] == "greedy":
            return GREEDY_64[u]
        return float("nan")
    uni["theory_wa"] = uni.apply(theory, axis=1)
    uni["error_pct"] = (uni["write_amplification"] / uni["theory_wa"] - 1) * 100
    cols = ["device.utilization", "ftl.cleaning", "write_amplification", "theory_wa", "error_pct",
            "host_writes_per_wall_second"]
    nandlab.write_csv(uni[cols], HERE / "uniform.csv")
    print(uni[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print()

    hc_base = dict(BASE, **{"workload.kind": "hotcold", "device.utilization": 0.85,
                            "workload.hot_access_fraction": 0.9,
                            "workload.hot_data_fraction": 0.1})
    mixed = nandlab.sweep(dict(hc_base, **{"ftl.placement": "none"}),
                          {"ftl.cleaning": ["greedy", "cost-benefit"]}, jobs=args.jobs)
    mixed["logs"] = 1
    oracle = nandlab.sweep(dict(hc_base, **{"ftl.placement": "oracle"}),
                           {"ftl.regions": [2, 4], "ftl.cleaning": ["greedy", "cost-benefit"]},
                           jobs=args.jobs)
    oracle["logs"] = oracle["ftl.regions"]
    import pandas as pd
    hc = pd.concat([mixed, oracle], ignore_index=True)
    hc["ideal_separation_bound"] = 1.759
    cols = ["ftl.placement", "logs", "ftl.cleaning", "write_amplification",
            "ideal_separation_bound"]
    nandlab.write_csv(hc[cols], HERE / "hotcold.csv")
    print(hc[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
