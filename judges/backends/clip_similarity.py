"""CLIP image-image similarity judge: Cultural Counterfactuals' image filter as the paper runs it.

Sec. 3.2 "CLIP Filtering" (after Brooks et al. 2022; Howard et al. 2024): "we calculate the image
similarity score with CLIP-ViT-L/14 between each generated counterfactual image and its two
source images ... We filter counterfactual images which have a similarity score of less than
0.75 with the context-only image or a similarity of less than 0.85 with the person-only image".
App. A.6 gives one case of each: Fig. 7, 0.622 to the context image (the context does not
appear); Fig. 8, 0.716 to the person image (the person does not appear).

- Model: ``model_id``, a local folder or a hub id (default :data:`DEFAULT_MODEL`, the paper's
  CLIP-ViT-L/14), loaded with transformers ``CLIPModel`` and the folder's image processor
  (``AutoImageProcessor``) once per worker process, on first use. Offline machines: a folder.
- Similarity: the cosine of the two images' CLIP embeddings (``get_image_features``: the
  projected pooled output, L2-normalised here). Every distinct image of a batch is embedded once
  (a person image is shared by its whole counterfactual set), ``params.batch_size`` images per
  forward pass (default 16).
- Device: ``params.device`` (default ``cuda`` when available, else ``cpu``); ``params.dtype``
  default ``float32`` everywhere: the thresholds sit at the second decimal, and half precision
  can move a score across them.
- Queue ``gpu``, like the transformers judge: a GPU worker (one process per GPU) holds one copy of
  the 1.7 GB model; the CPU fallback runs it anywhere (``make run``'s worker serves ``gpu`` too).

Mode ``counterfactual_filter`` (the only one), answering the ``flags`` checklist of the audit
preset: flag 4 ``person_missing`` when the similarity to the person image is below
``person_min`` (default 0.85), flag 6 ``context_missing`` when the similarity to the context
image is below ``context_min`` (default 0.75) (``base.FILTER_FLAGS``). A threshold set to null
leaves its flag undecided. The judge decides these flags only (:func:`decides`): the other four
are missing for it in every analysis, never "no". The raw output of each item holds both
similarities and the thresholds."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from django.utils.translation import gettext_lazy

from core.errors import public_text

from .. import params as judge_params
from .base import (
    DIRECT,
    FILTER_FLAGS,
    MODEL_EXTRA,
    BackendEntry,
    BackendUnavailable,
    JudgeBackend,
    JudgeItem,
    Verdict,
    filter_decides,
    filter_flags,
    filter_thresholds,
)
from .model_cache import ModelCache

DEFAULT_MODEL = "openai/clip-vit-large-patch14"
MODE = "counterfactual_filter"
# the questions its one mode answers (``params.mode``)
MODES: dict[str, tuple[str, ...]] = {MODE: ("flags",)}
# the paper's thresholds (Sec. 3.2)
FILTER_DEFAULTS: dict[str, float | None] = {"context_min": 0.75, "person_min": 0.85}
DTYPES = ("float32", "float16", "bfloat16")

_MODELS: ModelCache[tuple[str, str, str], tuple[Any, Any]] = ModelCache()
_EMBED_LOCK = threading.Lock()  # one forward pass at a time per process (one GPU per worker)


def _torch():
    try:
        import torch
    except ImportError as exc:
        raise BackendUnavailable(f"the CLIP judge needs torch ({exc}); {MODEL_EXTRA}") from None
    return torch


def check_params(params: Mapping[str, Any], questions: Sequence[str] = ()) -> None:
    """ValueError with the reason for parameters this judge cannot use (checked when the judge
    is created, with no torch needed, and again when it is built on its worker): each value as
    its entry declares it (the judge form's fields), then the thresholds together."""
    BACKEND.check_declared(params)  # a ParamError is a ValueError
    filter_thresholds(params, FILTER_DEFAULTS)


def resolve_device(params: Mapping[str, Any]) -> tuple[str, str]:
    """(device, dtype) from checked ``params``: cuda when available unless ``device`` says otherwise."""
    torch = _torch()
    device = str(params.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise BackendUnavailable(f"params.device is {device!r} but this worker has no CUDA device")
    return device, str(params.get("dtype") or "float32")


def load_clip(model_id: str, device: str, dtype: str) -> tuple[Any, Any]:
    """(CLIPModel, image processor) from a local folder or hub id, loaded once per process."""
    key = (model_id, device, dtype)

    def load() -> tuple[Any, Any]:
        torch = _torch()
        try:
            import transformers
        except ImportError as exc:
            raise BackendUnavailable(f"the CLIP judge needs transformers ({exc}); {MODEL_EXTRA}") from None
        try:
            config = transformers.AutoConfig.from_pretrained(model_id)
            if not isinstance(config, transformers.CLIPConfig):
                raise BackendUnavailable(
                    f"{model_id!r} is not a CLIP model (model_type {getattr(config, 'model_type', '?')!r})"
                )
            processor = transformers.AutoImageProcessor.from_pretrained(model_id)
            model = transformers.CLIPModel.from_pretrained(model_id, dtype=getattr(torch, dtype))
        except (OSError, ValueError) as exc:
            raise BackendUnavailable(
                f"cannot load CLIP model {model_id!r} (a local folder or a hub id; offline: a folder): {exc}"
            ) from None
        model.to(device).eval()
        return (model, processor)

    return _MODELS.get(key, load)


def loaded_models() -> list[tuple[str, str, str]]:
    return _MODELS.keys()


def image_embeddings(model: Any, processor: Any, images: Sequence[Any], batch_size: int = 16) -> np.ndarray:
    """L2-normalised CLIP image embeddings (one row per PIL image, float32), ``batch_size``
    images per forward pass, on the model's device."""
    torch = _torch()
    rows = []
    for start in range(0, len(images), batch_size):
        batch = list(images[start : start + batch_size])
        pixels = processor(images=batch, return_tensors="pt")["pixel_values"]
        pixels = pixels.to(device=model.device, dtype=model.dtype)
        with _EMBED_LOCK, torch.inference_mode():
            out = model.get_image_features(pixel_values=pixels)
        # transformers 5 returns the output object (projected features in pooler_output), 4 a tensor
        feats = out if isinstance(out, torch.Tensor) else out.pooler_output
        rows.append(torch.nn.functional.normalize(feats.float(), dim=-1).cpu().numpy())
    return np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def decides(mode: str, params: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """The checklist flags a judge in this mode decides; ValueError for thresholds it cannot use."""
    if mode != MODE:
        return None
    return filter_decides(MODES[mode][0], filter_thresholds(params, FILTER_DEFAULTS))


class ClipSimilarityBackend(JudgeBackend):
    queue = "gpu"

    def __init__(self, spec) -> None:
        super().__init__(spec)
        p = spec.params
        self.mode = spec.direct_mode("CLIP", MODES, whole=True)
        try:
            check_params(p)
        except ValueError as exc:
            raise BackendUnavailable(f"the CLIP judge: {exc}") from None
        self.thresholds = filter_thresholds(p, FILTER_DEFAULTS)
        self.batch_size = int(p.get("batch_size", 16))
        self.model_id = spec.model_id or DEFAULT_MODEL
        self.device, self.dtype = resolve_device(p)
        # the images each item is compared with: those whose flag has a threshold
        self.sources = [image for image, key in FILTER_FLAGS.values() if self.thresholds[key] is not None]
        self._model: tuple[Any, Any] | None = None

    def model(self) -> tuple[Any, Any]:
        """Loaded on first use, so a judge is checked (and its run planned) without the weights."""
        if self._model is None:
            self._model = load_clip(self.model_id, self.device, self.dtype)
        return self._model

    def judge(self, items: Sequence[JudgeItem], passes: Sequence[int]) -> list[Verdict]:
        from PIL import Image

        t0 = time.perf_counter()
        errors: dict[int, str] = {}
        wanted: dict[int, list[Path]] = {}  # item -> [counterfactual, *sources]
        for item in items:
            fields = ["counterfactual_image", *self.sources]
            missing = [f for f in fields if f not in item.images]
            if missing:
                errors[item.item_id] = f"cannot judge this item: image(s) not available: {', '.join(missing)}"
            else:
                wanted[item.item_id] = [item.images[f] for f in fields]
        # each distinct file opened and embedded once per call
        opened: dict[Path, Any] = {}
        broken: dict[Path, str] = {}
        for path in dict.fromkeys(p for paths in wanted.values() for p in paths):
            try:
                with Image.open(path) as im:
                    opened[path] = im.convert("RGB")
            except OSError as exc:
                broken[path] = f"cannot judge this item: cannot read image {path.name}: {public_text(exc)}"
        for item_id, paths in wanted.items():
            bad = next((broken[p] for p in paths if p in broken), None)
            if bad:
                errors[item_id] = bad
        vectors: dict[Path, np.ndarray] = {}
        needed = list(dict.fromkeys(p for i, paths in wanted.items() if i not in errors for p in paths))
        if needed:
            model, processor = self.model()
            try:
                emb = image_embeddings(model, processor, [opened[p] for p in needed], self.batch_size)
                vectors = dict(zip(needed, emb, strict=True))
            except RuntimeError as exc:  # e.g. CUDA out of memory: these items fail, the run goes on
                for i in wanted:
                    errors.setdefault(i, f"embedding failed: {exc}")
        ms = int((time.perf_counter() - t0) * 1000 / max(len(items), 1))
        out: list[Verdict] = []
        for item in items:
            if item.item_id in errors:
                out.extend(Verdict(item.item_id, p, "", None, errors[item.item_id], ms) for p in passes)
                continue
            cf, *sources = wanted[item.item_id]
            similarity = {f: float(vectors[cf] @ vectors[path]) for f, path in zip(self.sources, sources, strict=True)}
            answers = {"flags": filter_flags(similarity, self.thresholds)}
            raw = json.dumps(
                {
                    **{f"clip_{f.removesuffix('_image')}": round(v, 4) for f, v in similarity.items()},
                    **self.thresholds,
                    "model_id": self.model_id,
                }
            )
            out.extend(Verdict(item.item_id, p, raw, answers, "", ms) for p in passes)
        return out


BACKEND = BackendEntry(
    key="clip_similarity",
    label=gettext_lazy("CLIP image-image similarity (transformers)"),
    model_help=gettext_lazy(
        "Model id: empty for the paper's CLIP-ViT-L/14 (%(model)s), else a local folder or a hub id."
    ),
    family=DIRECT,
    runner=ClipSimilarityBackend,
    params=judge_params.CLIP_SIMILARITY,
    modes=MODES,
    default_model=DEFAULT_MODEL,  # recorded on the rater, so reports name the model
    decides=decides,
    check_params=check_params,
)
