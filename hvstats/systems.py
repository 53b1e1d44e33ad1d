"""Does the benchmark's conclusion hold? Per-system scores, their ranking and named findings,
from a judge on every item and people on a sample (issue 36).

A *system* is the value of one item stratum (the generating model, the backbone, the pipeline);
each item belongs to one system. For one field and one judge, with each item's human score the
mean of its human ratings (as :func:`hvstats.report._add_verdicts` takes it):

- **scores** per system by three methods: people only (the mean human score over the items
  people rated), the judge only (the judge's mean over every item it rated) and PPI++ (the
  judge on all items plus people on the sample: Angelopoulos, Duchi and Zrnic, "PPI++", 2023,
  the power-tuned mean of Sec. 2, one lambda per system; :func:`hvstats.ranking.rated_prediction_powered_means`);
  each with its standard error and a **simultaneous** 1 - alpha interval over the systems by
  the **Bonferroni** correction (``z_{1 - alpha / (2 k)}`` for ``k`` systems);
- every **pairwise difference** ``A - B`` with a Bonferroni interval over the ``k (k - 1) / 2``
  pairs (``z_{1 - alpha / (k (k - 1))}``) and a sentence: "A scores higher than B", "B scores
  higher than A" or "cannot tell"; and whether the judge alone reaches the same sentence;
- **rank-sets** for the three methods (Chatzi et al., NeurIPS 2024, Algorithm 2, applied to the
  per-system means and their covariance: :func:`hvstats.ranking.rank_sets`), and the systems
  whose judge-only rank falls outside the PPI++ rank-set;
- **system-level agreement**: Kendall's tau-b and Spearman's rho (scipy) between the judge's and
  people's system scores, with a percentile interval from an item bootstrap (items resampled
  with replacement within each system, so every system stays; ``seed``), and the pairs of
  systems the judge orders differently from people (opposite strict signs);
- **findings**: a named comparison of two groups of items (values of a stratum, e.g. Global
  North vs Global South): the difference of the two groups' PPI++ means with a (single, not
  corrected) 1 - alpha interval, beside the human-only and judge-only differences, and whether
  the judge-only conclusion survives (the PPI++ interval gives the same sentence).

Systems (and groups) share no items, so their estimates are independent: the covariance of the
means is diagonal and a difference's variance is the sum of the two variances. Intervals are
normal (Wald) intervals, as :func:`hvstats.ppi.ppi_mean`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, norm, rankdata, spearmanr

from .data import RatingTableError, to_frame
from .ranking import WinRates, pairwise_win_rates, rank_sets, rated_prediction_powered_means
from .report import field_codes, item_rater_matrix
from .tables import Cell, Row, Table

DEFAULT_ALPHA = 0.05
DEFAULT_BOOTSTRAP = 1000
METHODS = ("human_only", "judge_only", "ppi")
CORRECTION = "Bonferroni"
#: the sentences a difference reads as (``{a}``, ``{b}`` the two sides)
HIGHER, LOWER, CANNOT_TELL = "higher", "lower", "cannot_tell"


class SystemsInputError(ValueError):
    """A system column, field, judge or finding that the ratings cannot answer."""


@dataclass(frozen=True)
class Finding:
    """A researcher's comparison: the items whose ``column`` is in ``group_a`` vs those in ``group_b``."""

    column: str
    group_a: tuple[str, ...]
    group_b: tuple[str, ...]

    @property
    def label_a(self) -> str:
        return " + ".join(self.group_a)

    @property
    def label_b(self) -> str:
        return " + ".join(self.group_b)

    @classmethod
    def parse(cls, text: str) -> Finding:
        """``"column: A1, A2 vs B1"`` (values comma-separated, the two groups split by `` vs ``)."""
        col, sep, rest = str(text).partition(":")
        parts = rest.split(" vs ")
        if not sep or not col.strip() or len(parts) != 2:
            raise SystemsInputError(
                f"a finding reads 'column: value, value vs value, value' (e.g. 'region: Global North vs Global South'), "
                f"got {str(text)[:80]!r}"
            )
        a = tuple(v.strip() for v in parts[0].split(",") if v.strip())
        b = tuple(v.strip() for v in parts[1].split(",") if v.strip())
        if not a or not b:
            raise SystemsInputError("each side of a finding needs at least one value")
        if set(a) & set(b):
            raise SystemsInputError(
                f"a value cannot be on both sides of a finding: {', '.join(sorted(set(a) & set(b)))}"
            )
        return cls(col.strip(), a, b)

    def __str__(self) -> str:
        return f"{self.column}: {', '.join(self.group_a)} vs {', '.join(self.group_b)}"


@dataclass(frozen=True)
class ItemScores:
    """One field, one judge: per item its system (or group), people's mean score (``nan`` where
    no person rated it) and the judge's score (``nan`` where the judge did not)."""

    items: np.ndarray
    label: np.ndarray
    human: np.ndarray
    judge: np.ndarray


def item_scores(frame: Any, column: str, field: str, judge: str, level: str | None = None) -> ItemScores:
    """People's mean and the judge's score of every item of ``field``, with its ``column`` value.
    A numeric field, or a nominal one with two labels (the second label = 1), as PPI++ takes it."""
    df = to_frame(frame)
    if column not in df.columns:
        raise SystemsInputError(f"unknown stratum column {column!r}")
    sub = df[df["field"] == field].reset_index(drop=True)
    if not len(sub):
        raise SystemsInputError(f"no ratings of field {field!r}")
    fc = field_codes(sub, level, None)
    if fc.labels is not None and len(fc.labels) != 2:
        raise SystemsInputError(
            f"field {field!r} is nominal with {len(fc.labels)} labels: scores need numbers or two labels"
        )
    if judge not in fc.judges:
        raise SystemsInputError(f"{judge!r} is not a judge of field {field!r}")
    cols = [*fc.humans, judge]
    X = item_rater_matrix(fc.item_codes, len(fc.item_ids), _columns(sub, cols), fc.values, cols, fc.item_ids, field)
    H = X[:, : len(fc.humans)]
    cnt = (~np.isnan(H)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        human = np.where(cnt > 0, np.nansum(H, axis=1) / np.maximum(cnt, 1), np.nan)
    first = sub.groupby(fc.item_codes)[column].agg(lambda s: s.dropna().astype(str).unique().tolist())
    labels = np.empty(len(fc.item_ids), dtype=object)
    for code, vals in first.items():
        vals = [v for v in vals if v.strip()]
        if len(vals) > 1:
            raise SystemsInputError(f"item {fc.item_ids[code]!r} has several {column!r} values: {', '.join(vals)}")
        labels[code] = vals[0] if vals else None
    return ItemScores(np.asarray(fc.item_ids, dtype=object), labels, human, X[:, -1])


def _columns(sub: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """Each row's column in ``cols`` (-1: a rater left out, e.g. another judge)."""
    pos = {r: k for k, r in enumerate(cols)}
    return sub["rater"].map(lambda r: pos.get(r, -1)).to_numpy(dtype=np.int64)


def _layout(scores: ItemScores, groups: Sequence[Sequence[str]]) -> tuple[np.ndarray, ...]:
    """``k x items`` participation of the labelled (people and judge), unlabelled (judge only),
    human (any person) and judge (the judge) items of each group, and the human and judge values."""
    member = np.array([[lab in set(g) for lab in scores.label] for g in groups], dtype=bool).reshape(
        len(groups), len(scores.label)
    )
    has_h, has_j = ~np.isnan(scores.human), ~np.isnan(scores.judge)
    m_l = member & has_h & has_j
    m_u = member & ~has_h & has_j
    m_h = member & has_h
    m_j = member & has_j
    h = np.broadcast_to(np.nan_to_num(scores.human), member.shape)
    f = np.broadcast_to(np.nan_to_num(scores.judge), member.shape)
    return m_l, m_u, m_h, m_j, h, f


def _estimates(scores: ItemScores, groups: Sequence[Sequence[str]]) -> dict[str, WinRates]:
    """The three methods' per-group means and covariances (``nan`` where a group lacks the items)."""
    m_l, m_u, m_h, m_j, h, f = _layout(scores, groups)
    human = pairwise_win_rates(m_h, h)
    judge = pairwise_win_rates(m_j, f)
    ppi = rated_prediction_powered_means(m_l, h, f, m_u, f)
    # fewer than 2 labelled items: PPI++ is undefined there (as hvstats.ppi.ppi_mean says)
    few = m_l.sum(axis=1) < 2
    if few.any():
        est, cov = ppi.win_rate.copy(), ppi.covariance.copy()
        est[few] = np.nan
        cov[few, :] = np.nan
        cov[:, few] = np.nan
        ppi = WinRates(est, cov, ppi.lam)
    return {"human_only": human, "judge_only": judge, "ppi": ppi}


def _num(x: Any) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


def verdict(low: float | None, high: float | None) -> str:
    """``higher`` when the interval of ``A - B`` lies above 0, ``lower`` below, else ``cannot_tell``."""
    if low is None or high is None:
        return CANNOT_TELL
    if low > 0:
        return HIGHER
    if high < 0:
        return LOWER
    return CANNOT_TELL


def sentence(a: str, b: str, outcome: str) -> str:
    """The plain sentence of a difference ``a - b``."""
    if outcome == HIGHER:
        return f"{a} scores higher than {b}"
    if outcome == LOWER:
        return f"{b} scores higher than {a}"
    return f"cannot tell {a} from {b}"


def _point_ranks(values: np.ndarray) -> list[int | None]:
    """1 + the number of systems with a strictly higher score (ties share the better rank)."""
    ok = np.isfinite(values)
    return [int(1 + (values[ok] > v).sum()) if ok[i] else None for i, v in enumerate(values)]


def _difference(est: WinRates, i: int, j: int, z: float) -> dict[str, Any]:
    d = est.win_rate[i] - est.win_rate[j]
    var = est.covariance[i, i] + est.covariance[j, j] - 2 * est.covariance[i, j]
    if not (math.isfinite(d) and math.isfinite(var)):
        return {"estimate": None, "se": None, "ci": None, "outcome": CANNOT_TELL}
    se = math.sqrt(max(float(var), 0.0))
    lo, hi = float(d - z * se), float(d + z * se)
    return {"estimate": float(d), "se": se, "ci": [lo, hi], "outcome": verdict(lo, hi)}


def _correlations(human: np.ndarray, judge: np.ndarray) -> tuple[float | None, float | None]:
    ok = np.isfinite(human) & np.isfinite(judge)
    if ok.sum() < 2 or np.ptp(human[ok]) == 0 or np.ptp(judge[ok]) == 0:
        return None, None
    return _num(kendalltau(judge[ok], human[ok]).statistic), _num(spearmanr(judge[ok], human[ok]).statistic)


def _bootstrap_correlations(
    scores: ItemScores, systems: Sequence[str], bootstrap: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b and Spearman's rho over ``bootstrap`` item resamples: every system's items
    drawn with replacement (``rng.integers(0, n_s, (bootstrap, n_s))`` per system, systems in
    order), people's and the judge's system means recomputed over the drawn items they rated.
    Written out over all resamples at once (tau-b and rho of ``k`` means; ``nan`` where either
    side is constant); the tests recompute each resample with scipy."""
    rng = np.random.default_rng(seed)
    k = len(systems)
    hm, jm = np.full((bootstrap, k), np.nan), np.full((bootstrap, k), np.nan)
    for i, s in enumerate(systems):
        r = np.flatnonzero(scores.label == s)
        draw = r[rng.integers(0, len(r), (bootstrap, len(r)))]
        for means, values in ((hm, scores.human), (jm, scores.judge)):
            v = values[draw]
            cnt = (~np.isnan(v)).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                means[:, i] = np.where(cnt > 0, np.nansum(v, axis=1) / cnt, np.nan)
    iu, ju = np.triu_indices(k, 1)
    sh, sj = np.sign(hm[:, iu] - hm[:, ju]), np.sign(jm[:, iu] - jm[:, ju])
    with np.errstate(invalid="ignore", divide="ignore"):
        # tau-b = (concordant - discordant) / sqrt(pairs untied in x * pairs untied in y)
        taus = (sh * sj).sum(axis=1) / np.sqrt((sh != 0).sum(axis=1) * (sj != 0).sum(axis=1))
        rh, rj = rankdata(hm, axis=1), rankdata(jm, axis=1)
        rh, rj = rh - rh.mean(axis=1, keepdims=True), rj - rj.mean(axis=1, keepdims=True)
        rhos = (rh * rj).sum(axis=1) / np.sqrt((rh**2).sum(axis=1) * (rj**2).sum(axis=1))
    incomplete = np.isnan(hm).any(axis=1) | np.isnan(jm).any(axis=1)
    taus[incomplete | ~np.isfinite(taus)] = np.nan
    rhos[incomplete | ~np.isfinite(rhos)] = np.nan
    return taus, rhos


def _percentile_interval(values: np.ndarray, alpha: float) -> list[float] | None:
    ok = values[np.isfinite(values)]
    if not len(ok):
        return None
    return [float(np.quantile(ok, alpha / 2)), float(np.quantile(ok, 1 - alpha / 2))]


def _check(alpha: float, bootstrap: int) -> None:
    if not 0.0 < alpha < 1.0:
        raise SystemsInputError("alpha must be in (0, 1)")
    if bootstrap < 0:
        raise SystemsInputError("bootstrap must be zero or positive")


def system_scores(
    scores: ItemScores, *, alpha: float = DEFAULT_ALPHA, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0
) -> dict[str, Any]:
    """Per-system scores, pairwise differences, rank-sets and system-level agreement of one
    field and one judge (module docstring). Items without a system value are left out."""
    _check(alpha, bootstrap)
    systems = sorted({s for s in scores.label if s is not None})
    k = len(systems)
    if k < 2:
        raise SystemsInputError(f"the system column needs at least two values, found {k}")
    est = _estimates(scores, [[s] for s in systems])
    z_sys = float(norm.ppf(1 - alpha / (2 * k)))
    n_pairs = k * (k - 1) // 2
    z_pair = float(norm.ppf(1 - alpha / (2 * n_pairs)))
    m_l, m_u, *_ = _layout(scores, [[s] for s in systems])
    rows = []
    for i, s in enumerate(systems):
        row: dict[str, Any] = {
            "system": s,
            "n_items": int((scores.label == s).sum()),
            "n_labelled": int(m_l[i].sum()),
            "n_judge_only": int(m_u[i].sum()),
        }
        for m in METHODS:
            v, var = est[m].win_rate[i], est[m].covariance[i, i]
            se = math.sqrt(var) if math.isfinite(var) and var >= 0 else None
            row[m] = {
                "estimate": _num(v),
                "se": se,
                "ci": [float(v - z_sys * se), float(v + z_sys * se)] if se is not None and math.isfinite(v) else None,
            }
        lam = est["ppi"].lam
        row["ppi"]["lambda"] = _num(np.asarray(lam)[i]) if np.ndim(lam) else _num(lam)
        rows.append(row)
    pairs = []
    for i in range(k):
        for j in range(i + 1, k):
            a, b = systems[i], systems[j]
            p: dict[str, Any] = {"a": a, "b": b}
            for m in METHODS:
                p[m] = _difference(est[m], i, j, z_pair)
            p["sentence"] = sentence(a, b, p["ppi"]["outcome"])
            p["judge_only_sentence"] = sentence(a, b, p["judge_only"]["outcome"])
            p["judge_only_holds"] = p["judge_only"]["outcome"] == p["ppi"]["outcome"]
            pairs.append(p)
    ranks: dict[str, Any] = {}
    for m in METHODS:
        sets = rank_sets(est[m].win_rate, est[m].covariance, alpha)
        ranks[m] = {s: [int(sets[i, 0]), int(sets[i, 1])] for i, s in enumerate(systems)}
    judge_rank = _point_ranks(est["judge_only"].win_rate)
    for i, row in enumerate(rows):
        row["judge_only_rank"] = judge_rank[i]
    outside = [
        {"system": s, "judge_only_rank": judge_rank[i], "ppi_rank_set": ranks["ppi"][s]}
        for i, s in enumerate(systems)
        if judge_rank[i] is not None
        and np.isfinite(est["ppi"].win_rate[i])
        and not ranks["ppi"][s][0] <= judge_rank[i] <= ranks["ppi"][s][1]
    ]
    hs, js = est["human_only"].win_rate, est["judge_only"].win_rate
    tau, rho = _correlations(hs, js)
    taus, rhos = _bootstrap_correlations(scores, systems, bootstrap, seed) if bootstrap else (np.array([]),) * 2
    discordant = [
        {"a": systems[i], "b": systems[j], "judge": float(js[i] - js[j]), "people": float(hs[i] - hs[j])}
        for i in range(k)
        for j in range(i + 1, k)
        if np.isfinite(hs[[i, j]]).all()
        and np.isfinite(js[[i, j]]).all()
        and np.sign(js[i] - js[j]) * np.sign(hs[i] - hs[j]) < 0
    ]
    return {
        "systems": rows,
        "pairs": pairs,
        "rank_sets": ranks,
        "judge_outside_rank_sets": outside,
        "agreement": {
            "kendall_tau": {"value": tau, "ci": _percentile_interval(taus, alpha)},
            "spearman": {"value": rho, "ci": _percentile_interval(rhos, alpha)},
            "discordant_pairs": discordant,
            "bootstrap": bootstrap,
            "seed": seed,
        },
        "alpha": alpha,
        "correction": (
            f"{CORRECTION}: each of the {k} systems' intervals at 1 - alpha/{k}, each of the {n_pairs} "
            f"differences at 1 - alpha/{n_pairs}"
        ),
    }


def finding(
    frame: Any, found: Finding, field: str, judge: str, *, alpha: float = DEFAULT_ALPHA, level: str | None = None
) -> dict[str, Any]:
    """A named comparison's difference ``A - B`` (module docstring) by the three methods, its
    1 - alpha interval, the sentences, and whether the judge-only conclusion survives PPI++."""
    _check(alpha, 0)
    scores = item_scores(frame, found.column, field, judge, level)
    seen = {s for s in scores.label if s is not None}
    missing = [v for v in (*found.group_a, *found.group_b) if v not in seen]
    if missing:
        raise SystemsInputError(
            f"{found.column!r} has no value {', '.join(repr(v) for v in missing)}; its values: {', '.join(sorted(seen))}"
        )
    est = _estimates(scores, [found.group_a, found.group_b])
    z = float(norm.ppf(1 - alpha / 2))
    m_l, m_u, *_ = _layout(scores, [found.group_a, found.group_b])
    out: dict[str, Any] = {
        "finding": str(found),
        "column": found.column,
        "a": found.label_a,
        "b": found.label_b,
        "field": field,
        "judge": judge,
        "alpha": alpha,
        "n_labelled": [int(m_l[0].sum()), int(m_l[1].sum())],
        "n_judge_only": [int(m_u[0].sum()), int(m_u[1].sum())],
    }
    for m in METHODS:
        out[m] = _difference(est[m], 0, 1, z)
        out[m]["means"] = [_num(est[m].win_rate[0]), _num(est[m].win_rate[1])]
    out["sentence"] = sentence(found.label_a, found.label_b, out["ppi"]["outcome"])
    out["judge_only_sentence"] = sentence(found.label_a, found.label_b, out["judge_only"]["outcome"])
    out["judge_only_holds"] = out["judge_only"]["outcome"] == out["ppi"]["outcome"]
    return out


def conclusions(
    frame: Any,
    system: str,
    *,
    fields: Sequence[str],
    judges: Sequence[str] | None = None,
    findings: Sequence[Finding] = (),
    levels: Mapping[str, str] | None = None,
    alpha: float = DEFAULT_ALPHA,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = 0,
) -> dict[str, Any]:
    """ "Does the benchmark's conclusion hold?": :func:`system_scores` per (field, judge) over
    ``system``, and each finding per (field, judge). Fields that cannot be scored (a nominal
    field with more than two labels, no judge, no human) are named in ``skipped`` with why."""
    _check(alpha, bootstrap)
    df = to_frame(frame)
    if system not in df.columns:
        raise SystemsInputError(f"unknown stratum column {system!r}")
    for fd in findings:
        if fd.column not in df.columns:
            raise SystemsInputError(f"unknown stratum column {fd.column!r} in the finding {str(fd)!r}")
        seen = set(df[fd.column].dropna().astype(str))
        missing = [v for v in (*fd.group_a, *fd.group_b) if v not in seen]
        if missing:
            raise SystemsInputError(
                f"{fd.column!r} has no value {', '.join(repr(v) for v in missing)}; its values: {', '.join(sorted(seen))}"
            )
    out: dict[str, Any] = {
        "system": system,
        "alpha": alpha,
        "fields": {},
        "findings": [],
        "skipped": {},
    }
    for fi, f in enumerate(fields):
        sub = df[df["field"] == f]
        kinds = sub.groupby("rater")["rater_kind"].first()
        field_judges = [r for r in sorted(kinds.index) if kinds[r] == "model" and (not judges or r in judges)]
        if not (kinds == "human").any() or not field_judges:
            out["skipped"][f] = "needs ratings by people and by a judge"
            continue
        per_judge: dict[str, Any] = {}
        for ji, j in enumerate(field_judges):
            try:
                scores = item_scores(sub, system, f, j, (levels or {}).get(f))
                per_judge[j] = system_scores(scores, alpha=alpha, bootstrap=bootstrap, seed=seed + 1000 * fi + ji)
            except (SystemsInputError, RatingTableError) as exc:
                out["skipped"][f] = str(exc)
                per_judge = {}
                break
            for fd in findings:
                try:
                    out["findings"].append(finding(sub, fd, f, j, alpha=alpha, level=(levels or {}).get(f)))
                except SystemsInputError as exc:  # this field lacks a group's items: the others still count
                    out["skipped"][f"{f}: {fd}"] = str(exc)
        if per_judge:
            out["fields"][f] = per_judge
    return out


# ------------------------------------------------------------------------------ tables


def _rank_text(r: Sequence[int] | None) -> str:
    return "–" if not r else (str(r[0]) if r[0] == r[1] else f"{r[0]}-{r[1]}")


def _mean_cell(d: Mapping[str, Any], n: int | None) -> Cell:
    ci = d.get("ci")
    return Cell(d.get("estimate"), (float(ci[0]), float(ci[1])) if ci else None, n, "num")


def _corr_cell(d: Mapping[str, Any], n: int) -> Cell:
    ci = d.get("ci")
    return Cell(d.get("value"), (float(ci[0]), float(ci[1])) if ci else None, n, "r")


def conclusions_tables(result: Mapping[str, Any], label: Callable[[str], str] = str) -> list[Table]:
    """:func:`conclusions` as paper tables (Markdown, LaTeX, CSV, JSON through :mod:`.tables`):
    the per-system scores with rank-sets, the pairwise differences with their sentences, the
    system-level agreement of each judge, and the findings. [] when nothing was scored."""
    system, alpha = result["system"], result["alpha"]
    scores, pairs, agreement, rank_notes = [], [], [], []
    for f, per_judge in result["fields"].items():
        for j, r in per_judge.items():
            head = f"{f} · {label(j)}"
            # the field and the judge in columns of their own: every row label is the researcher's
            # data (a system, a pair, a group), which the page shows as it is in every language
            who = (Cell(f, fmt="text"), Cell(label(j), fmt="text"))
            judge_rank = {o["system"]: o["judge_only_rank"] for o in r["judge_outside_rank_sets"]}
            outside = [f"{o['system']} ({o['judge_only_rank']})" for o in r["judge_outside_rank_sets"]]
            rank_notes.append(
                f"{head}: the judge-only ranking falls outside the PPI++ rank-sets: {', '.join(outside)}."
                if outside
                else f"{head}: the judge-only ranking lies within the PPI++ rank-sets."
            )
            for s in r["systems"]:
                name = s["system"]
                scores.append(
                    Row(
                        name,
                        (
                            *who,
                            _mean_cell(s["human_only"], s["n_labelled"]),
                            _mean_cell(s["judge_only"], s["n_labelled"] + s["n_judge_only"]),
                            _mean_cell(s["ppi"], s["n_labelled"]),
                            Cell(_rank_text(r["rank_sets"]["ppi"][name]), fmt="text"),
                            Cell(_rank_text(r["rank_sets"]["judge_only"][name]), fmt="text"),
                            Cell(s["judge_only_rank"], fmt="count"),
                            Cell("no" if name in judge_rank else "yes", fmt="text"),
                        ),
                    )
                )
            for p in r["pairs"]:
                ci = p["ppi"]["ci"]
                pairs.append(
                    Row(
                        f"{p['a']} - {p['b']}",
                        (
                            *who,
                            Cell(p["ppi"]["estimate"], (float(ci[0]), float(ci[1])) if ci else None, fmt="num"),
                            Cell(p["sentence"], fmt="text"),
                            Cell(p["judge_only_sentence"], fmt="text"),
                            Cell("yes" if p["judge_only_holds"] else "no", fmt="text"),
                        ),
                    )
                )
            ag = r["agreement"]

            disc = "; ".join(f"{d['a']} / {d['b']}" for d in ag["discordant_pairs"]) or "none"
            agreement.append(
                Row(
                    label(j),
                    (
                        Cell(f, fmt="text"),
                        _corr_cell(ag["kendall_tau"], len(r["systems"])),
                        _corr_cell(ag["spearman"], len(r["systems"])),
                        Cell(disc, fmt="text"),
                    ),
                )
            )
    if not scores:
        return []
    pct = f"{100 * (1 - alpha):g}%"
    first = next(iter(next(iter(result["fields"].values())).values()))
    k = len(first["systems"])
    out = [
        Table(
            key="conclusions-systems",
            title=f"Does the benchmark's conclusion hold? Scores per {system}",
            columns=(
                "Field",
                "Judge",
                "Human-only",
                "Judge-only",
                "PPI++",
                "PPI++ rank-set",
                "Judge-only rank-set",
                "Judge-only rank",
                "Inside the PPI++ rank-set",
            ),
            rows=tuple(scores),
            row_header=system,
            caption=(
                f"Mean score per {system} from people only, the judge only, and the judge on all items plus people "
                f"on the sample (PPI++, Angelopoulos, Duchi and Zrnic 2023), with simultaneous {pct} intervals "
                f"across the {k} systems (Bonferroni: each at 1 - alpha/k). Rank-sets (1 = highest) at alpha "
                f"{alpha:g} (Chatzi et al. 2024, Algorithm 2); the judge-only rank is the judge's own rank of each system."
            ),
            notes=tuple(rank_notes),
        ),
        Table(
            key="conclusions-pairs",
            title=f"Every pair of {system} values: A - B",
            columns=("Field", "Judge", "PPI++ A - B", "Conclusion", "Judge-only says", "Judge-only holds"),
            rows=tuple(pairs),
            row_header="A - B",
            caption=(
                f"Difference of the PPI++ means with a {pct} interval, Bonferroni-corrected over the "
                f"{k * (k - 1) // 2} pairs of one field and judge; the conclusion is 'cannot tell' when the "
                "interval holds 0. The judge-only conclusion holds when the judge alone says the same."
            ),
        ),
        Table(
            key="conclusions-agreement",
            title=f"System-level agreement: the judge's {system} scores vs people's",
            columns=("Field", "Kendall τ", "Spearman ρ", "Pairs ordered differently"),
            rows=tuple(agreement),
            row_header="Judge",
            caption=(
                f"Rank correlation of the judge-only and human-only means over the {system} values (n = systems), "
                f"with a {pct} percentile interval from {first['agreement']['bootstrap']} item resamples within "
                "each system; the last column names the pairs the judge orders the other way round from people."
            ),
        ),
    ]
    if result["findings"]:
        rows = []
        for fd in result["findings"]:
            ci = fd["ppi"]["ci"]
            rows.append(
                Row(
                    f"{fd['a']} - {fd['b']}",
                    (
                        Cell(fd["field"], fmt="text"),
                        Cell(label(fd["judge"]), fmt="text"),
                        Cell(fd["ppi"]["estimate"], (float(ci[0]), float(ci[1])) if ci else None, fmt="num"),
                        _mean_cell(fd["human_only"], None),
                        _mean_cell(fd["judge_only"], None),
                        Cell(fd["sentence"], fmt="text"),
                        Cell("yes" if fd["judge_only_holds"] else "no", fmt="text"),
                    ),
                )
            )
        out.append(
            Table(
                key="conclusions-findings",
                title="Findings: named comparisons of item groups",
                columns=(
                    "Field",
                    "Judge",
                    "PPI++ A - B",
                    "Human-only A - B",
                    "Judge-only A - B",
                    "Conclusion",
                    "Judge-only holds",
                ),
                rows=tuple(rows),
                row_header="Finding",
                caption=(
                    f"Difference of the two groups' means with a {pct} interval (one comparison each, no correction); "
                    "the judge-only conclusion holds when its interval gives the same sentence as PPI++."
                ),
            )
        )
    return out
