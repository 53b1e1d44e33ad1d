"""The paper tables' shared, vectorised resamples (issue 35): ``unit_resamples`` draws what
``statistic_ci``'s loop draws, and ``cohen_kappa_resampled`` is sklearn's Cohen's kappa on every
resample."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import cohen_kappa_score

from hvstats.bootstrap import percentile_ci
from hvstats.validation import cohen_kappa_resampled, statistic_ci, unit_resamples


def test_vectorised_kappa_resamples_equal_sklearn_on_every_resample():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, 40).astype(float)
    y = np.where(rng.random(40) < 0.7, x, rng.integers(0, 3, 40)).astype(float)
    x[rng.random(40) < 0.1] = np.nan
    y[rng.random(40) < 0.1] = np.nan
    counts = unit_resamples(40, 200, seed=5)
    fast = cohen_kappa_resampled(x, y, counts)
    for b in range(200):
        rows = np.repeat(np.arange(40), counts[b].astype(int))
        ok = ~np.isnan(x[rows]) & ~np.isnan(y[rows])
        a, c = x[rows][ok], y[rows][ok]
        labels = np.union1d(a, c)
        want = np.nan if len(a) < 2 or len(labels) < 2 else cohen_kappa_score(a, c)
        assert (np.isnan(want) and np.isnan(fast[b])) or abs(fast[b] - want) < 1e-12, b

    # the same resamples as the per-resample loop: the same percentile interval
    def sklearn_kappa(u):
        u = np.asarray(u)
        ok = ~np.isnan(x[u]) & ~np.isnan(y[u])
        a, c = x[u][ok], y[u][ok]
        return None if len(np.union1d(a, c)) < 2 else cohen_kappa_score(a, c)

    loop_ci, _ = statistic_ci(np.arange(40), sklearn_kappa, 200, 5)
    assert np.allclose(percentile_ci(fast)[0], loop_ci, atol=1e-12)
    assert unit_resamples(1, 200, 5) is None and unit_resamples(40, 0, 5) is None
