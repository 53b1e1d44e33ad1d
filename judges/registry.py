"""All judge backends, in the order the judge form offers them. Adding a backend = one module
under ``judges/backends/`` (its class and its :class:`~judges.backends.base.BackendEntry`) + one
line here.

Everything that lists backends reads this: the choices of ``JudgeConfig.backend`` (a callable,
so a new entry needs no migration) and of the judge form, the builder of a new judge
(``configuration.BUILDERS``, by the entry's family), its declared parameters and their form
fields, what it can answer (``capabilities``), the flags it decides (``decides``), the queue of
its runs and the class a worker runs it with."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy

from .backends import ahead, clip_similarity, embedding, image_similarity, local_transformers, openai_chat
from .backends.base import DIRECT, ENSEMBLE, BackendEntry, BackendUnavailable, JudgeBackend, JudgeSpec

#: judges of the project combined per item; its members run, so it has no class, queue or
#: parameters of its own (``params=None``)
ENSEMBLE_BACKEND = BackendEntry(
    key="ensemble",
    label=gettext_lazy("Ensemble of judges"),
    model_help=gettext_lazy("Model id: not used (the members' models answer)."),
    family=ENSEMBLE,
    params=None,
)

BACKENDS: dict[str, BackendEntry] = {
    b.key: b
    for b in (
        openai_chat.BACKEND,
        local_transformers.BACKEND,
        embedding.BACKEND,
        image_similarity.BACKEND,
        clip_similarity.BACKEND,
        ahead.BACKEND,
        ENSEMBLE_BACKEND,
    )
}


def get_backend(key: str) -> BackendEntry:
    try:
        return BACKENDS[key]
    except KeyError:
        raise KeyError(f"unknown judge backend {key!r}; known backends: {', '.join(BACKENDS)}") from None


def backend_choices() -> list[tuple[str, Any]]:
    """(key, label) pairs for a select field; ``JudgeConfig.backend`` takes this function, so
    its choices follow the registry without a migration."""
    return [(b.key, b.label) for b in BACKENDS.values()]


def is_ensemble(key: str) -> bool:
    entry = BACKENDS.get(key)
    return entry is not None and entry.family == ENSEMBLE


def is_direct(key: str) -> bool:
    """A prompt-less backend: it answers its modes' questions (``BackendEntry.modes``)."""
    entry = BACKENDS.get(key)
    return entry is not None and entry.family == DIRECT


def backend_for(spec: JudgeSpec) -> JudgeBackend:
    """The backend that runs a judge of this spec on a worker; BackendUnavailable for a key
    no entry has (a backend removed while a judge of it was kept)."""
    entry = BACKENDS.get(spec.backend)
    if entry is None:
        raise BackendUnavailable(f"unknown judge backend {spec.backend!r}")
    return entry.build(spec)


__all__ = [
    "BACKENDS",
    "ENSEMBLE_BACKEND",
    "backend_choices",
    "backend_for",
    "get_backend",
    "is_direct",
    "is_ensemble",
]
