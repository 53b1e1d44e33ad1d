"""All statistics for one items x raters matrix (one field, one stratum), sharing one set of
bootstrap resamples: humans vs humans (multi-rater coefficients, pairwise matrix,
leave-one-rater-out and split-half ceilings) and each judge vs the humans.

Human ceilings
--------------
- Leave-one-rater-out (ValueGround Table 4): each human vs the mean of the *other* humans
  on the items both exist for; the ceiling is the mean of the per-rater coefficients
  (bootstrap CI of that mean from the same resamples).
- Split-half: raters are randomly split into two halves (``n_splits`` seeded splits); the
  per-item means of the halves are correlated and Spearman-Brown corrected to full length,
  ``r_sb = 2 r / (1 + r)`` (Spearman 1910; Brown 1910), averaged over splits.

Judge vs humans
---------------
- vs the per-item mean of the humans (correlations) and vs the human majority label
  (kappa / percent agreement; ties in the majority drop the item).
- rank: the judge's correlation with the mean of *all* humans compared with each human's
  leave-one-out correlation; ``rank`` 1 = above every human, ``inside_spread`` = within
  [min, max] of the human values, ``difference`` = judge - mean human ceiling with a
  bootstrap CI (same resamples), i.e. "is the judge inside the human spread?".
"""
from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

import numpy as np

from .binary import binary_report
from .bootstrap import Block, compress_rows, percentile_ci, percentile_cis
from .correlation import CORRELATIONS, pair_result
from .kappa import MAX_CATEGORIES, fleiss_features, gwet_features, percent_agreement_features
from .outcomes import majority_vote
from .pairs import PairTable
from .reliability import alpha_features
from .result import MetricResult, undefined

MULTI_METRICS = ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1", "gwet_ac2_linear",
                 "gwet_ac2_quadratic", "percent_agreement")
CEILING_METRICS = ("pearson", "spearman")


def default_metrics(level: str, categorical: bool) -> list[str]:
    m = ["krippendorff_alpha"]
    if level != "nominal":
        m += ["pearson", "spearman", "kendall"]
    if categorical:
        m += ["cohen_kappa", "fleiss_kappa", "gwet_ac1", "percent_agreement"]
        if level != "nominal":
            m += ["cohen_kappa_linear", "cohen_kappa_quadratic", "gwet_ac2_linear", "gwet_ac2_quadratic"]
    return m


def _nanmean_rows(A: np.ndarray) -> np.ndarray:
    m = ~np.isnan(A)
    c = m.sum(1)
    s = np.where(m, A, 0.0).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, s / np.maximum(c, 1), np.nan)


class _Collector:
    def __init__(self, counts: np.ndarray):
        self.block = Block(counts)
        self.tables: dict[str, PairTable] = {}

    def pair(self, key: str, x, y, metrics: Sequence[str], labels=None, weights=None):
        t = PairTable(x, y, weights=weights)
        self.tables[key] = t
        ms = list(metrics)
        self.block.add(key, t.onehot(), lambda S, t=t, ms=ms, key=key: {
            f"{key}|{k}": v for k, v in t.compute(S, ms, labels=labels).items()})


def _ci(cis: dict, key: str, n_boot: int):
    """CI and undefined-resample count from the batch of :func:`percentile_cis`."""
    if not n_boot or key not in cis:
        return None, {}
    ci, bad = cis[key]
    return ci, ({"bootstrap_undefined": bad} if bad else {})


def analyse_matrix(X: np.ndarray, raters: Sequence[str], humans: Sequence[str], judges: Sequence[str],
                   level: str, metrics: Sequence[str] | None = None, n_boot: int = 1000,
                   rng: np.random.Generator | None = None, n_splits: int = 100, seed: int = 0,
                   positive: float | None = None) -> dict[str, Any]:
    """Everything for one matrix ``X`` (items x raters, NaN = missing, category codes for
    nominal data); ``raters`` names the columns."""
    rng = rng if rng is not None else np.random.default_rng(seed)
    raters = list(raters)
    hidx = [raters.index(h) for h in humans]
    jidx = [raters.index(j) for j in judges]
    X = np.asarray(X, dtype=float)
    P, cnt, _ = compress_rows(X)
    vals = P[~np.isnan(P)]
    cats = np.unique(vals)
    categorical = 0 < len(cats) <= MAX_CATEGORIES
    metrics = list(metrics) if metrics else default_metrics(level, categorical)
    numeric = level != "nominal"
    labels = cats if categorical else None
    H = P[:, hidx]
    col = _Collector(cnt)
    blk = col.block
    out: dict[str, Any] = {"n_items": int(cnt.sum()), "n_patterns": int(len(cnt)), "level": level,
                           "humans": list(humans), "judges": list(judges), "n_categories": int(len(cats))}
    nh = len(hidx)
    hm = (~np.isnan(H)).sum(1)
    n_multi = int(cnt[hm >= 2].sum())

    # ---- humans: multi-rater coefficients -------------------------------------------
    multi_plan = []
    for name in [m for m in MULTI_METRICS if m in metrics]:
        if nh < 2:
            multi_plan.append((name, "fewer than two human raters"))
            continue
        if n_multi == 0:
            multi_plan.append((name, "no item has two or more human ratings"))
            continue
        if name != "krippendorff_alpha" and not categorical:
            multi_plan.append((name, f"more than {MAX_CATEGORIES} distinct values: not categorical data"))
            continue
        if name.startswith("gwet_ac2") and not numeric:
            multi_plan.append((name, "weighted AC2 needs ordered categories"))
            continue
        if name == "krippendorff_alpha":
            fb = alpha_features(H, level)
            if fb is None:  # too many categories for bootstrap features: point only
                from .reliability import krippendorff_alpha
                multi_plan.append((name, krippendorff_alpha(H, level)))
                continue
        elif name == "fleiss_kappa":
            fb = fleiss_features(H, labels)
        elif name == "percent_agreement":
            fb = percent_agreement_features(H, labels)
        else:
            w = None if name == "gwet_ac1" else name.split("_")[-1]
            fb = gwet_features(H, w, labels)
        blk.add(f"multi|{name}", fb[0], fb[1])
        multi_plan.append((name, None))

    # ---- pairwise matrix over all raters --------------------------------------------
    pair_metrics = [m for m in metrics if m in CORRELATIONS and numeric] + \
                   [m for m in metrics if m.startswith("cohen_kappa") and categorical and
                    (numeric or m == "cohen_kappa")]
    if "percent_agreement" in metrics:
        pair_metrics.append("percent_agreement")
    all_idx = hidx + jidx
    names = [raters[i] for i in all_idx]
    pairs = list(combinations(range(len(all_idx)), 2))
    for a, b in pairs:
        ia, ib = all_idx[a], all_idx[b]
        if pair_metrics:
            col.pair(f"pw|{a}|{b}", P[:, ia], P[:, ib], pair_metrics, labels, weights=cnt)
        if "krippendorff_alpha" in metrics:
            t = col.tables.get(f"pw|{a}|{b}")
            if t is not None and t.G:
                # alpha of two raters is additive over the items rated by both, i.e. over
                # the pair's distinct (x, y) values: features of those G rows applied to
                # the pair's (resampled) joint counts
                fb = alpha_features(np.column_stack([t.xg, t.yg]), level)
                if fb is not None:
                    blk.add_derived(f"pw|{a}|{b}|krippendorff_alpha", f"pw|{a}|{b}", fb[0], fb[1])
            else:
                fb = alpha_features(P[:, [ia, ib]], level)
                if fb is not None:
                    blk.add(f"pw|{a}|{b}|krippendorff_alpha", fb[0], fb[1])

    # ---- leave-one-rater-out ----------------------------------------------------------
    ceil_metrics = [m for m in CEILING_METRICS if numeric and (m in metrics or "leave_one_rater_out" in metrics)]
    if nh >= 2 and ceil_metrics:
        for k, h in enumerate(hidx):
            others = [i for i in hidx if i != h]
            col.pair(f"loo|{k}", P[:, h], _nanmean_rows(P[:, others]), ceil_metrics, weights=cnt)

    # ---- judges -------------------------------------------------------------------------
    hmean = _nanmean_rows(H) if nh else np.full(len(P), np.nan)
    hmaj = majority_vote(H) if nh and categorical else np.full(len(P), np.nan)
    judge_corr = [m for m in metrics if m in CORRELATIONS and numeric]
    judge_cat = [m for m in metrics if m.startswith("cohen_kappa") and categorical and (numeric or m == "cohen_kappa")]
    if "percent_agreement" in metrics and categorical:
        judge_cat.append("percent_agreement")
    for k, j in enumerate(jidx):
        jc = sorted(set(judge_corr) | set(ceil_metrics))
        if nh and jc:
            col.pair(f"jm|{k}", P[:, j], hmean, jc, weights=cnt)
        if nh and judge_cat:
            col.pair(f"jv|{k}", P[:, j], hmaj, judge_cat, labels, weights=cnt)

    point, boot = blk.run(n_boot, rng)
    cis = percentile_cis(boot) if n_boot else {}

    def pres(key: str, metric: str, n_raters: int = 2) -> MetricResult:
        t = col.tables[key]
        v = point.get(f"{key}|{metric}", np.array([np.nan]))[0]
        if metric in CORRELATIONS:
            r = pair_result(t, metric, v, n_raters)
        else:
            n = int(round(t.n))
            if n < 2:
                r = undefined(metric, "fewer than two items rated by both", n, n_raters)
            elif not np.isfinite(v):
                r = undefined(metric, "chance agreement is 1 (a single category in use)", n, n_raters)
            else:
                r = MetricResult(metric, float(v), None, None, n, n_raters, None)
        if r.defined:
            r.ci, ex = _ci(cis, f"{key}|{metric}", n_boot)
            r.extra.update(ex)
        return r

    # assemble humans
    hum: dict[str, Any] = {}
    for name, why in multi_plan:
        if isinstance(why, MetricResult):
            hum[name] = why.to_dict()
            continue
        if why:
            hum[name] = undefined(name, why, n_multi, nh).to_dict()
            continue
        v = point[f"multi|{name}"][0]
        if not np.isfinite(v):
            r = undefined(name, "all ratings in a single category / no variation (expected disagreement 0)", n_multi, nh)
        else:
            r = MetricResult(name, float(v), None, None, n_multi, nh, None)
            r.ci, ex = _ci(cis, f"multi|{name}", n_boot)
            r.extra.update(ex)
            if name == "krippendorff_alpha":
                r.extra["level"] = level
        hum[name] = r.to_dict()

    pw: dict[str, Any] = {}
    for metric in pair_metrics + (["krippendorff_alpha"] if "krippendorff_alpha" in metrics else []):
        mat = [[None] * len(names) for _ in names]
        plist = []
        for a, b in pairs:
            if metric == "krippendorff_alpha":
                key = f"pw|{a}|{b}|krippendorff_alpha"
                if key not in point:
                    continue
                v = point[key][0]
                t = col.tables.get(f"pw|{a}|{b}")
                n = int(round(t.n)) if t is not None else None
                if np.isfinite(v):
                    r = MetricResult(metric, float(v), None, None, n or 0, 2, None)
                    r.ci, ex = _ci(cis, key, n_boot)
                    r.extra.update(ex)
                else:
                    r = undefined(metric, "no pairable items or no variation", n or 0, 2)
            else:
                r = pres(f"pw|{a}|{b}", metric)
            mat[a][b] = mat[b][a] = r.value
            d = r.to_dict()
            d["raters"] = [names[a], names[b]]
            plist.append(d)
        pw[metric] = {"raters": names, "matrix": mat, "pairs": plist}
    hum["pairwise"] = pw

    loo: dict[str, Any] = {}
    if nh >= 2 and ceil_metrics:
        for metric in ceil_metrics:
            per = {raters[h]: pres(f"loo|{k}", metric, nh) for k, h in enumerate(hidx)}
            vals = [r.value for r in per.values()]
            if any(v is None for v in vals):
                bad = [n for n, r in per.items() if r.value is None]
                res = undefined(metric, f"leave-one-out undefined for rater(s) {bad}", out["n_items"], nh)
            else:
                res = MetricResult(metric, float(np.mean(vals)), None, None,
                                   max(r.n_items for r in per.values()), nh, None)
                if n_boot:
                    bm = np.mean([boot[f"loo|{k}|{metric}"] for k in range(nh)], axis=0)
                    res.ci, ex = percentile_ci(bm)[0], {}
                    res.extra["boot"] = bm  # removed below (kept for judge rank)
            res.extra["per_rater"] = {n: r.to_dict() for n, r in per.items()}
            loo[metric] = res
    elif numeric:
        for metric in CEILING_METRICS:
            loo[metric] = undefined(metric, "fewer than two human raters", out["n_items"], nh)
    if numeric and nh >= 2:
        sh = _split_half_many(P[:, hidx], ceil_metrics, n_splits, seed, weights=cnt)
        hum["split_half"] = {m: sh[m].to_dict() for m in ceil_metrics}

    jout: dict[str, Any] = {}
    binary = categorical and len(cats) == 2
    pos = positive if positive is not None else (1.0 if 1.0 in cats else (cats.max() if len(cats) else None))
    for k, j in enumerate(jidx):
        jd: dict[str, Any] = {}
        if nh == 0:
            jd["reason"] = "undefined: no human raters to compare with"
            jout[raters[j]] = jd
            continue
        if judge_corr:
            jd["vs_human_mean"] = {m: pres(f"jm|{k}", m).to_dict() for m in judge_corr}
        if judge_cat:
            jd["vs_human_majority"] = {m: pres(f"jv|{k}", m).to_dict() for m in judge_cat}
        if loo:
            rank = {}
            for metric, lres in loo.items():
                jr = pres(f"jm|{k}", metric)
                hv = [d["value"] for d in lres.extra.get("per_rater", {}).values()]
                if jr.value is None or lres.value is None:
                    rank[metric] = {"value": None, "reason": jr.reason or lres.reason}
                    continue
                diff_ci = None
                if n_boot and "boot" in lres.extra:
                    diff_ci = percentile_ci(boot[f"jm|{k}|{metric}"] - lres.extra["boot"])[0]
                rank[metric] = {
                    "judge": jr.value, "human_leave_one_out": dict(zip(lres.extra["per_rater"].keys(), hv)),
                    "human_mean": lres.value, "human_min": min(hv), "human_max": max(hv),
                    "rank": 1 + sum(v > jr.value for v in hv), "of": len(hv) + 1,
                    "inside_spread": bool(min(hv) <= jr.value <= max(hv)),
                    "above_all_humans": bool(jr.value > max(hv)),
                    "difference": jr.value - lres.value, "difference_ci": diff_ci}
            jd["rank_among_humans"] = rank
        if binary:
            rep = np.repeat(np.arange(len(P)), cnt.astype(int))
            jd["binary_vs_majority"] = binary_report(P[rep, j], hmaj[rep], positive=pos)
            jd["positive_rate"] = _rate(P[:, j], cnt, pos)
        jout[raters[j]] = jd

    for res in loo.values():
        res.extra.pop("boot", None)
    hum["leave_one_rater_out"] = {m: r.to_dict() for m, r in loo.items()}
    if binary:
        hum["positive_rate"] = _rate(H.reshape(-1), np.repeat(cnt, nh), pos)
        hum["majority_positive_rate"] = _rate(hmaj, cnt, pos)
    out["humans_vs_humans"] = hum
    out["judges_vs_humans"] = jout
    return out


def _rate(v: np.ndarray, w: np.ndarray, pos) -> float | None:
    m = ~np.isnan(v)
    tot = w[m].sum()
    return float(w[m][v[m] == pos].sum() / tot) if tot else None


def split_half(data: np.ndarray, metric: str = "pearson", n_splits: int = 100, seed: int = 0,
               weights: np.ndarray | None = None) -> MetricResult:
    """Split-half reliability of the rater mean, Spearman-Brown corrected (see module doc).

    For each of ``n_splits`` seeded random splits of the raters into halves (sizes
    floor(R/2), ceil(R/2)) the per-item half means are correlated (``metric``) and
    corrected with r_sb = 2r/(1+r); the value is the mean over splits (``raw_mean`` is the
    uncorrected mean).
    """
    return _split_half_many(data, [metric], n_splits, seed, weights)[metric]


def _split_half_many(data: np.ndarray, metrics: Sequence[str], n_splits: int = 100, seed: int = 0,
                     weights: np.ndarray | None = None) -> dict[str, MetricResult]:
    """:func:`split_half` for several metrics: the same seeded splits for each metric, and
    each distinct split's half-mean table is built once."""
    X = np.asarray(data, dtype=float)
    R = X.shape[1]
    metrics = list(metrics)
    if R < 2:
        return {m: undefined(f"split_half_{m}", "fewer than two raters", X.shape[0], R) for m in metrics}
    rng = np.random.default_rng(seed)
    raw: dict[str, list] = {m: [] for m in metrics}
    sb: dict[str, list] = {m: [] for m in metrics}
    n_items = 0
    cache: dict[tuple, dict[str, float]] = {}
    for _ in range(n_splits):
        perm = rng.permutation(R)
        a, b = sorted(perm[: R // 2].tolist()), sorted(perm[R // 2:].tolist())
        key = (tuple(a), tuple(b))
        if key not in cache:  # few raters -> few distinct splits; compute each once
            t = PairTable(_nanmean_rows(X[:, a]), _nanmean_rows(X[:, b]), weights=weights)
            if t.G:
                vals = t.compute(t.counts[None], metrics)
                cache[key] = {m: vals[m][0] for m in metrics}
            else:
                cache[key] = {m: np.nan for m in metrics}
            n_items = max(n_items, int(round(t.n)))
        for m in metrics:
            v = cache[key][m]
            if np.isfinite(v):
                raw[m].append(v)
                sb[m].append(2 * v / (1 + v) if v > -1 else np.nan)
    out = {}
    for m in metrics:
        name = f"split_half_{m}"
        if not raw[m]:
            out[m] = undefined(name, "half means are constant or too few items", n_items, R)
            continue
        out[m] = MetricResult(name, float(np.nanmean(sb[m])), None, None, n_items, R, None,
                              {"raw_mean": float(np.mean(raw[m])), "n_splits": len(raw[m]),
                               "correction": "Spearman-Brown 2r/(1+r)"})
    return out


def leave_one_rater_out(data: np.ndarray, metric: str = "pearson", n_boot: int = 0, seed: int = 0,
                        raters: Sequence[str] | None = None) -> MetricResult:
    """Each rater vs the mean of the others, averaged (per-rater values in ``per_rater``)."""
    X = np.asarray(data, dtype=float)
    names = list(raters) if raters is not None else [f"r{i}" for i in range(X.shape[1])]
    r = analyse_matrix(X, names, names, [], "interval", [metric, "leave_one_rater_out"], n_boot,
                       np.random.default_rng(seed), seed=seed)
    d = r["humans_vs_humans"]["leave_one_rater_out"].get(metric)
    if d is None:
        return undefined(metric, "fewer than two raters", X.shape[0], X.shape[1])
    return _from_dict(d)


def judge_vs_humans(judge: np.ndarray, humans: np.ndarray, metric: str = "pearson",
                    n_boot: int = 0, seed: int = 0) -> dict[str, Any]:
    """Judge vs the human mean (``metric`` correlation) and its rank among the humans'
    leave-one-out correlations.  ``humans`` is items x human raters."""
    H = np.asarray(humans, dtype=float)
    names = [f"h{i}" for i in range(H.shape[1])]
    X = np.column_stack([H, np.asarray(judge, dtype=float)])
    r = analyse_matrix(X, names + ["judge"], names, ["judge"], "interval", [metric, "leave_one_rater_out"],
                       n_boot, np.random.default_rng(seed), seed=seed)
    j = r["judges_vs_humans"]["judge"]
    return {"vs_human_mean": j.get("vs_human_mean", {}).get(metric),
            "rank_among_humans": j.get("rank_among_humans", {}).get(metric)}


def _from_dict(d: dict) -> MetricResult:
    base = {k: d[k] for k in ("metric", "value", "p_value", "n_items", "n_raters", "reason")}
    extra = {k: v for k, v in d.items() if k not in base and k != "ci"}
    return MetricResult(ci=tuple(d["ci"]) if d.get("ci") else None, extra=extra, **base)
