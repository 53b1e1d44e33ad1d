"""What a judge's parsed output holds: the rubric answers, and, for classifier judges, labels
outside the rubric (Table 3 classes, refused / answered) kept under ``LABELS_KEY``; for a
prompt-less judge with continuous scores (AHEaD) its unrounded scores under ``EXACT_KEY`` and
its numbers outside the rubric under ``SCORES_KEY``. Pure: the models, selectors and the API all
read outputs through these functions."""

from __future__ import annotations

from typing import Any

from .prompts import LABELS_KEY

EXACT_KEY = "_exact"  # ``Verdict.exact``: {question: unrounded score on its scale}
SCORES_KEY = "_metrics"  # ``Verdict.metrics``: {metric: number}, outside the rubric
_NOT_RUBRIC = (LABELS_KEY, EXACT_KEY, SCORES_KEY)


def output_labels(parsed: Any) -> dict[str, str] | None:
    """The classifier labels of a judge output (or item result), outside the rubric answers."""
    return parsed.get(LABELS_KEY) if isinstance(parsed, dict) else None


def rubric_part(parsed: Any) -> Any:
    """A judge output's rubric answers without its classifier labels, unrounded scores and metrics."""
    if isinstance(parsed, dict) and any(k in parsed for k in _NOT_RUBRIC):
        return {k: v for k, v in parsed.items() if k not in _NOT_RUBRIC}
    return parsed
