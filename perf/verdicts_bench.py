"""Benchmark of the judge verdicts of issue 11: the alt-test and the PPI++ mean.

- Alt-test (``hvstats.alt_test``): --humans annotators (default 10) x --items items
  (default 10,000; every human on every item, a 1-5 scale) x --judges judges (default 6), both
  scorings (negative RMSE and accuracy); the figure is the time for all judges of one scoring.
- PPI (``hvstats.ppi_mean``): --ppi-items items (default 1,000,000), 10% of them
  labelled, with the budget advice; the figure is one estimate with its CI and the
  human-only CI.

Targets (issue 11): alt-test 10 humans x 10,000 items x 6 judges under 2 s; PPI over
1,000,000 items under 1 s.  Prints the best of --repeat runs (default 3).

    python perf/verdicts_bench.py [--humans 10] [--items 10000] [--judges 6]
                                  [--ppi-items 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hvstats import alt_test, ppi_mean


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--humans", type=int, default=10)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--judges", type=int, default=6)
    ap.add_argument("--ppi-items", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, a.items)
    H = np.clip(
        truth[:, None] + (rng.random((a.items, a.humans)) < 0.3) * rng.integers(-1, 2, (a.items, a.humans)), 1, 5
    )
    H = H.astype(float)
    judges = [
        np.clip(truth + (rng.random(a.items) < 0.1 * (j + 1)) * rng.integers(-2, 3, a.items), 1, 5).astype(float)
        for j in range(a.judges)
    ]
    names = [f"h{k}" for k in range(a.humans)]
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    for scoring in ("neg_rmse", "accuracy"):
        t, res = best_of(a.repeat, lambda s=scoring: [alt_test(H, y, names, scoring=s, epsilon=0.15) for y in judges])
        wr = ", ".join(f"{r['winning_rate']:.1f}" for r in res)
        print(
            f"alt-test {scoring:<8}: {a.humans} humans x {a.items:,} items x {a.judges} judges "
            f"{t:.3f} s (winning rates {wr})"
        )
    n = a.ppi_items
    t_true = rng.normal(3.0, 1.0, n)
    yhat = 0.9 * t_true + 0.4 + rng.normal(0, 0.5, n)
    n_lab = n // 10
    t, r = best_of(a.repeat, lambda: ppi_mean(t_true[:n_lab], yhat[:n_lab], yhat[n_lab:], half_width=0.002))
    print(
        f"PPI mean over {n:,} items ({n_lab:,} labelled): {t:.3f} s "
        f"(estimate {r['estimate']:.4f} [{r['ci'][0]:.4f}, {r['ci'][1]:.4f}], human-only "
        f"[{r['classical_ci'][0]:.4f}, {r['classical_ci'][1]:.4f}], lambda {r['lambda']:.3f}, "
        f"budget for half-width 0.002: {r['budget']['ppi_items']:,} vs {r['budget']['classical_items']:,} items)"
    )


if __name__ == "__main__":
    main()
