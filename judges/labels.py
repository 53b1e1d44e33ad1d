"""A judge's short label: what table headers, the agreement page and the downloads call it
(issue 35: "judge: GPT-4o rubric judge (App. B.1) vs mean human: Spearman rho" wrapped into
eight lines on a phone). The researcher sets it; by default it is the model's part of the
judge's name ("GPT-4o" for "GPT-4o rubric judge (App. B.1)", see :func:`default_short_label`).
Labels are unique within a project, so that two judges never share a column header."""

from __future__ import annotations

import re
from collections.abc import Collection

from core.errors import DomainError

#: the longest short label (a table header of two lines at most, HV's LaTeX header width 16)
MAX_LENGTH = 32

_PAREN = re.compile(r"\s*\([^)]*\)")


def _looks_like_model(word: str) -> bool:
    """A word of a model's name has a capital or a digit (GPT-4o, Llama-3.1-8B, 2.5, Flash);
    a word of the judge's role is lowercase (rubric, story, judge)."""
    return any(c.isupper() or c.isdigit() for c in word)


def default_short_label(name: str, taken: Collection[str] = ()) -> str:
    """The label a judge gets when the researcher gives none: the leading words of its name that
    look like a model's name (:func:`_looks_like_model`), without a parenthesis and without a
    capitalised role word right before "judge" ("GPT-4o Turing judge": "GPT-4o"); the whole name
    (without parentheses) when none does; then the name itself when that label is taken by
    another judge of the project, numbered when even that is taken. At most
    :data:`MAX_LENGTH` characters."""
    plain = _PAREN.sub("", name).strip() or name.strip()
    words = plain.split()
    lead: list[str] = []
    for w in words:
        if not _looks_like_model(w):
            break
        lead.append(w)
    if len(lead) > 1 and len(words) > len(lead) and words[len(lead)].lower().strip(",.;:") == "judge":
        lead.pop()  # a capitalised role right before "judge" ("GPT-4o Turing judge")
    candidates = [" ".join(lead) or plain, plain, name.strip()]
    for c in candidates:
        c = c[:MAX_LENGTH].strip()
        if c and c not in taken:
            return c
    base = candidates[0][: MAX_LENGTH - 4].strip()
    k = 2
    while f"{base} ({k})" in taken:
        k += 1
    return f"{base} ({k})"


def check_short_label(label: str, taken: Collection[str]) -> str:
    """A label the researcher typed, stripped; a ``DomainError`` when it is too long, not one
    line, or another judge of the project already has it."""
    label = (label or "").strip()
    if not label:
        raise DomainError("a judge's short label cannot be empty")
    if len(label) > MAX_LENGTH:
        raise DomainError(f"a judge's short label has at most {MAX_LENGTH} characters")
    if any(not c.isprintable() for c in label):
        raise DomainError("a judge's short label is one line of printable text")
    if label in taken:
        raise DomainError(f"another judge of this project is labelled {label!r}")
    return label
