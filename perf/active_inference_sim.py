"""Simulated studies for active statistical inference (issue 27; Zrnic and Candès, ICML 2024).

Each study: ``N`` items, a judge that gives a calibrated probability ``f`` of a 0/1 human
verdict (``f ~ Beta(0.6, 1.4)``, ``Y ~ Bernoulli(f)``, so the target ``E[Y] = 0.3``), and an
expected budget of ``n_b`` human labels.  Two uncertainties:

- informative: ``u = sqrt(f (1 - f))``, the judge's root expected squared error (what
  ``hvstats.active.binary_uncertainty`` gives);
- uninformative: ``u`` constant (the judge's uncertainty carries no signal), so the rule is
  uniform;
- noisy (issue 34): ``u = sqrt(q (1 - q))`` with ``q ~ Beta(0.6, 1.4)`` drawn independently of
  ``f``: the same spread as the informative one and no signal, so the rule varies the
  probabilities for nothing.

``--judge-scale A B``: the judge reports ``A + B f`` instead of ``f`` (a judge on another scale
than the 0/1 human verdict, e.g. ``1 4`` for a 1-5 score); the uncertainty stays the one above.

Reported per uncertainty, over ``--studies`` seeded studies: coverage of the 95% intervals of
the active estimate (batch), of its sequential variant (4 rounds, later rounds refitted on the
labels so far) and of the asymptotic confidence sequence at the round chosen by a
stop-at-half-width rule; the mean half-width; and the human labels that uniform sampling
needs for the same mean half-width, with PPI++ (``hvstats.ppi.ppi_mean``, ``m`` items drawn
uniformly, the rest judge-only) and with humans alone (the classical interval), found by
linear interpolation over a grid of ``m`` run on the same studies (as the reference
repository's ``make_budget_plot``).  Labels saved = that ``m`` minus the active expected
budget, as a share of ``m``.  numpy/scipy only (no database).  The estimates use the
platform's defaults (``hvstats.active.DEFAULT_TAU``, the small-sample lambda rules of
``hvstats.active`` and ``hvstats.ppi``) unless ``--tau`` is given.

    .venv/bin/python perf/active_inference_sim.py [--studies 1000] [--items 4000] [--budget 400]
        [--kinds informative,uninformative,noisy] [--judge-scale 0 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hvstats.active import (
    DEFAULT_TAU,
    active_mean,
    active_sequential,
    binary_uncertainty,
    draw_sample,
    plan_rounds,
    refit_uncertainty,
    sampling_probabilities,
)
from hvstats.ppi import SMALL_SAMPLE_LABELS as PPI_SMALL_SAMPLE_LABELS
from hvstats.ppi import ppi_mean

TRUE_MEAN = 0.6 / (0.6 + 1.4)
ROUNDS = 4
STOP_FACTOR = 1.9  # stop target = 1.9 x the batch estimate's mean half-width (a round-3 stop is possible)


def study(rng: np.random.Generator, N: int, kind: str, scale: tuple[float, float] = (0.0, 1.0)):
    """``(judge value, human 0/1, uncertainty)`` of one study (module docstring)."""
    f = rng.beta(0.6, 1.4, N)
    y = (rng.random(N) < f).astype(float)
    if kind == "informative":
        u = binary_uncertainty(f)
    elif kind == "noisy":
        u = binary_uncertainty(rng.beta(0.6, 1.4, N))
    else:
        u = np.ones(N)
    return scale[0] + scale[1] * f, y, u


def uniform_half_widths(y: np.ndarray, f: np.ndarray, perm: np.ndarray, grid: np.ndarray, z: float):
    """Half-widths of uniform PPI++ and of humans alone with the first ``m`` items of ``perm``
    labelled, for every ``m`` in ``grid``: ``hvstats.ppi.ppi_mean``'s formulas (power-tuned,
    clipped lambda, 1 below its small-sample threshold; ddof 0 variances) from prefix sums, so the grid costs O(N) per study."""
    N = len(y)
    ys, fs = y[perm], f[perm]
    c = {k: np.cumsum(v)[grid - 1] for k, v in {"y": ys, "f": fs, "yy": ys * ys, "ff": fs * fs, "yf": ys * fs}.items()}
    n, Nu = grid.astype(float), (N - grid).astype(float)
    my, mf = c["y"] / n, c["f"] / n
    vy = c["yy"] / n - my**2
    cov = c["yf"] / n - my * mf
    vfl = c["ff"] / n - mf**2
    mu = (f.sum() - c["f"]) / Nu
    vu = (np.sum(f * f) - c["ff"]) / Nu - mu**2
    var_all = np.var(f, ddof=1)
    lam = np.clip(cov / ((1 + n / Nu) * var_all), 0.0, 1.0)
    lam = np.where(grid < PPI_SMALL_SAMPLE_LABELS, 1.0, lam)  # hvstats.ppi's small-sample rule
    var_d = vy - 2 * lam * cov + lam**2 * vfl
    ppi = z * np.sqrt(lam**2 * vu / Nu + var_d / n)
    return ppi, z * np.sqrt(vy / n), lam


def run(
    kind: str, studies: int, N: int, nb: int, grid: np.ndarray, seed: int, tau: float, scale: tuple[float, float]
) -> dict:
    z = 1.959963984540054
    cov = {"batch": 0, "sequential": 0, "stopped_cs": 0, "stopped_ci": 0, "uniform_ppi": 0, "human_only": 0}
    hw_active, hw_seq, labels, ess_ppi, ess_h, stop_rounds = [], [], [], [], [], []
    hw_ppi = np.zeros((studies, len(grid)))
    hw_cl = np.zeros((studies, len(grid)))
    jb = int(np.searchsorted(grid, nb))
    for s in range(studies):
        rng = np.random.default_rng([seed, s])
        f, y, u = study(rng, N, kind, scale)
        pi = sampling_probabilities(u, nb, tau=tau)
        xi = draw_sample(pi, rng)
        r = active_mean(np.where(xi == 1, y, np.nan), f, pi)
        cov["batch"] += r["ci"][0] <= TRUE_MEAN <= r["ci"][1]
        hw_active.append(r["half_width"])
        labels.append(r["n_labeled"])
        ess_ppi.append(r["uniform"]["ppi_effective_labels"] or N)
        ess_h.append(r["uniform"]["human_only_effective_labels"])
        # uniform baselines on the same study, over the grid of label counts
        perm = rng.permutation(N)
        hw_ppi[s], hw_cl[s], lam = uniform_half_widths(y, f, perm, grid, z)
        lab, unl = perm[:nb], perm[nb:]
        p = ppi_mean(y[lab], f[lab], f[unl])  # the grid's formulas are stats.ppi's
        assert abs(p["ci"][1] - p["estimate"] - hw_ppi[s, jb]) < 1e-9 and abs(p["lambda"] - lam[jb]) < 1e-9
        cov["uniform_ppi"] += p["ci"][0] <= TRUE_MEAN <= p["ci"][1]
        cov["human_only"] += p["classical_ci"][0] <= TRUE_MEAN <= p["classical_ci"][1]
    target = STOP_FACTOR * float(np.mean(hw_active))
    for s in range(studies):
        rng = np.random.default_rng([seed, s, 1])
        f, y, u = study(rng, N, kind, scale)
        # sequential: 4 rounds, rounds > 0 refit the uncertainty on the labels so far
        rounds = plan_rounds(N, ROUNDS, rng)
        spi, sxi = np.zeros(N), np.zeros(N, dtype=int)
        stopped = None
        for k in range(ROUNDS):
            m, done = rounds == k, rounds < k
            uk = u[m] if k == 0 else refit_uncertainty(u[done], f[done], y[done], sxi[done], spi[done], u[m])
            spi[m] = sampling_probabilities(uk, nb / ROUNDS, tau=tau)
            sxi[m] = draw_sample(spi[m], rng)
            d = rounds <= k
            yy = np.where(sxi[d] == 1, y[d], np.nan)
            sr = active_sequential(yy, f[d], spi[d], rounds[d], stop_half_width=target, planned_items=N, compare=False)
            if stopped is None and (sr["stop"] or k == ROUNDS - 1):
                stopped = sr
                stop_rounds.append(k + 1)
        cov["stopped_cs"] += stopped["cs"][0] <= TRUE_MEAN <= stopped["cs"][1]
        cov["stopped_ci"] += stopped["ci"][0] <= TRUE_MEAN <= stopped["ci"][1]
        cov["sequential"] += sr["ci"][0] <= TRUE_MEAN <= sr["ci"][1]
        hw_seq.append(sr["half_width"])
    w = float(np.mean(hw_active))

    def labels_for(widths: np.ndarray) -> float:
        mw = widths.mean(axis=0)  # decreasing in m
        if w >= mw[0] or w <= mw[-1]:
            return float("nan")
        return float(np.interp(w, mw[::-1], grid[::-1].astype(float)))

    m_ppi, m_cl = labels_for(hw_ppi), labels_for(hw_cl)
    return {
        "coverage": {k: v / studies for k, v in cov.items()},
        "half_width": w,
        "half_width_ppi_same_labels": float(hw_ppi[:, jb].mean()),
        "half_width_human_same_labels": float(hw_cl[:, jb].mean()),
        "half_width_sequential": float(np.mean(hw_seq)),
        "stop_target": target,
        "labels_mean": float(np.mean(labels)),
        "m_ppi": m_ppi,
        "m_human": m_cl,
        "saved_ppi": 1 - nb / m_ppi,
        "saved_human": 1 - nb / m_cl,
        "ess_ppi": float(np.mean(ess_ppi)),
        "ess_human": float(np.mean(ess_h)),
        "stop_rounds": float(np.mean(stop_rounds)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--studies", type=int, default=1000)
    ap.add_argument("--items", type=int, default=4000)
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument(
        "--tau",
        type=float,
        default=DEFAULT_TAU,
        help="weight of the uniform rule (the paper's mixing; default the platform's)",
    )
    ap.add_argument(
        "--kinds", default="informative,uninformative", help="uncertainties: informative, uninformative, noisy"
    )
    ap.add_argument(
        "--judge-scale", type=float, nargs=2, default=(0.0, 1.0), metavar=("A", "B"), help="judge = A + B f"
    )
    a = ap.parse_args()
    scale = (a.judge_scale[0], a.judge_scale[1])
    grid = np.unique(np.r_[np.arange(20, min(1000, a.items - 1), 10), np.arange(1000, a.items - 100, 50), a.budget])
    grid = grid[(grid >= 2) & (grid < a.items)]
    t0 = time.perf_counter()
    print(
        f"{a.studies} studies x {a.items} items, expected budget {a.budget} human labels, target E[Y] = {TRUE_MEAN}, "
        f"tau {a.tau}, judge {scale[0]:g} + {scale[1]:g} f, seed {a.seed}; load average {os.getloadavg()[0]:.1f}"
    )
    for kind in a.kinds.split(","):
        r = run(kind, a.studies, a.items, a.budget, grid, a.seed, a.tau, scale)
        c = r["coverage"]
        print(f"\n== {kind} uncertainty ==")
        print(
            f"coverage of 95% intervals: active batch {c['batch']:.3f}, sequential (4 rounds, refit) "
            f"{c['sequential']:.3f}, stopped at half-width <= target: asymptotic CS {c['stopped_cs']:.3f} "
            f"(fixed-n CLT interval {c['stopped_ci']:.3f}); uniform PPI++ {c['uniform_ppi']:.3f}, "
            f"humans alone {c['human_only']:.3f}  (mean stop round {r['stop_rounds']:.2f} of {ROUNDS})"
        )
        print(
            f"mean half-width: active {r['half_width']:.4f} (sequential {r['half_width_sequential']:.4f}) "
            f"with {r['labels_mean']:.1f} labels on average; uniform PPI++ {r['half_width_ppi_same_labels']:.4f}, "
            f"humans alone {r['half_width_human_same_labels']:.4f} with {a.budget} labels; stop target "
            f"{r['stop_target']:.4f}"
        )
        print(
            f"uniform labels for the same mean half-width: PPI++ {r['m_ppi']:.0f} (active saves "
            f"{100 * r['saved_ppi']:.1f}%), humans alone {r['m_human']:.0f} (saves {100 * r['saved_human']:.1f}%)"
        )
        print(
            f"effective sample size from one study's own estimate (mean): PPI++ {r['ess_ppi']:.0f}, "
            f"humans alone {r['ess_human']:.0f}"
        )
    print(f"\n{time.perf_counter() - t0:.1f} s wall, {time.process_time():.1f} s CPU")


if __name__ == "__main__":
    main()
