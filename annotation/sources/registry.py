"""Every reader of ratings made in another tool, by format key. Adding a format = one reader
(a module of :mod:`annotation.sources` declaring a :class:`Reader`) + one line here.

A reader says whose ratings its files hold (:attr:`Reader.rater_kind`): people's
(``"human"``, imported by ``annotation.annotation_import`` as pseudonymous human raters) or one
judge's (``"model"``, imported by ``judges.imported`` as a model rater). Both read through the
same stage (``annotation.annotation_import.read_ratings``: the file as UTF-8 text, the format's
reader, problems by task or line) and are matched to items by the same step
(``annotation_import.items_by_key``); the room that owns the rater checks and writes what was
read, so ``annotation`` never reaches into ``judges``.

The choices of forms, the API and the command, and the check of ``AnnotationImport.data_format``
(:func:`known_format`, a model validator: a format is data of this registry, not of a table
constraint), all read this registry, so a reader registered here (a test registers a toy one
with :func:`register`) is accepted everywhere with no other change."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.exceptions import ValidationError

from core.errors import DomainError

from . import comparisons, labelstudio, labelstudio_flat, long, outputs, wide
from .common import HUMAN, MODEL, Reader

READERS: dict[str, Reader] = {
    r.key: r
    for r in (
        labelstudio.READER,
        long.CSV,
        long.JSONL,
        wide.READER,
        labelstudio_flat.JSON_MIN,
        labelstudio_flat.CSV,
        outputs.JSONL,
        outputs.CSV,
        comparisons.CSV,
        comparisons.JSONL,
        comparisons.JUDGE_CSV,
        comparisons.JUDGE_JSONL,
    )
}


def get_reader(key: str, *, rater_kind: str | None = None) -> Reader:
    """The reader of ``key`` (of ``rater_kind`` when given); DomainError naming the formats
    there are otherwise."""
    reader = READERS.get(key)
    if reader is None or (rater_kind is not None and reader.rater_kind != rater_kind):
        raise DomainError(f"unsupported format {key!r}: use {', '.join(keys(rater_kind))}")
    return reader


def keys(rater_kind: str | None = None) -> list[str]:
    return [k for k, r in READERS.items() if rater_kind is None or r.rater_kind == rater_kind]


def by_suffix(rater_kind: str) -> dict[str, Reader]:
    """The readers of ``rater_kind`` by the file type they read (``jsonl``, ``csv``...): how a
    form that takes one rater's file (a judge's outputs) names the format; of two readers of one
    file type, the first registered (the outputs readers before the comparisons readers, which
    are named by their key)."""
    out: dict[str, Reader] = {}
    for r in READERS.values():
        if r.rater_kind == rater_kind:
            out.setdefault(r.suffix.lstrip("."), r)
    return out


def human_choices() -> list[tuple[str, Any]]:
    """(key, label) of the readers of people's ratings, for the upload form and the API."""
    return [(r.key, r.label) for r in READERS.values() if r.rater_kind == HUMAN]


def choices() -> list[tuple[str, Any]]:
    """(key, label) of every reader: ``AnnotationImport.data_format``'s choices (a callable, so
    Django's migrations name it and never list the formats)."""
    return [(r.key, r.label) for r in READERS.values()]


def known_format(value: str) -> None:
    """``AnnotationImport.data_format``'s validator: the key of a registered reader."""
    if value not in READERS:
        raise ValidationError(f"unsupported format {value!r}: use {', '.join(READERS)}", code="invalid_choice")


def register(reader: Reader) -> None:
    """Add a reader (refused when its key is taken: a format means one thing)."""
    if reader.key in READERS:
        raise ValueError(f"a reader of format {reader.key!r} is already registered")
    if reader.rater_kind not in (HUMAN, MODEL):
        raise ValueError(f"a reader reads human or model ratings, not {reader.rater_kind!r}")
    READERS[reader.key] = reader


def unregister(key: str) -> None:
    READERS.pop(key, None)


@contextmanager
def registered(reader: Reader) -> Iterator[Reader]:
    """The reader registered for the duration of a ``with`` block (a test's toy format)."""
    register(reader)
    try:
        yield reader
    finally:
        unregister(reader.key)


__all__ = [
    "HUMAN",
    "MODEL",
    "READERS",
    "Reader",
    "by_suffix",
    "choices",
    "get_reader",
    "human_choices",
    "keys",
    "known_format",
    "register",
    "registered",
    "unregister",
]
