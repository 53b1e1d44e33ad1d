"""Judge backends behind one interface (see ``base.py``). ``backend_for(spec)`` returns the
backend instance; heavy libraries (httpx, torch, transformers, sentence-transformers) are
imported only by the backend that needs them."""

from __future__ import annotations

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
    raise BackendUnavailable(f"unknown judge backend {spec.backend!r}")


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
]
