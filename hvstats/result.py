"""Result type shared by every coefficient in :mod:`hvstats`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_AS_IS = frozenset((str, int, bool, type(None)))


def _clean(obj: Any) -> Any:
    """Convert numpy scalars/arrays and non-finite floats into JSON-safe values."""
    t = type(obj)  # exact-type fast paths for the common leaves and containers
    if t is float:
        return obj if math.isfinite(obj) else None
    if t in _AS_IS:
        return obj
    if t is dict:
        return {k if type(k) is str else str(k): _clean(v) for k, v in obj.items()}
    if t is list or t is tuple:
        return [_clean(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_clean(v) for v in obj.tolist()]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, MetricResult):
        return obj.to_dict()
    return obj


@dataclass
class MetricResult:
    """One coefficient.

    ``value`` is ``None`` whenever the coefficient is undefined for the data; ``reason``
    then starts with ``"undefined: "`` and says why (never a silent NaN).
    ``ci`` is a percentile bootstrap interval ``(lo, hi)`` over resampled items, or None.
    ``extra`` holds metric-specific details (per-rater values, confusion matrix, ...).
    """

    metric: str
    value: float | None
    ci: tuple[float, float] | None = None
    p_value: float | None = None
    n_items: int = 0
    n_raters: int = 0
    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def defined(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "metric": self.metric,
            "value": _clean(self.value),
            "ci": _clean(list(self.ci)) if self.ci is not None else None,
            "p_value": _clean(self.p_value),
            "n_items": int(self.n_items),
            "n_raters": int(self.n_raters),
            "reason": self.reason,
        }
        if self.extra:
            d.update(_clean(self.extra))
        return d


def undefined(metric: str, reason: str, n_items: int = 0, n_raters: int = 0, **extra: Any) -> MetricResult:
    """A result whose value is undefined; ``reason`` is prefixed with ``"undefined: "``."""
    if not reason.startswith("undefined"):
        reason = "undefined: " + reason
    return MetricResult(metric, None, None, None, int(n_items), int(n_raters), reason, dict(extra))


def finite_or_none(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def to_jsonable(obj: Any) -> Any:
    """Public helper: make any nested structure of results/numpy values JSON-serialisable."""
    return _clean(obj)
