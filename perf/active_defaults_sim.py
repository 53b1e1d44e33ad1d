"""Simulated studies behind the defaults that keep coverage (issue 34): the uniform mix ``tau``
of the active sampling rule, the small-sample rule for lambda (PPI++ and active) and whether the
active lambda is clipped to [0, 1].

Vectorised over studies (numpy only, no database): the active estimator, the sampling
probabilities and the PPI++ interval are written out here as ``hvstats.active`` /
``hvstats.ppi`` compute them (Zrnic and Candès 2024, the batch active estimator with power
tuning; Angelopoulos, Duchi and Zrnic 2023, PPI++ for the mean), and every setting checks its
first study against the platform's own ``sampling_probabilities``, ``active_mean`` and
``ppi_mean`` to 1e-9, so the figures are the platform's.

Generators (each study: ``f ~ Beta(0.6, 1.4)`` a calibrated probability of a 0/1 human verdict
``Y ~ Bernoulli(f)``, target ``E[Y] = 0.3``); what the judge reports:

- ``calibrated``: ``f``;
- ``scale_1_5``: ``1 + 4 f`` (a judge on a 1-5 scale, humans on 0/1);
- ``compressed``: ``f / 4`` (a judge on another, narrower scale: PPI++'s lambda* = 4);
- ``weak``: ``clip(f + N(0, 0.3^2), 0, 1)`` (a noisy judge; lambda* about 0.3).

Uncertainties given to the sampling rule: ``informative`` ``sqrt(f (1 - f))``; ``constant``;
``noisy`` ``sqrt(q (1 - q))`` with ``q ~ Beta(0.6, 1.4)`` drawn independently of ``f`` (the same
spread as the informative one, no signal); ``lognormal`` ``exp(N(0, 1))`` (heavier spread, no
signal).

Sections (``--section``): ``tau`` (coverage and labels saved against uniform PPI++ per tau),
``ppi_small`` (uniform PPI++ coverage by number of labels, power-tuned vs lambda = 1),
``active_small`` (active coverage by budget, power-tuned vs lambda = 1; 200 items),
``active_threshold`` (the same around the threshold of 200 labels; 2,000 items), ``clip`` (active
lambda clipped to [0, 1] or not: coverage and standard error).  "Uniform PPI++ labels for the
same mean half-width": the ``m`` at which uniform PPI++ at its population-optimal (clipped)
lambda, ``z sqrt(lambda^2 var(f) / (N - m) + var(Y - lambda f) / m)``, equals the active mean
half-width (population moments from 10^6 draws); labels saved = 1 - budget / m.

    .venv/bin/python perf/active_defaults_sim.py [--studies 2000] [--seed 34] [--section all]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hvstats.active import DEFAULT_FLOOR_FRACTION, SMALL_SAMPLE_LABELS, active_mean, sampling_probabilities
from hvstats.ppi import ppi_mean

TRUE_MEAN = 0.3
Z = 1.959963984540054
CHUNK = 250
JUDGES = ("calibrated", "scale_1_5", "compressed", "weak")
UNCERTAINTIES = ("informative", "constant", "noisy", "lognormal")


def draw(rng: np.random.Generator, S: int, N: int, judge: str, unc: str):
    f = rng.beta(0.6, 1.4, (S, N))
    y = (rng.random((S, N)) < f).astype(float)
    g = {
        "calibrated": lambda: f,
        "scale_1_5": lambda: 1 + 4 * f,
        "compressed": lambda: f / 4,
        "weak": lambda: np.clip(f + rng.normal(0, 0.3, (S, N)), 0, 1),
    }[judge]()
    if unc == "informative":
        u = np.sqrt(f * (1 - f))
    elif unc == "constant":
        u = np.ones((S, N))
    elif unc == "noisy":
        q = rng.beta(0.6, 1.4, (S, N))
        u = np.sqrt(q * (1 - q))
    else:
        u = np.exp(rng.normal(0, 1, (S, N)))
    return y, g, u


def probabilities(u: np.ndarray, nb: float, tau: float) -> np.ndarray:
    """``hvstats.active.sampling_probabilities`` row by row: the mixed rule scaled so that
    ``clip(c p, floor, 1)`` sums to the budget (bisection on ``log c``, then exact on the free items)."""
    S, N = u.shape
    base = nb / N
    fl = DEFAULT_FLOOR_FRACTION * base
    p = (1 - tau) * u * (nb / u.sum(axis=1, keepdims=True)) + tau * base
    p = np.maximum(p, 1e-300)
    lo, hi = np.full((S, 1), -40.0), np.full((S, 1), 40.0)
    for _ in range(90):
        mid = 0.5 * (lo + hi)
        low = np.clip(np.exp(mid) * p, fl, 1.0).sum(axis=1, keepdims=True) < nb
        lo, hi = np.where(low, mid, lo), np.where(low, hi, mid)
    cp = np.exp(hi) * p
    pi = np.clip(cp, fl, 1.0)
    free = (cp > fl) & (cp < 1.0)
    rest = nb - np.where(free, 0.0, pi).sum(axis=1, keepdims=True)
    scale = rest / np.where(free, p, 0.0).sum(axis=1, keepdims=True)
    return np.where(free, np.clip(p * scale, fl, 1.0), pi)


def active(y, g, pi, xi, mode: str):
    """The batch active estimator (``hvstats.active.active_mean``): increments
    ``A - lambda B``, ``A = Y xi / pi``, ``B = f (xi / pi - 1)``; lambda ``tuned`` (cov_0(A, B) /
    var_0(B)), ``clipped`` (that, clipped to [0, 1]), ``one``, or ``default`` (the platform's:
    1 with fewer than ``SMALL_SAMPLE_LABELS`` labels, else tuned and unclipped)."""
    A = np.where(xi, y, 0.0) / pi
    B = g * (xi / pi - 1.0)
    if mode == "one":
        lam = np.ones((len(y), 1))
    else:
        Bc = B - B.mean(axis=1, keepdims=True)
        Ac = A - A.mean(axis=1, keepdims=True)
        vb = (Bc * Bc).sum(axis=1, keepdims=True)
        lam = np.where(vb > 1e-300, (Ac * Bc).sum(axis=1, keepdims=True) / np.where(vb > 0, vb, 1.0), 0.0)
        if mode == "clipped":
            lam = np.clip(lam, 0.0, 1.0)
        if mode == "default":
            lam = np.where(xi.sum(axis=1, keepdims=True) < SMALL_SAMPLE_LABELS, 1.0, lam)
    Zi = A - lam * B
    return Zi.mean(axis=1), Zi.std(axis=1) / np.sqrt(y.shape[1]), lam[:, 0]


def ppi(y, g, n: int, mode: str):
    """``hvstats.ppi.ppi_mean`` with the first ``n`` items labelled, the rest judge-only;
    lambda ``tuned`` (PPI++ optimal, clipped to [0, 1]) or ``one``."""
    Y, Yh, Yu = y[:, :n], g[:, :n], g[:, n:]
    Nu = Yu.shape[1]
    if mode == "one":
        lam = np.ones((len(y), 1))
    else:
        cov = ((Y - Y.mean(1, keepdims=True)) * (Yh - Yh.mean(1, keepdims=True))).mean(1, keepdims=True)
        var = g.var(axis=1, ddof=1, keepdims=True)
        lam = np.clip(np.where(var > 0, cov / ((1 + n / Nu) * np.where(var > 0, var, 1.0)), 0.0), 0.0, 1.0)
    est = (lam * Yu).mean(1) + (Y - lam * Yh).mean(1)
    se = np.sqrt((lam * Yu).var(1) / Nu + (Y - lam * Yh).var(1) / n)
    return est, se, lam[:, 0]


def covered(est, se) -> np.ndarray:
    return np.abs(est - TRUE_MEAN) <= Z * se


def population(judge: str, seed: int) -> dict[str, float]:
    y, g, _ = draw(np.random.default_rng([seed, 999]), 1, 1_000_000, judge, "constant")
    y, g = y[0], g[0]
    return {"var_y": float(y.var()), "var_f": float(g.var()), "cov": float(np.cov(y, g, bias=True)[0, 1])}


def uniform_labels(hw: float, N: int, mom: dict[str, float]) -> float:
    """Labels uniform PPI++ needs (population-optimal clipped lambda) for half-width ``hw``."""
    m = np.arange(2, N, dtype=float)
    lam = np.clip(mom["cov"] / ((1 + m / (N - m)) * mom["var_f"]), 0, 1)
    w = Z * np.sqrt(lam**2 * mom["var_f"] / (N - m) + (mom["var_y"] - 2 * lam * mom["cov"] + lam**2 * mom["var_f"]) / m)
    return float(m[np.argmax(w <= hw)]) if (w <= hw).any() else float("nan")


def check_first(y, g, u, nb, tau, pi, xi, modes=("clipped",)) -> None:
    """The vectorised formulas are the platform's: first study against the platform's functions."""
    ref = sampling_probabilities(u[0], nb, tau=tau)
    assert np.max(np.abs(ref - pi[0])) < 1e-9, np.max(np.abs(ref - pi[0]))
    yy = np.where(xi[0], y[0], np.nan)
    for mode in modes:
        est, se, _ = active(y[:1], g[:1], pi[:1], xi[:1], mode)
        kw: dict = {"lam": 1.0} if mode == "one" else {}
        if mode in ("tuned", "clipped"):
            kw = {"clip_lambda": mode == "clipped", "small_sample_labels": 0}
        r = active_mean(yy, g[0], pi[0], compare=False, **kw)
        if r["estimate"] is not None:
            assert abs(r["estimate"] - est[0]) < 1e-9 and abs(r["se"] - se[0]) < 1e-9, (mode, r, est, se)


def run_active(S, N, nb, judge, unc, tau, seed, modes):
    res = {m: {"cov": [], "hw": [], "lam": []} for m in modes}
    labels = []
    for c0 in range(0, S, CHUNK):
        rng = np.random.default_rng([seed, N, nb, JUDGES.index(judge), UNCERTAINTIES.index(unc), c0])
        y, g, u = draw(rng, min(CHUNK, S - c0), N, judge, unc)
        pi = probabilities(u, nb, tau)
        xi = rng.random(pi.shape) < pi
        if c0 == 0:
            check_first(y, g, u, nb, tau, pi, xi, modes)
        ok = xi.sum(axis=1) >= 2  # active_mean's own rule: fewer than 2 labels = no estimate
        labels.append(xi.sum(axis=1))
        for m in modes:
            est, se, lam = active(y, g, pi, xi, m)
            res[m]["cov"].append(np.where(ok, covered(est, se), False))
            res[m]["hw"].append(Z * se[ok])
            res[m]["lam"].append(lam[ok])
    out = {m: {k: np.concatenate(v) for k, v in d.items()} for m, d in res.items()}
    return out, float(np.concatenate(labels).mean())


def section_tau(a) -> None:
    taus = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7)
    for N, nb in ((2000, 200), (200, 60), (200, 120)):
        mom = population("calibrated", a.seed)
        print(
            f"\n== tau: {a.studies} studies x {N} items, budget {nb}, calibrated judge, the platform's lambda "
            f"(1 below {SMALL_SAMPLE_LABELS} labels, else power-tuned, unclipped) =="
        )
        print("coverage / labels saved against uniform PPI++ (negative: active needs more)")
        print("| uncertainty | " + " | ".join(f"tau {t}" for t in taus) + " |")
        print("|---|" + "---:|" * len(taus))
        for unc in UNCERTAINTIES:
            cells = []
            for tau in taus:
                r, _ = run_active(a.studies, N, nb, "calibrated", unc, tau, a.seed, (a.lam,))
                c = r[a.lam]
                m = uniform_labels(float(c["hw"].mean()), N, mom)
                cells.append(f"{c['cov'].mean():.3f} / {100 * (1 - nb / m):+.0f}%")
            print(f"| {unc} | " + " | ".join(cells) + " |")
            sys.stdout.flush()


def section_ppi_small(a) -> None:
    ns = (10, 20, 30, 40, 50, 60, 80, 100, 150)
    for Ntot in (200, 2000):
        print(
            f"\n== PPI++ small samples: {a.studies} studies, {Ntot} items, n labelled uniformly, the rest judge-only =="
        )
        print("coverage power-tuned / lambda = 1 (mean half-width ratio lambda=1 : tuned)")
        print("| judge | " + " | ".join(f"n {n}" for n in ns) + " |")
        print("|---|" + "---:|" * len(ns))
        for judge in JUDGES:
            cells = []
            for n in ns:
                rng = np.random.default_rng([a.seed, Ntot, n, JUDGES.index(judge)])
                y, g, _ = draw(rng, a.studies, Ntot, judge, "constant")
                et, st, lt = ppi(y, g, n, "tuned")
                e1, s1, _ = ppi(y, g, n, "one")
                r = ppi_mean(y[0, :n], g[0, :n], g[0, n:], small_sample_labels=0)
                assert (
                    abs(r["estimate"] - et[0]) < 1e-9
                    and abs(r["se"] - st[0]) < 1e-9
                    and abs(r["lambda"] - lt[0]) < 1e-9
                )
                r1 = ppi_mean(y[0, :n], g[0, :n], g[0, n:], lam=1.0)
                assert abs(r1["se"] - s1[0]) < 1e-9
                cells.append(
                    f"{covered(et, st).mean():.3f} / {covered(e1, s1).mean():.3f} ({s1.mean() / st.mean():.2f})"
                )
            print(f"| {judge} | " + " | ".join(cells) + " |")
            sys.stdout.flush()


def section_active_small(a) -> None:
    budgets = (20, 30, 40, 60, 80, 100)
    N = 200
    for unc in ("informative", "noisy"):
        print(f"\n== active small samples: {a.studies} studies x {N} items, {unc} uncertainty, tau {a.tau} ==")
        print("coverage power-tuned (unclipped) / lambda = 1 (mean half-width ratio lambda=1 : tuned)")
        print("| judge | " + " | ".join(f"budget {b}" for b in budgets) + " |")
        print("|---|" + "---:|" * len(budgets))
        for judge in JUDGES:
            cells = []
            for nb in budgets:
                r, _ = run_active(a.studies, N, nb, judge, unc, a.tau, a.seed, ("tuned", "one"))
                t, o = r["tuned"], r["one"]
                cells.append(f"{t['cov'].mean():.3f} / {o['cov'].mean():.3f} ({o['hw'].mean() / t['hw'].mean():.2f})")
            print(f"| {judge} | " + " | ".join(cells) + " |")
            sys.stdout.flush()


def section_active_threshold(a) -> None:
    """Where the active small-sample rule stops: 2,000 items, budgets around the threshold."""
    budgets = (120, 150, 200, 300)
    N = 2000
    print(f"\n== active, where tuning becomes safe: {a.studies} studies x {N} items, calibrated judge, tau {a.tau} ==")
    print("coverage power-tuned (unclipped) / lambda = 1 (mean half-width ratio lambda=1 : tuned)")
    print("| uncertainty | " + " | ".join(f"budget {b}" for b in budgets) + " |")
    print("|---|" + "---:|" * len(budgets))
    for unc in ("informative", "constant", "noisy", "lognormal"):
        cells = []
        for nb in budgets:
            r, _ = run_active(a.studies, N, nb, "calibrated", unc, a.tau, a.seed, ("tuned", "one"))
            t, o = r["tuned"], r["one"]
            cells.append(f"{t['cov'].mean():.3f} / {o['cov'].mean():.3f} ({o['hw'].mean() / t['hw'].mean():.2f})")
        print(f"| {unc} | " + " | ".join(cells) + " |")
        sys.stdout.flush()


def section_clip(a) -> None:
    print(f"\n== active lambda clipped to [0, 1] or not: {a.studies} studies, tau {a.tau} ==")
    print(
        "| judge | uncertainty | items / budget | coverage clipped / unclipped | mean half-width clipped / unclipped | ratio | median lambda unclipped |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    for judge in JUDGES:
        for unc in ("informative", "noisy"):
            for N, nb in ((2000, 200), (200, 60)):
                r, _ = run_active(a.studies, N, nb, judge, unc, a.tau, a.seed, ("clipped", "tuned"))
                c, t = r["clipped"], r["tuned"]
                print(
                    f"| {judge} | {unc} | {N} / {nb} | {c['cov'].mean():.3f} / {t['cov'].mean():.3f} | "
                    f"{c['hw'].mean():.4f} / {t['hw'].mean():.4f} | {c['hw'].mean() / t['hw'].mean():.2f} | "
                    f"{np.median(t['lam']):.2f} |"
                )
                sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--studies", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--tau", type=float, default=0.5, help="tau for the small-sample and clip sections")
    ap.add_argument(
        "--lam", choices=("default", "tuned", "clipped", "one"), default="default", help="lambda in the tau section"
    )
    ap.add_argument(
        "--section", choices=("all", "tau", "ppi_small", "active_small", "active_threshold", "clip"), default="all"
    )
    a = ap.parse_args()
    t0 = time.perf_counter()
    print(f"{a.studies} studies per setting, seed {a.seed}; load average {os.getloadavg()[0]:.1f}")
    for name, fn in (
        ("tau", section_tau),
        ("ppi_small", section_ppi_small),
        ("active_small", section_active_small),
        ("active_threshold", section_active_threshold),
        ("clip", section_clip),
    ):
        if a.section in ("all", name):
            fn(a)
    print(f"\n{time.perf_counter() - t0:.1f} s wall, {time.process_time():.1f} s CPU")


if __name__ == "__main__":
    main()
