"""Judge backends behind one interface (see ``base.py``). ``backend_for(spec)`` returns the
backend instance; heavy libraries (httpx, torch, transformers, sentence-transformers) are
imported only by the backend that needs them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import (
    DIRECT_MODES,
    BackendUnavailable,
    ChatReply,
    ChatRequest,
    JudgeBackend,
    JudgeItem,
    JudgeSpec,
    Verdict,
)

# backend key -> Celery queue whose workers run it
QUEUES = {
    "openai_chat": "api",
    "transformers": "gpu",
    "embedding": "default",
    "image_similarity": "default",
    "clip_similarity": "gpu",  # CLIP ViT-L/14 like the transformers judge; CPU fallback
    "ahead": "gpu",  # an in-process VLM (or an endpoint), MiniLM and the EXAG image-text model; CPU fallback
}


def backend_for(spec: JudgeSpec) -> JudgeBackend:
    if spec.backend == "openai_chat":
        from .openai_chat import OpenAIChatBackend

        return OpenAIChatBackend(spec)
    if spec.backend == "transformers":
        from .local_transformers import TransformersBackend

        return TransformersBackend(spec)
    if spec.backend == "embedding":
        from .embedding import EmbeddingBackend

        return EmbeddingBackend(spec)
    if spec.backend == "image_similarity":
        from .image_similarity import ImageSimilarityBackend

        return ImageSimilarityBackend(spec)
    if spec.backend == "clip_similarity":
        from .clip_similarity import ClipSimilarityBackend

        return ClipSimilarityBackend(spec)
    if spec.backend == "ahead":
        from .ahead import AheadBackend

        return AheadBackend(spec)
    raise BackendUnavailable(f"unknown judge backend {spec.backend!r}")


def direct_decides(backend: str, mode: str, params: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """The checklist flags a prompt-less judge of this backend and mode decides, per question
    (None: every option of the questions it answers), from its parameters (a threshold set to
    null leaves its flag undecided); ValueError for parameters it cannot use. Read when the judge
    is created (stored as the rater's ``decides``) and by ``judges.decides`` for older raters."""
    if backend == "image_similarity":
        from .image_similarity import decides

        return decides(mode, params)
    if backend == "clip_similarity":
        from .clip_similarity import decides

        return decides(mode, params)
    return None


def check_direct_params(backend: str, params: Mapping[str, Any], questions: Sequence[str] = ()) -> None:
    """ValueError with the reason for parameters a prompt-less judge cannot use, checked when the
    judge is created (no model loaded) rather than when its run fails on the worker; ``questions``
    the ones it will answer (what an AHEaD judge needs depends on them)."""
    if backend == "clip_similarity":
        from .clip_similarity import check_params

        check_params(params)
    if backend == "ahead":
        from .ahead import check_params as check_ahead_params

        check_ahead_params(params, questions)


__all__ = [
    "DIRECT_MODES",
    "QUEUES",
    "BackendUnavailable",
    "ChatReply",
    "ChatRequest",
    "JudgeBackend",
    "JudgeItem",
    "JudgeSpec",
    "Verdict",
    "backend_for",
    "check_direct_params",
    "direct_decides",
]
