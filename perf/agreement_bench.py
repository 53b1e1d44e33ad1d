"""Benchmark of the agreement statistics core.

Prints (1) the wall time of the full agreement report for 100,000 items x 5 raters
(4 humans + 1 model judge; Likert 1-5 with 10% missing; all metrics, pairwise matrix,
leave-one-rater-out, 20 strata, 1,000-resample bootstrap), and (2) Krippendorff's alpha
time of agreement.stats vs the ``krippendorff`` package (and NLTK if installed) on the
same data, as a ratio.

    python perf/agreement_bench.py [--items 100000] [--bootstrap 1000] [--repeat 1]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from agreement.stats import agreement_report, krippendorff_alpha  # noqa: E402


def make_table(n_items: int, n_humans: int = 4, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n_items, 1))
    X = np.clip(np.round(3 + q + rng.normal(scale=0.8, size=(n_items, n_humans + 1))), 1, 5)
    X[rng.random(X.shape) < 0.1] = np.nan
    raters = [f"h{i}" for i in range(n_humans)] + ["judge"]
    items = np.repeat(np.arange(n_items), len(raters))
    df = pd.DataFrame({"item": items.astype(str), "rater": np.tile(raters, n_items),
                       "value": X.reshape(-1),
                       "rater_kind": np.tile(["human"] * n_humans + ["model"], n_items),
                       "stratum": (items % 20).astype(str)})
    return df[~df["value"].isna()].reset_index(drop=True), X


def timeit(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=1, help="report runs; the fastest is printed")
    a = ap.parse_args()
    df, X = make_table(a.items)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (1 min) at start")
    runs = []
    for _ in range(a.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        rep = agreement_report(df, level="ordinal", by=["stratum"], bootstrap=a.bootstrap, seed=0)
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    t_rep, c_rep = min(runs)
    h = rep["fields"]["value"]["humans_vs_humans"]
    print(f"full report: {a.items} items x {X.shape[1]} raters (4 humans + 1 judge), 20 strata, "
          f"bootstrap={a.bootstrap}: {t_rep:.2f} s wall, {c_rep:.2f} s CPU (process_time; best of "
          f"{a.repeat}: " + ", ".join(f"{w:.2f}" for w, _ in runs) + " s)")
    print(f"  alpha(ordinal)={h['krippendorff_alpha']['value']:.4f} CI={h['krippendorff_alpha']['ci']}")

    H = X[:, :4]
    import krippendorff
    for level in ("nominal", "ordinal", "interval", "ratio"):
        t_ours, ours = timeit(lambda: krippendorff_alpha(H, level).value)
        t_pkg, ref = timeit(lambda: krippendorff.alpha(reliability_data=H.T, level_of_measurement=level))
        print(f"alpha {level:<8} ours {t_ours * 1e3:8.2f} ms  krippendorff pkg {t_pkg * 1e3:8.2f} ms  "
              f"speed-up x{t_pkg / t_ours:6.1f}  |diff|={abs(ours - ref):.1e}")
    try:
        from nltk.metrics.agreement import AnnotationTask
    except ImportError:
        print("nltk not installed: NLTK AnnotationTask comparison skipped")
    else:
        n = min(len(H), 5000)
        triples = [(str(r), str(i), H[i, r]) for i in range(n) for r in range(4) if not np.isnan(H[i, r])]
        t_n, _ = timeit(lambda: AnnotationTask(data=triples).alpha(), repeat=1)
        t_o, _ = timeit(lambda: krippendorff_alpha(H[:n], "nominal"))
        print(f"alpha nominal ({n} items) ours {t_o * 1e3:.2f} ms  NLTK {t_n * 1e3:.1f} ms  speed-up x{t_n / t_o:.0f}")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


if __name__ == "__main__":
    main()
