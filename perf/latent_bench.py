"""Benchmark of the latent-truth aggregation of issue 11 (point 3): Dawid-Skene and MACE
(crowd-kit's models) through ``hvstats.latent.latent_truth_long``, the wrapper the
acceptance policy and the items export call.

Data: --items items (default 100,000) x --raters raters (default 5), every rater on every item,
3 classes with priors 0.5 / 0.3 / 0.2; rater r is right with probability 0.9, 0.8, 0.7, 0.6, 0.5
(further raters: 0.5), else says a uniformly drawn class ("realistic noise": one good rater,
one near-spammer). Each fit is timed from the long table (item, rater, label) to the result
(posteriors, entropies, per-rater accuracy and confusion matrices), crowd-kit's import excluded.
``--policy`` also times the whole policy path on ValueGround ratings held in memory (one
categorical question: the per-rating rubric context, the collector, the fit, ``decide`` per
item), beside the majority aggregation on the same ratings; no database.

Target (issue 11): Dawid-Skene over 100,000 items x 5 raters under 10 s. MACE runs with one
restart (crowd-kit 1.4.2 starts every restart from the same seeded point, so more change
nothing) and its 50 iterations. Prints the best of --repeat runs (default 3) and the share of
items whose posterior label is the simulated truth.

    python perf/latent_bench.py [--items 100000] [--raters 5] [--repeat 3] [--skip-mace] [--policy]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hvstats.latent import MACE_N_ITER, MACE_N_RESTARTS, latent_truth_long

ACCURACIES = (0.9, 0.8, 0.7, 0.6, 0.5)
PRIORS = (0.5, 0.3, 0.2)


def simulate(items: int, raters: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(PRIORS), size=items, p=PRIORS)
    acc = np.array([ACCURACIES[j] if j < len(ACCURACIES) else 0.5 for j in range(raters)])
    right = rng.random((items, raters)) < acc
    noise = rng.integers(0, len(PRIORS), (items, raters))
    return truth, np.where(right, truth[:, None], noise)


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def policy_path(grid: np.ndarray, repeat: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    import django

    django.setup()
    from annotation.rubric import Rubric
    from benchmarks.registry import get_preset
    from curation.policy import LatentCollector, PolicySpec, Rating, compile_policy, decide

    rubric = Rubric.from_schema(get_preset("valueground.pair_quality").rubric)
    policy = compile_policy(PolicySpec.parse({"rule": "q3 == 2", "aggregation": "dawid_skene"}), rubric)
    names = [f"rater_{j}" for j in range(grid.shape[1])]
    kinds = ["model" if j == grid.shape[1] - 1 else "human" for j in range(grid.shape[1])]
    ratings = {
        i: [Rating(names[j], kinds[j], {"q1": 2, "q2": 1, "q3": int(v), "q4": 1}) for j, v in enumerate(row)]
        for i, row in enumerate(grid)
    }

    def run():
        collector = LatentCollector(rubric, policy.latent_fields, "dawid_skene")
        for i, rs in ratings.items():
            collector.add(i, rs)
        latent = collector.fit()
        return [decide(policy, rs, latent, i).status for i, rs in ratings.items()]

    t, statuses = best_of(repeat, run)
    accepted = sum(s == "accepted" for s in statuses)
    print(f"policy path (ValueGround q3, Dawid-Skene, collect + fit + decide): {t:.2f} s, {accepted:,} accepted")
    majority = compile_policy(PolicySpec.parse({"rule": "q3 == 2", "aggregation": "majority"}), rubric)
    t, statuses = best_of(repeat, lambda: [decide(majority, rs).status for rs in ratings.values()])
    accepted = sum(s == "accepted" for s in statuses)
    print(f"the same with aggregation majority (decide only): {t:.2f} s, {accepted:,} accepted")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--raters", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-mace", action="store_true")
    ap.add_argument("--policy", action="store_true", help="also time the acceptance-policy path (Django, no DB)")
    a = ap.parse_args()
    truth, grid = simulate(a.items, a.raters)
    items = np.repeat(np.arange(a.items), a.raters).tolist()
    raters = [f"rater_{j}" for j in range(a.raters)] * a.items
    labels = grid.ravel().tolist()
    import crowdkit.aggregation  # noqa: F401  (imported once, outside the timings: 1-2 s)

    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    print(f"{a.items:,} items x {a.raters} raters = {len(labels):,} ratings, 3 classes")
    methods = ["dawid_skene"] + ([] if a.skip_mace else ["mace"])
    for method in methods:

        def fit(method=method):
            return latent_truth_long(items, raters, labels, method=method)

        t, res = best_of(a.repeat, fit)
        right = float(np.mean(np.array(res.labels) == truth))
        acc = ", ".join(f"{v:.2f}" for v in res.accuracy.values())
        extra = f" (n_restarts={MACE_N_RESTARTS}, n_iter={MACE_N_ITER})" if method == "mace" else ""
        print(f"{method}{extra}: {t:.2f} s best of {a.repeat}; posterior = truth on {right:.1%}; accuracy [{acc}]")
    if a.policy:
        policy_path(grid, a.repeat)


if __name__ == "__main__":
    main()
