"""Judge backends behind one interface (see ``base.py``), one module each: its class and its
``BackendEntry`` (``base.py``), listed once in ``judges/registry.py``, which builds a judge's
backend (``registry.backend_for``). Heavy libraries (httpx, torch, transformers,
sentence-transformers) are imported only inside the backend that needs them, when it runs.

This package imports only ``base``: a backend module may use the interface without importing
the package back."""

from __future__ import annotations

from .base import (
    BackendEntry,
    BackendUnavailable,
    ChatReply,
    ChatRequest,
    JudgeBackend,
    JudgeItem,
    JudgeSpec,
    Verdict,
)

__all__ = [
    "BackendEntry",
    "BackendUnavailable",
    "ChatReply",
    "ChatRequest",
    "JudgeBackend",
    "JudgeItem",
    "JudgeSpec",
    "Verdict",
]
