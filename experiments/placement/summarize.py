"""The placement frontier's tables and plots (RESULTS.md's figures) from the committed CSVs:
peers.csv (run_peers.sh: the three reference traces), zipf.csv, real.csv and midas.csv
(frontier.sh).

    .venv/bin/python experiments/placement/summarize.py      (from the repository root)

Prints markdown tables (pasted into RESULTS.md) and writes reference.png and zipf.png here.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

HERE = Path(__file__).resolve().parent
ORDER = ["none", "dac", "sepbit", "warcip", "fadac", "midas", "lifetime", "oracle"]


def ordered(names: list[str]) -> list[str]:
    return [p for p in ORDER if p in names] + sorted(set(names) - set(ORDER))


def reference() -> None:
    peers = pd.read_csv(HERE / "peers.csv")
    ours = peers[peers["simulator"] == "nandlab"]
    for cleaning, g in ours.groupby("cleaning", sort=False):
        table = g.pivot(index="placement", columns="trace", values="wa")
        table = table.loc[ordered(list(table.index)), ["hc90", "zipf1", "zdrift1"]]
        print(f"\n### {cleaning}\n")
        print("| placement | hc90 | zipf1 | zdrift1 | mean ratio to dac |")
        print("|---|---|---|---|---|")
        for p, row in table.iterrows():
            ratio = (row / table.loc["dac"]).mean() if "dac" in table.index else float("nan")
            print(f"| {p} | " + " | ".join(f"{v:.3f}" for v in row) + f" | {ratio:.3f} |")
        if {"dac", "oracle", "lifetime"} <= set(table.index):
            dac, oracle, ours_ = table.loc["dac"], table.loc["oracle"], table.loc["lifetime"]
            closure = (dac - ours_) / (dac - oracle)
            print("\nlifetime's gap closure (dac − lifetime) / (dac − oracle): "
                  + ", ".join(f"{t} {c:.1%}" for t, c in closure.items()))
        fig, ax = plt.subplots(figsize=(8, 4))
        table.T.plot.bar(ax=ax, rot=0)
        ax.set_ylabel("write amplification")
        ax.set_title(f"Reference traces, {cleaning} cleaning, 6 regions (none: 1)")
        ax.legend(ncol=4, fontsize=8)
        fig.tight_layout()
        fig.savefig(HERE / f"reference_{cleaning}.png", dpi=110)
        plt.close(fig)


def zipf() -> None:
    path = HERE / "zipf.csv"
    if not path.exists():
        return
    z = pd.read_csv(path)
    for cleaning, zc in z.groupby("cleaning", sort=False):
        zipf_table(zc, cleaning)


def zipf_table(z: pd.DataFrame, cleaning: str) -> None:
    print(f"\n### zipf ({cleaning})\n")
    table = z.pivot_table(index=["exponent", "drift_fraction"], columns="placement", values="wa")
    cols = ordered(list(table.columns))
    print("| s | drift | " + " | ".join(cols) + " | lifetime ÷ dac |")
    print("|---|---|" + "---|" * (len(cols) + 1))
    for (s, d), row in table.iterrows():
        r = row["lifetime"] / row["dac"] if {"lifetime", "dac"} <= set(cols) else float("nan")
        print(f"| {s} | {d} | " + " | ".join(f"{row[c]:.3f}" for c in cols) + f" | {r:.3f} |")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (d, g) in zip(axes, z.groupby("drift_fraction")):
        for p in cols:
            gp = g[g["placement"] == p].sort_values("exponent")
            ax.plot(gp["exponent"], gp["wa"], marker="o", label=p)
        ax.set_title(f"zipf, drift fraction {d}")
        ax.set_xlabel("Zipf exponent s")
    axes[0].set_ylabel(f"write amplification ({cleaning})")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / f"zipf_{cleaning}.png", dpi=110)
    plt.close(fig)


def real() -> None:
    path = HERE / "real.csv"
    if not path.exists():
        return
    r = pd.read_csv(path)
    for (fit, cleaning), g in r.groupby(["fit", "cleaning"], sort=False):
        table = g.pivot(index="trace", columns="placement", values="wa")
        cols = ordered(list(table.columns))
        print(f"\n### real traces, fit {fit}, {cleaning} (40 replays)\n")
        print("| trace | " + " | ".join(cols) + " | lifetime ÷ dac |")
        print("|---|" + "---|" * (len(cols) + 1))
        for t, row in table.iterrows():
            q = row["lifetime"] / row["dac"] if {"lifetime", "dac"} <= set(cols) else float("nan")
            print(f"| {t} | " + " | ".join(f"{row[c]:.3f}" for c in cols) + f" | {q:.3f} |")


def midas() -> None:
    path = HERE / "midas.csv"
    if not path.exists():
        return
    m = pd.read_csv(path)
    for cleaning, g in m.groupby("cleaning", sort=False):
        table = g.pivot(index="placement", columns="trace", values="wa")
        table = table.loc[ordered(list(table.index)), ["hc90", "zipf1", "zdrift1"]]
        reserve = g.groupby("placement")["gc_free_blocks_min"].first()
        print(f"\n### MiDAS geometry, {cleaning}\n")
        print("| placement | hc90 | zipf1 | zdrift1 | mean ratio to dac | free blocks kept |")
        print("|---|---|---|---|---|---|")
        for p, row in table.iterrows():
            ratio = (row / table.loc["dac"]).mean()
            cells = " | ".join(f"{v:.3f}" for v in row)
            print(f"| {p} | {cells} | {ratio:.3f} | {reserve[p]} |")


if __name__ == "__main__":
    reference()
    zipf()
    real()
    midas()
