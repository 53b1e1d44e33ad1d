"""The small-sample lambda of PPI++ (issue 34; hvstats/ppi.py "Small samples"): coverage of the
95% interval with lambda fixed before the labels at N / (n + N) (HV's rule below 100 labels),
beside the power-tuned lambda and plain PPI's lambda = 1, and the half-width relative to people
alone. 0/1 labels with mean 0.3 (a Beta(2, 4.67) latent probability); three judges: "good"
(the latent probability plus noise), "weak" (a shrunk, noisier version) and "reversed"
(1 - probability); n labelled items, N judge-only ones (N = n, a pool about as large as the
sample, and N = 10 n). Prints one row per setting.

    .venv/bin/python perf/ppi_small_sample_sim.py [--studies 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hvstats.ppi import ppi_mean

TRUTH = 2 / 6.67  # the Beta(2, 4.67) mean


def judge_values(kind: str, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if kind == "good":
        return np.clip(p + rng.normal(0, 0.1, p.size), 0, 1)
    if kind == "weak":
        return np.clip(0.3 + 0.3 * (p - 0.3) + rng.normal(0, 0.2, p.size), 0, 1)
    return 1 - p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--studies", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    print(
        "| judge | n | N | coverage N/(n+N) | coverage tuned | coverage lambda = 1 "
        "| half-width / people alone: N/(n+N) | lambda = 1 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in ("good", "weak", "reversed"):
        for n in (20, 40, 80):
            for N in (n, 10 * n):
                hit = {"rule": 0, "tuned": 0, "one": 0}
                hw, h1, hc = [], [], []
                for _ in range(a.studies):
                    p = rng.beta(2, 4.67, size=n + N)
                    y = (rng.random(n + N) < p).astype(float)
                    f = judge_values(kind, p, rng)
                    for key, kw in (("rule", {}), ("tuned", {"small_sample_labels": 0}), ("one", {"lam": 1.0})):
                        r = ppi_mean(y[:n], f[:n], f[n:], **kw)
                        hit[key] += r["ci"][0] <= TRUTH <= r["ci"][1]
                        if key == "rule":
                            hw.append(r["ci"][1] - r["ci"][0])
                            hc.append(r["classical_ci"][1] - r["classical_ci"][0])
                        if key == "one":
                            h1.append(r["ci"][1] - r["ci"][0])
                s = a.studies
                print(
                    f"| {kind} | {n} | {N} | {hit['rule'] / s:.3f} | {hit['tuned'] / s:.3f} | {hit['one'] / s:.3f} "
                    f"| {np.mean(hw) / np.mean(hc):.2f} | {np.mean(h1) / np.mean(hc):.2f} |"
                )


if __name__ == "__main__":
    main()
