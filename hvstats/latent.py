"""Latent-truth aggregation: Dawid-Skene and MACE over an items x raters grid of category labels.

Both models treat the true label of each item as unobserved and learn, by EM, how each rater
(a human or a model judge alike) relates to it:

- Dawid-Skene: A. P. Dawid and A. M. Skene (1979), "Maximum likelihood estimation of observer
  error-rates using the EM algorithm", Journal of the Royal Statistical Society, Series C
  (Applied Statistics) 28(1):20-28. Each rater has a full confusion matrix
  ``P(rater says j | truth is k)``; the classes have prior probabilities.
- MACE: D. Hovy, T. Berg-Kirkpatrick, A. Vaswani and E. Hovy (2013), "Learning Whom to Trust
  with MACE", NAACL-HLT 2013, 1120-1130. Each rater either knows the truth (with probability
  ``competence``) and says it, or spams from its own label distribution ``theta``.

The models are crowd-kit's (``crowdkit.aggregation.DawidSkene`` and ``MACE``, crowd-kit 1.4.2),
not reimplemented here; this module only shapes the data in and the results out.

What comes out (:class:`LatentResult`), per item: the posterior label (the most probable
category; a tie goes to the first category in ``categories`` order), the posterior
probabilities and their Shannon entropy in nats (natural logarithm, as
``scipy.stats.entropy``'s default); an item nobody rated has no label, NaN probabilities and a
NaN entropy. Per rater:

- ``accuracy``: Dawid-Skene: ``sum_k prior_k * P(says k | truth k)``, the probability that the
  rater's label of a random item equals its true label under the fitted model. MACE: the
  competence ``1 - P(spamming)`` (crowd-kit's ``spamming_[:, 1]``, divided by its row sum:
  the variational estimates sum to a little under 1), as Hovy et al. report it.
- ``confusion``: a ``K x K`` matrix, row = true category, column = the rater's label, each row
  summing to 1 (a row of a category no rater used is 0): ``P(says j | truth k)``. Dawid-Skene: the fitted matrix (a category the rater
  never used has probability 0 in every row). MACE: the matrix its parameters imply,
  ``competence * [j == k] + (1 - competence) * theta_j``.

Input and edge cases (a :class:`ValueError` says what is wrong):

- missing cells are ``None`` or NaN; labels may be numbers or strings (any hashable), but one
  call's labels must be mutually sortable, or ``categories`` must give their order;
- fewer than two raters with a rating, or no item rated by at least two raters: refused (the
  models learn rater quality only from overlap);
- an item with a single rating: defined (its posterior follows that rater's confusion matrix);
- a rater who never used some category: defined (probability 0 for it, see above);
- a constant grid (one category in all): defined without calling crowd-kit: that category with
  probability 1 and entropy 0 for every rated item, accuracy 1 for every rater;
- ``categories`` (optional) lists the possible labels in order: unused ones get probability 0
  and are kept as rows / columns; a label outside the list is refused.

Raters and labels are handed to crowd-kit as integer codes in order of first appearance in the
long table (items in order, raters in column order). crowd-kit's MACE indexes its parameters by
first-appearance order in one place and by sorted order in another, so names whose sorted
order differs from their appearance order would otherwise be mixed up; with these codes both
orders agree, and the result does not depend on how raters or labels are named. MACE is
seeded (``seed``, default 0) and deterministic; crowd-kit 1.4.2 starts every MACE restart from
the same seeded point, so restarts beyond the first change nothing and ``n_restarts`` is 1.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

METHODS = ("dawid_skene", "mace")
Method = Literal["dawid_skene", "mace"]

#: Dawid-Skene: EM iterations at most, and the stop when the evidence lower bound per rating
#: improves by less than ``DS_TOL``
DS_N_ITER = 100
DS_TOL = 1e-5
#: MACE: variational EM iterations (crowd-kit's and the paper's default, 50) and one restart
MACE_N_ITER = 50
MACE_N_RESTARTS = 1


@dataclass(frozen=True)
class LatentResult:
    """The fitted model's view of the items and the raters (see the module docstring)."""

    method: str
    item_ids: tuple[Hashable, ...]
    raters: tuple[str, ...]
    categories: tuple[Any, ...]
    labels: tuple[Any, ...]  # posterior label per item (None: nobody rated it)
    probabilities: np.ndarray  # items x categories
    entropy: np.ndarray  # per item, nats
    priors: np.ndarray  # per category (MACE: uniform, as the model assumes)
    accuracy: dict[str, float]  # per rater with a rating
    confusion: dict[str, np.ndarray] = field(repr=False)  # per rater, K x K, row = truth

    def item(self, item_id: Hashable) -> tuple[Any, float]:
        """(posterior label, entropy in nats) of one item."""
        i = self._positions()[item_id]
        return self.labels[i], float(self.entropy[i])

    def _positions(self) -> dict[Hashable, int]:
        cache = self.__dict__.get("_pos")
        if cache is None:
            cache = {item: i for i, item in enumerate(self.item_ids)}
            object.__setattr__(self, "_pos", cache)
        return cache


def entropy_nats(probabilities: np.ndarray) -> np.ndarray:
    """Shannon entropy (natural logarithm) of each row; 0 * log 0 = 0; a NaN row gives NaN."""
    p = np.asarray(probabilities, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    out = terms.sum(axis=1)
    out[np.isnan(p).any(axis=1)] = np.nan
    return out


def latent_truth(
    matrix: Any,
    *,
    item_ids: Sequence[Hashable] | None = None,
    raters: Sequence[str] | None = None,
    method: Method = "dawid_skene",
    categories: Sequence[Any] | None = None,
    seed: int = 0,
) -> LatentResult:
    """Fit ``method`` to an items x raters grid of category labels (None / NaN = missing).

    ``matrix`` is a 2-D array-like or a DataFrame (whose index and columns are the default
    ``item_ids`` and ``raters``)."""
    if isinstance(matrix, pd.DataFrame):
        item_ids = list(matrix.index) if item_ids is None else item_ids
        raters = [str(c) for c in matrix.columns] if raters is None else raters
        grid = matrix.to_numpy(dtype=object)
    else:
        grid = np.asarray(matrix, dtype=object)
    if grid.ndim != 2:
        raise ValueError(f"expected an items x raters grid, got {grid.ndim} dimension(s)")
    n_items, n_raters = grid.shape
    item_ids = list(range(n_items)) if item_ids is None else list(item_ids)
    raters = [f"rater_{j}" for j in range(n_raters)] if raters is None else [str(r) for r in raters]
    if len(item_ids) != n_items:
        raise ValueError(f"{len(item_ids)} item ids for {n_items} rows")
    if len(raters) != n_raters:
        raise ValueError(f"{len(raters)} rater names for {n_raters} columns")
    present = ~pd.isna(pd.DataFrame(grid)).to_numpy()
    rows, cols = np.nonzero(present)
    return latent_truth_long(
        [item_ids[i] for i in rows],
        [raters[j] for j in cols],
        list(grid[rows, cols]),
        item_ids=item_ids,
        raters=raters,
        method=method,
        categories=categories,
        seed=seed,
    )


def latent_truth_long(
    items: Sequence[Hashable],
    raters_of: Sequence[str],
    values: Sequence[Any],
    *,
    item_ids: Sequence[Hashable] | None = None,
    raters: Sequence[str] | None = None,
    method: Method = "dawid_skene",
    categories: Sequence[Any] | None = None,
    seed: int = 0,
) -> LatentResult:
    """The same from a long table: one (item, rater, label) per rating, at most one per
    (item, rater). ``item_ids`` / ``raters`` (optional) list every item / rater in order,
    including ones without a rating (by default: order of first appearance)."""
    if method not in METHODS:
        raise ValueError(f"unknown latent-truth method {method!r}: use one of {', '.join(METHODS)}")
    if not len(items) == len(raters_of) == len(values):
        raise ValueError("items, raters and labels must be equally long")
    vals = _object_array(values)
    keep = ~_isna(vals)
    items_arr = _object_array(items)[keep]
    raters_arr = np.array([str(r) for r in _object_array(raters_of)[keep]], dtype=object)
    vals = vals[keep]
    item_list = list(pd.unique(items_arr)) if item_ids is None else list(item_ids)
    rater_list = list(pd.unique(raters_arr)) if raters is None else [str(r) for r in raters]
    item_index, rater_index = pd.Index(item_list, dtype=object), pd.Index(rater_list, dtype=object)
    if not item_index.is_unique:
        raise ValueError("item ids must be unique")
    if not rater_index.is_unique:
        raise ValueError("rater names must be unique")
    ii = item_index.get_indexer(items_arr).astype(np.int64)
    rr = rater_index.get_indexer(raters_arr).astype(np.int64)
    if (ii < 0).any():
        raise ValueError(f"{len(set(items_arr[ii < 0]))} rated item(s) missing from item_ids")
    if (rr < 0).any():
        raise ValueError(f"rater(s) missing from raters: {', '.join(sorted(set(raters_arr[rr < 0]))[:5])}")
    if len(ii):
        pairs = np.sort(ii * max(len(rater_list), 1) + rr)
        if (pairs[1:] == pairs[:-1]).any():
            raise ValueError("a rater has more than one label for the same item; keep one per (item, rater)")
    cats = _categories(list(pd.unique(vals)), categories)
    vv = pd.Index(cats, dtype=object).get_indexer(vals).astype(np.int64)

    used_raters = np.flatnonzero(np.bincount(rr, minlength=len(rater_list)))
    if len(used_raters) < 2:
        raise ValueError(
            f"latent-truth aggregation needs at least two raters with a rating; this grid has {len(used_raters)}"
        )
    per_item = np.bincount(ii, minlength=len(item_list))
    if per_item.max(initial=0) < 2:
        raise ValueError("latent-truth aggregation needs at least one item rated by two or more raters")

    n, k = len(item_list), len(cats)
    probs = np.full((n, k), np.nan)
    accuracy: dict[str, float] = {}
    confusion: dict[str, np.ndarray] = {}
    used_cats = np.flatnonzero(np.bincount(vv, minlength=len(cats)))
    if len(used_cats) == 1:  # one category in the whole grid: nothing to estimate
        only = int(used_cats[0])
        rated = per_item > 0
        probs[rated] = 0.0
        probs[rated, only] = 1.0
        priors = np.zeros(k)
        priors[only] = 1.0
        for j in used_raters:
            m = np.eye(k)
            accuracy[rater_list[j]] = 1.0
            confusion[rater_list[j]] = m
    else:
        probs, priors, accuracy, confusion = _fit(method, ii, rr, vv, n, k, rater_list, seed)
    unrated = np.isnan(probs).any(axis=1)
    best = np.argmax(np.where(np.isnan(probs), -1.0, probs), axis=1)
    labels = tuple(None if u else cats[b] for u, b in zip(unrated.tolist(), best.tolist(), strict=True))
    order = [r for r in rater_list if r in accuracy]
    return LatentResult(
        method=method,
        item_ids=tuple(item_list),
        raters=tuple(rater_list),
        categories=tuple(cats),
        labels=labels,
        probabilities=probs,
        entropy=entropy_nats(probs),
        priors=priors,
        accuracy={r: accuracy[r] for r in order},
        confusion={r: confusion[r] for r in order},
    )


def long_table(ii: np.ndarray, rr: np.ndarray, vv: np.ndarray) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The (task, worker, label) table handed to crowd-kit, item-major, with workers and labels
    coded by first appearance; also the rater position and category position of each code."""
    order = np.lexsort((rr, ii))
    ii, rr, vv = ii[order], rr[order], vv[order]
    rater_codes, rater_of_code = pd.factorize(rr)
    label_codes, cat_of_code = pd.factorize(vv)
    df = pd.DataFrame({"task": ii, "worker": rater_codes.astype(np.int64), "label": label_codes.astype(np.int64)})
    return df, np.asarray(rater_of_code), np.asarray(cat_of_code)


def _fit(
    method: str, ii: np.ndarray, rr: np.ndarray, vv: np.ndarray, n: int, k: int, rater_list: list[str], seed: int
) -> tuple[np.ndarray, np.ndarray, dict[str, float], dict[str, np.ndarray]]:
    try:  # imported here: 1-2 s, only when used; an optional dependency of the hv-stats wheel
        from crowdkit.aggregation import MACE, DawidSkene
    except ImportError as exc:
        raise ImportError(
            "latent truth (Dawid-Skene, MACE) needs crowd-kit: pip install 'hv-stats[latent]' (or crowd-kit)"
        ) from exc

    df, rater_of_code, cat_of_code = long_table(ii, rr, vv)
    probs = np.full((n, k), np.nan)
    accuracy: dict[str, float] = {}
    confusion: dict[str, np.ndarray] = {}
    with warnings.catch_warnings():  # crowd-kit 1.4.2 uses pandas keywords pandas 3 deprecates
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        if method == "dawid_skene":
            model = DawidSkene(n_iter=DS_N_ITER, tol=DS_TOL).fit(df)
        else:
            model = MACE(n_restarts=MACE_N_RESTARTS, n_iter=MACE_N_ITER, random_state=seed).fit(df)
    fitted = model.probas_
    cols = [int(c) for c in fitted.columns]
    tasks = fitted.index.to_numpy(dtype=np.int64)
    block = np.zeros((len(tasks), k))
    block[:, cat_of_code[cols]] = fitted.to_numpy(dtype=float)
    probs[tasks] = block
    if method == "dawid_skene":
        priors = np.zeros(k)
        priors[cat_of_code[[int(c) for c in model.priors_.index]]] = model.priors_.to_numpy(dtype=float)
        errors = model.errors_
        for code, pos in enumerate(rater_of_code):
            sub = errors.xs(code, level="worker")  # observed label x true label
            m = np.zeros((k, k))  # row = truth, column = observed
            truth_pos = cat_of_code[[int(c) for c in sub.columns]]
            said_pos = cat_of_code[[int(c) for c in sub.index]]
            m[np.ix_(truth_pos, said_pos)] = sub.to_numpy(dtype=float).T
            name = rater_list[int(pos)]
            confusion[name] = m
            accuracy[name] = float(np.dot(priors, np.diag(m)))
    else:
        priors = np.full(k, 1.0 / len(cat_of_code))
        priors[np.setdiff1d(np.arange(k), cat_of_code)] = 0.0
        # variational estimates (exp of digammas) sum to a little under 1: normalised here
        spamming = np.asarray(model.spamming_, dtype=float)
        competence = spamming[:, 1] / spamming.sum(axis=1)
        thetas = np.asarray(model.thetas_, dtype=float)  # worker code x label code
        thetas = thetas / thetas.sum(axis=1, keepdims=True)
        for code, pos in enumerate(rater_of_code):
            theta = np.zeros(k)
            theta[cat_of_code] = thetas[code]
            c = float(competence[code])
            m = np.zeros((k, k))
            m[np.ix_(cat_of_code, np.arange(k))] = (1 - c) * theta
            m[cat_of_code, cat_of_code] += c
            name = rater_list[int(pos)]
            confusion[name] = m
            accuracy[name] = c
    return probs, priors, accuracy, confusion


def _object_array(values: Sequence[Any]) -> np.ndarray:
    """A 1-D object array of the values as given (no conversion of tuples into rows)."""
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def _isna(values: np.ndarray) -> np.ndarray:
    """None or NaN, element by element."""
    return np.asarray(pd.isna(values), dtype=bool)


def _categories(values: Sequence[Any], categories: Sequence[Any] | None) -> list[Any]:
    seen = list(dict.fromkeys(values))
    if categories is not None:
        cats = list(categories)
        if len(set(cats)) != len(cats):
            raise ValueError("categories must be unique")
        outside = [v for v in seen if v not in set(cats)]
        if outside:
            raise ValueError(f"label(s) outside the categories: {', '.join(map(repr, outside[:5]))}")
        return cats
    if not seen:
        raise ValueError("no ratings: latent-truth aggregation needs labels")
    try:
        return sorted(seen)
    except TypeError:
        raise ValueError(
            "labels of different kinds (e.g. numbers and text) cannot be ordered; pass categories"
        ) from None
