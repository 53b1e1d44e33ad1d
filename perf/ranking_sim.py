"""Simulated studies for prediction-powered ranking (issue 36; Chatzi et al., NeurIPS 2024).

Each study: ``k`` systems with Bradley-Terry strengths evenly spaced on [-s, s]; comparisons draw
a pair uniformly; people prefer ``a`` with probability ``(1 - tie) / (1 + exp(-(s_a - s_b)))``,
``b`` likewise, and tie otherwise (a tie is no win for either). The true win-rate of a system is
its expected share of wins over the comparisons it takes part in (closed form below), the true
ranking its order. ``--humans`` comparisons by people (each also judged: the labelled set) and
``--judged`` by the judge only. Two judges:

- good: repeats people's verdict with probability 0.8, otherwise answers uniformly among a, b, tie;
- biased: the good judge, except that in 30% of the comparisons of the system ranked 6th it
  declares that system the winner (a judge with a favourite).

Reported per judge and method (human-only on the labelled set, judge-only on all judged
comparisons, prediction-powered), at alpha 0.05 and 0.1, over ``--studies`` seeded studies:
coverage of the rank-sets (every system's true rank in its rank-set at once), of the
simultaneous intervals (every true win-rate in its interval at once), of the confidence
ellipsoid they are both read from (the one that should be near 1 - alpha), the average rank-set
size, and the SD of the standardised errors ``(theta_hat - theta) / sqrt(Sigma_ss)`` (over
studies, per system; min-max over systems) with the covariance of :mod:`hvstats.ranking` and, for
human-only, with the published code's scale (sums over ``n^2``).

``--arena HUMAN.json``: also the real-data check of the issue: ``--arena-size`` comparisons drawn
without replacement ``--arena-draws`` times from a Chatbot Arena file (the JSON lines of the
published repository's ``data/human.json``: ``model_a``, ``model_b``, ``winner``), the truth
being the win-rates over the whole file. numpy/scipy only (no database).

    .venv/bin/python perf/ranking_sim.py [--studies 1000] [--systems 8] [--humans 1000] [--judged 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import chi2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hvstats.ranking import (
    pairwise_win_rates,
    prediction_powered_win_rates,
    rank_sets,
    simultaneous_intervals,
)

TIE = 0.1
ALPHAS = (0.05, 0.1)
METHODS = ("human_only", "judge_only", "prediction_powered")


def true_win_rates(strength: np.ndarray) -> np.ndarray:
    """Pairs uniform: theta_s = (1 - tie) mean_{t != s} 1 / (1 + exp(-(s_s - s_t)))."""
    k = len(strength)
    p = 1 / (1 + np.exp(-(strength[:, None] - strength[None, :])))
    np.fill_diagonal(p, 0.0)
    return (1 - TIE) * p.sum(axis=1) / (k - 1)


def draw(rng: np.random.Generator, k: int, n: int, strength: np.ndarray, biased: bool):
    """(a, b, people's verdict, the judge's verdict), verdicts 0 tie, 1 a, 2 b."""
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    human = np.where(rng.random(n) < TIE, 0, np.where(rng.random(n) < p, 1, 2))
    judge = np.where(rng.random(n) < 0.8, human, rng.integers(0, 3, n))
    if biased:
        fav = 5  # the sixth strongest system
        push = rng.random(n) < 0.3
        judge = np.where(push & (a == fav), 1, np.where(push & (b == fav), 2, judge))
    return a, b, human, judge


def matrices(k: int, a: np.ndarray, b: np.ndarray, verdict: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(a)
    cols = np.arange(n)
    m = np.zeros((k, n))
    w = np.zeros((k, n))
    m[a, cols] = m[b, cols] = 1.0
    w[a, cols] = verdict == 1
    w[b, cols] = verdict == 2
    return m, w


def true_ranks(theta: np.ndarray) -> np.ndarray:
    return 1 + (theta[None, :] > theta[:, None]).sum(axis=1)


def simulate(args, biased: bool, seed: int) -> dict:
    k = args.systems
    strength = np.linspace(args.spread, -args.spread, k)
    theta = true_win_rates(strength)
    ranks = true_ranks(theta)
    rng = np.random.default_rng(seed)
    cover = {(m, a): 0 for m in METHODS for a in ALPHAS}
    sim_cover = dict(cover)
    ellipsoid = dict(cover)
    size = dict.fromkeys(cover, 0.0)
    z = {m: np.empty((args.studies, k)) for m in METHODS}
    z_published = np.empty((args.studies, k))
    lambdas = np.empty(args.studies)
    published_cover = dict.fromkeys(ALPHAS, 0)
    published_size = dict.fromkeys(ALPHAS, 0.0)
    for s in range(args.studies):
        a, b, h, f = draw(rng, k, args.humans, strength, biased)
        au, bu, _, fu = draw(rng, k, args.judged, strength, biased)
        m_l, h_l = matrices(k, a, b, h)
        _, f_l = matrices(k, a, b, f)
        m_u, f_u = matrices(k, au, bu, fu)
        est = {
            "human_only": pairwise_win_rates(m_l, h_l),
            "judge_only": pairwise_win_rates(np.hstack([m_l, m_u]), np.hstack([f_l, f_u])),
            "prediction_powered": prediction_powered_win_rates(m_l, h_l, f_l, m_u, f_u),
        }
        lambdas[s] = est["prediction_powered"].lam
        for m, e in est.items():
            se = np.sqrt(np.diag(e.covariance))
            z[m][s] = (e.win_rate - theta) / se
            err = e.win_rate - theta
            distance = float(err @ np.linalg.pinv(e.covariance) @ err)  # the paper's ellipsoid
            for alpha in ALPHAS:
                rs = rank_sets(e.win_rate, e.covariance, alpha)
                cover[m, alpha] += bool(np.all((rs[:, 0] <= ranks) & (ranks <= rs[:, 1])))
                size[m, alpha] += float((rs[:, 1] - rs[:, 0] + 1).mean())
                iv = simultaneous_intervals(e.win_rate, e.covariance, alpha)
                sim_cover[m, alpha] += bool(np.all((iv[:, 0] <= theta) & (theta <= iv[:, 1])))
                ellipsoid[m, alpha] += distance <= chi2.ppf(1 - alpha, k)
        counts = m_l.sum(axis=1)
        published = est["human_only"].covariance * np.outer(counts, counts) / args.humans**2
        z_published[s] = (est["human_only"].win_rate - theta) / np.sqrt(np.diag(published))
        for alpha in ALPHAS:  # the published scale's rank-sets, for the record
            rs = rank_sets(est["human_only"].win_rate, published, alpha)
            published_cover[alpha] += bool(np.all((rs[:, 0] <= ranks) & (ranks <= rs[:, 1])))
            published_size[alpha] += float((rs[:, 1] - rs[:, 0] + 1).mean())
    n = args.studies
    return {
        "coverage": {f"{m} alpha={a}": cover[m, a] / n for m, a in cover},
        "simultaneous": {f"{m} alpha={a}": sim_cover[m, a] / n for m, a in sim_cover},
        "ellipsoid": {f"{m} alpha={a}": ellipsoid[m, a] / n for m, a in ellipsoid},
        "size": {f"{m} alpha={a}": size[m, a] / n for m, a in size},
        "sd_z": {m: [float(z[m].std(axis=0).min()), float(z[m].std(axis=0).max())] for m in METHODS},
        "sd_z_published_scale_human_only": [float(z_published.std(axis=0).min()), float(z_published.std(axis=0).max())],
        "human_only_published_scale": {
            f"alpha={a}": {"coverage": published_cover[a] / n, "size": published_size[a] / n} for a in ALPHAS
        },
        "lambda_mean": float(lambdas.mean()),
        "true_win_rates": [round(float(t), 4) for t in theta],
    }


def arena_check(path: str, size: int, draws: int, seed: int) -> dict:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    systems = sorted({r["model_a"] for r in rows} | {r["model_b"] for r in rows})
    idx = {s: i for i, s in enumerate(systems)}
    a = np.array([idx[r["model_a"]] for r in rows])
    b = np.array([idx[r["model_b"]] for r in rows])
    v = np.array([{"model_a": 1, "model_b": 2}.get(r["winner"], 0) for r in rows])
    k = len(systems)
    truth = pairwise_win_rates(*matrices(k, a, b, v)).win_rate
    rng = np.random.default_rng(seed)
    z_ours, z_pub = [], []
    for _ in range(draws):
        pick = rng.choice(len(rows), size, replace=False)
        m, w = matrices(k, a[pick], b[pick], v[pick])
        e = pairwise_win_rates(m, w)
        counts = m.sum(axis=1)
        z_ours.append((e.win_rate - truth) / np.sqrt(np.diag(e.covariance)))
        z_pub.append((e.win_rate - truth) / np.sqrt(np.diag(e.covariance) * counts**2 / size**2))
    sd_o = np.nanstd(np.array(z_ours), axis=0)
    sd_p = np.nanstd(np.array(z_pub), axis=0)
    return {
        "systems": k,
        "comparisons": len(rows),
        "sd_z_ours": [round(float(sd_o.min()), 3), round(float(sd_o.max()), 3)],
        "sd_z_published_scale": [round(float(sd_p.min()), 2), round(float(sd_p.max()), 2)],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--studies", type=int, default=1000)
    ap.add_argument("--systems", type=int, default=8)
    ap.add_argument("--humans", type=int, default=1000, help="comparisons by people (each also judged)")
    ap.add_argument("--judged", type=int, default=10000, help="comparisons by the judge only")
    ap.add_argument("--spread", type=float, default=1.0, help="strengths evenly spaced on [-spread, spread]")
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--arena", help="Chatbot Arena JSON lines (model_a, model_b, winner) for the real-data check")
    ap.add_argument("--arena-size", type=int, default=1000)
    ap.add_argument("--arena-draws", type=int, default=300)
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    out = {
        "settings": {k: v for k, v in vars(args).items() if k != "arena"},
        "good_judge": simulate(args, biased=False, seed=args.seed),
        "biased_judge": simulate(args, biased=True, seed=args.seed + 1),
    }
    if args.arena:
        out["arena"] = arena_check(args.arena, args.arena_size, args.arena_draws, args.seed)
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    out["cpu_s"] = round(time.process_time() - c0, 1)
    out["load_average"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
