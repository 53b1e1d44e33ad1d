"""What a judge's parsed output holds: the rubric answers, and, for classifier judges, labels
outside the rubric (Table 3 classes, refused / answered) kept under ``LABELS_KEY``. Pure: the
models, selectors and the API all read outputs through these two functions."""

from __future__ import annotations

from typing import Any

from .prompts import LABELS_KEY


def output_labels(parsed: Any) -> dict[str, str] | None:
    """The classifier labels of a judge output (or item result), outside the rubric answers."""
    return parsed.get(LABELS_KEY) if isinstance(parsed, dict) else None


def rubric_part(parsed: Any) -> Any:
    """A judge output's rubric answers without its classifier labels."""
    if isinstance(parsed, dict) and LABELS_KEY in parsed:
        return {k: v for k, v in parsed.items() if k != LABELS_KEY}
    return parsed
