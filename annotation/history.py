"""Annotation history: an edit never loses the answer it replaces.

Before an edit overwrites an annotation, :func:`keep_previous` copies what the annotation holds
(answers, derived fields, rubric version, revision number, time on task and when it was given)
into an :class:`~annotation.models.AnnotationRevision`, inside the edit's transaction, so the
history and the edit commit or roll back together. The annotation itself always holds the
current answer; its history holds every earlier one, oldest first."""

from __future__ import annotations

from datetime import datetime

from .models import Annotation, AnnotationRevision


def keep_previous(annotation: Annotation, *, edited_by_id: int | None, edited_at: datetime) -> AnnotationRevision:
    """Store ``annotation`` as it stands (before the caller changes it) as one revision row.
    Call with the annotation row locked, in the transaction that writes the edit."""
    return AnnotationRevision.objects.create(
        annotation_id=annotation.pk,
        revision=annotation.revision,
        answers=annotation.answers,
        derived=annotation.derived,
        rubric_version_id=annotation.rubric_version_id,
        duration_ms=annotation.duration_ms,
        answered_at=annotation.updated_at,
        edited_at=edited_at,
        edited_by_id=edited_by_id,
    )
