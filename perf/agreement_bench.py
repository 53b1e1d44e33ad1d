"""Benchmark of the agreement statistics core.

Prints (1) the wall time of the full agreement report for 100,000 items x 5 raters
(4 humans + 1 model judge; Likert 1-5 with 10% missing; all metrics, pairwise matrix,
leave-one-rater-out, 20 strata, 1,000-resample bootstrap), with Krippendorff's alpha of
stats vs the ``krippendorff`` package on its 4 human columns, and (2) Krippendorff's
alpha alone on 1,000,000 ratings: stats vs the ``krippendorff`` package vs NLTK's
``AnnotationTask`` (nltk from requirements-dev.txt) on the same data in one run, as ratios.

    python perf/agreement_bench.py [--items 100000] [--bootstrap 1000] [--repeat 1]
                                   [--alpha-ratings 1000000] [--alpha-repeat 3]
    python perf/agreement_bench.py --items 0          # only (2)
    python perf/agreement_bench.py --alpha-ratings 0  # only (1)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hvstats import agreement_report, krippendorff_alpha


def make_table(n_items: int, n_humans: int = 4, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n_items, 1))
    X = np.clip(np.round(3 + q + rng.normal(scale=0.8, size=(n_items, n_humans + 1))), 1, 5)
    X[rng.random(X.shape) < 0.1] = np.nan
    raters = [f"h{i}" for i in range(n_humans)] + ["judge"]
    items = np.repeat(np.arange(n_items), len(raters))
    df = pd.DataFrame(
        {
            "item": items.astype(str),
            "rater": np.tile(raters, n_items),
            "value": X.reshape(-1),
            "rater_kind": np.tile(["human"] * n_humans + ["model"], n_items),
            "stratum": (items % 20).astype(str),
        }
    )
    return df[~df["value"].isna()].reset_index(drop=True), X


def alpha_million(n_ratings: int, repeat: int) -> None:
    """Krippendorff's alpha alone on ``n_ratings`` ratings (4 raters, Likert 1-5, 10% missing):
    stats vs the ``krippendorff`` package vs NLTK's ``AnnotationTask`` on the same data.

    Each implementation gets the data in its own input format (ours: items x raters matrix
    with NaN; ``krippendorff``: raters x items; NLTK: (coder, item, label) triples; building
    the triples is timed separately, NLTK's own loading is inside its time).  NLTK defines
    alpha with a distance: ``binary_distance`` = nominal, ``interval_distance`` ((a-b)^2) =
    interval, the same definitions as ours, so the values must agree to ~1e-9."""
    n_items = int(np.ceil(n_ratings / (4 * 0.9)))
    rng = np.random.default_rng(1)
    q = rng.normal(size=(n_items, 1))
    X = np.clip(np.round(3 + q + rng.normal(scale=0.8, size=(n_items, 4))), 1, 5)
    X[rng.random(X.shape) < 0.1] = np.nan
    n = int((~np.isnan(X)).sum())
    print(f"alpha alone: {n_items:,} items x 4 raters, {n:,} ratings (10% missing), best of {repeat}")
    import krippendorff

    XT = np.ascontiguousarray(X.T)
    ours_t: dict[str, float] = {}
    ours_v: dict[str, float] = {}
    for level in ("nominal", "ordinal", "interval", "ratio"):
        t_ours, ours = timeit(lambda lv=level: krippendorff_alpha(X, lv).value, repeat)
        t_pkg, ref = timeit(lambda lv=level: krippendorff.alpha(reliability_data=XT, level_of_measurement=lv), repeat)
        ours_t[level], ours_v[level] = t_ours, ours
        print(
            f"  {level:<8} ours {t_ours * 1e3:8.1f} ms  krippendorff {t_pkg * 1e3:8.1f} ms  "
            f"krippendorff/ours x{t_pkg / t_ours:5.1f}  alpha={ours:.12f} |diff|={abs(ours - ref):.1e}"
        )
    try:
        from nltk.metrics.agreement import AnnotationTask
        from nltk.metrics.distance import binary_distance, interval_distance
    except ImportError:
        print("  nltk not installed: NLTK AnnotationTask comparison skipped (pip install -r requirements-dev.txt)")
        return
    import nltk

    t0 = time.perf_counter()
    ii, rr = np.nonzero(~np.isnan(X))
    triples = list(zip(rr.tolist(), ii.tolist(), X[ii, rr].tolist(), strict=True))
    t_build = time.perf_counter() - t0
    print(
        f"  NLTK {nltk.__version__}: building {len(triples):,} (coder, item, label) triples {t_build:.2f} s (not counted)"
    )
    for level, dist in (("nominal", binary_distance), ("interval", interval_distance)):
        t_n, ref = timeit(lambda d=dist: AnnotationTask(data=triples, distance=d).alpha(), repeat)
        print(
            f"  {level:<8} ours {ours_t[level] * 1e3:8.1f} ms  NLTK AnnotationTask {t_n * 1e3:8.1f} ms  "
            f"NLTK/ours x{t_n / ours_t[level]:6.1f}  |diff|={abs(ours_v[level] - ref):.1e}"
        )


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
    ap.add_argument(
        "--alpha-ratings",
        type=int,
        default=1_000_000,
        help="ratings (non-missing) for the alpha-alone comparison; 0 = skip it",
    )
    ap.add_argument("--alpha-repeat", type=int, default=3, help="timed runs per implementation (best is kept)")
    a = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (1 min) at start")
    if a.items:
        full_report(a)
    if a.alpha_ratings:
        alpha_million(a.alpha_ratings, a.alpha_repeat)
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


def full_report(a) -> None:
    df, X = make_table(a.items)
    runs = []
    for _ in range(a.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        rep = agreement_report(df, level="ordinal", by=["stratum"], bootstrap=a.bootstrap, seed=0)
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    t_rep, c_rep = min(runs)
    h = rep["fields"]["value"]["humans_vs_humans"]
    print(
        f"full report: {a.items} items x {X.shape[1]} raters (4 humans + 1 judge), 20 strata, "
        f"bootstrap={a.bootstrap}: {t_rep:.2f} s wall, {c_rep:.2f} s CPU (process_time; best of "
        f"{a.repeat}: " + ", ".join(f"{w:.2f}" for w, _ in runs) + " s)"
    )
    print(f"  alpha(ordinal)={h['krippendorff_alpha']['value']:.4f} CI={h['krippendorff_alpha']['ci']}")
    H = X[:, :4]
    import krippendorff

    for level in ("nominal", "ordinal", "interval", "ratio"):
        t_ours, ours = timeit(lambda lv=level: krippendorff_alpha(H, lv).value)
        t_pkg, ref = timeit(lambda lv=level: krippendorff.alpha(reliability_data=H.T, level_of_measurement=lv))
        print(
            f"alpha {level:<8} ours {t_ours * 1e3:8.2f} ms  krippendorff pkg {t_pkg * 1e3:8.2f} ms  "
            f"speed-up x{t_pkg / t_ours:6.1f}  |diff|={abs(ours - ref):.1e}"
        )


if __name__ == "__main__":
    main()
