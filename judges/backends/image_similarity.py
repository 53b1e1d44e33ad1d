"""Image-similarity judge on CPU: structural similarity (SSIM; Wang et al. 2004, Eq. 13, with
a uniform 7x7 window on grey levels at a common size) for the papers' automatic filters.

Modes (``params.mode``; default: the mode the preset declares, ``Preset.direct_judges``):

- ``valueground_q3``: ValueGround Q3 (minimal contrast) proxy: SSIM of Image A vs Image B
  mapped to 0/1/2 by ``q3_thresholds`` (default [0.35, 0.6]: our default, not the paper's).
- ``counterfactual_filter``: a pixel-structure *proxy* for Cultural Counterfactuals' image-image
  filter. The paper's filter is CLIP ViT-L/14 similarity (Sec. 3.2: reject below 0.75 to the
  context image or 0.85 to the person image); that is the ``clip_similarity`` judge. SSIM is on
  another scale, so this proxy has its own thresholds (:data:`FILTER_DEFAULTS`):

  - ``context_min`` = 0.3: flag 6 ``context_missing`` when SSIM(counterfactual, context) < 0.3.
    Chosen on composites of two real photographs (scikit-learn's sample images: one pasted into
    the other at 30-60% of the width, then re-rendered by a 3% rescale, blur, colour shift and
    JPEG q=40, as a generative editor redraws the whole scene): good composites 0.36-0.77, the
    subject alone without the scene 0.17-0.19 (``tests/judges/test_flags_decided.py`` recomputes
    them). A scale check, not a calibration on FLUX composites: calibrate on images people have
    flagged (the agreement report gives this judge's kappa against the humans per flag).
  - ``person_min`` = null: flag 4 ``person_missing`` is *not decided* by default. SSIM compares
    pixels in place, and the person moves and changes size between the person image and the
    composite: on the same composites SSIM to the person image was 0.18-0.24 with the person in
    the scene and 0.17-0.19 without, no threshold separates them. A number enables the flag.

  The judge answers the ``flags`` checklist with the flags it decides only (``decides``; the
  rater records them, and the statistics leave the other flags missing for it, not "no")."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from django.utils.translation import gettext_lazy

from .. import params as judge_params
from .base import (
    DIRECT,
    FILTER_FLAGS,
    BackendEntry,
    BackendUnavailable,
    JudgeBackend,
    JudgeItem,
    Verdict,
    filter_decides,
    filter_flags,
    filter_thresholds,
)

SIZE = 256
# the questions each mode answers (``params.mode``)
MODES: dict[str, tuple[str, ...]] = {"valueground_q3": ("q3",), "counterfactual_filter": ("flags",)}
# the SSIM proxy's own thresholds for the counterfactual filter (see the module docstring)
FILTER_DEFAULTS: dict[str, float | None] = {"context_min": 0.3, "person_min": None}
_C1 = (0.01 * 255) ** 2
_C2 = (0.03 * 255) ** 2


def _grey(path: Path, size: int = SIZE) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("L").resize((size, size), Image.BILINEAR), dtype=np.float64)


def ssim(a: np.ndarray, b: np.ndarray, window: int = 7) -> float:
    from scipy.ndimage import uniform_filter

    mu_a, mu_b = uniform_filter(a, window), uniform_filter(b, window)
    var_a = uniform_filter(a * a, window) - mu_a**2
    var_b = uniform_filter(b * b, window) - mu_b**2
    cov = uniform_filter(a * b, window) - mu_a * mu_b
    num = (2 * mu_a * mu_b + _C1) * (2 * cov + _C2)
    den = (mu_a**2 + mu_b**2 + _C1) * (var_a + var_b + _C2)
    return float((num / den).mean())


def image_ssim(path_a: Path, path_b: Path) -> float:
    return ssim(_grey(path_a), _grey(path_b))


class ImageSimilarityBackend(JudgeBackend):
    queue = "default"

    def __init__(self, spec) -> None:
        super().__init__(spec)
        p = spec.params
        self.mode = spec.direct_mode("image-similarity", MODES, whole=True)
        self.q3_thresholds = [float(x) for x in p.get("q3_thresholds", [0.35, 0.6])]
        self.thresholds: dict[str, float | None] = {}
        if self.mode == "counterfactual_filter":
            try:
                self.thresholds = filter_thresholds(p, FILTER_DEFAULTS)
            except ValueError as exc:
                raise BackendUnavailable(f"the image-similarity judge: {exc}") from None

    def _need(self, item: JudgeItem, *fields: str) -> list[Path]:
        missing = [f for f in fields if f not in item.images]
        if missing:
            raise ValueError(f"image(s) not available: {', '.join(missing)}")
        return [item.images[f] for f in fields]

    def judge(self, items: Sequence[JudgeItem], passes: Sequence[int]) -> list[Verdict]:
        out: list[Verdict] = []
        for item in items:
            t0 = time.perf_counter()
            try:
                if self.mode == "valueground_q3":
                    a, b = self._need(item, "image_a", "image_b")
                    s = image_ssim(a, b)
                    lo, hi = self.q3_thresholds
                    answers = {"q3": 2 if s >= hi else 1 if s >= lo else 0}
                    evidence = {"ssim_a_b": round(s, 4), "q3_thresholds": self.q3_thresholds}
                else:
                    [cf] = self._need(item, "counterfactual_image")
                    # only the source images whose flag is decided are compared
                    sources = [img for img, key in FILTER_FLAGS.values() if self.thresholds[key] is not None]
                    similarity = {
                        f: image_ssim(cf, path) for f, path in zip(sources, self._need(item, *sources), strict=True)
                    }
                    answers = {"flags": filter_flags(similarity, self.thresholds)}
                    evidence = {
                        **{f"ssim_{f.removesuffix('_image')}": round(v, 4) for f, v in similarity.items()},
                        **self.thresholds,
                    }
                raw, err = json.dumps(evidence), ""
            except (OSError, ValueError) as exc:
                answers, raw, err = None, "", f"cannot judge this item: {exc}"
            ms = int((time.perf_counter() - t0) * 1000)
            out.extend(Verdict(item.item_id, p, raw, answers, err, ms) for p in passes)
        return out


def decides(mode: str, params: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """The checklist flags a judge in this mode decides (None: its questions whole); ValueError
    for thresholds it cannot use."""
    if mode != "counterfactual_filter":
        return None
    return filter_decides(MODES[mode][0], filter_thresholds(params, FILTER_DEFAULTS))


BACKEND = BackendEntry(
    key="image_similarity",
    label=gettext_lazy("Image similarity (SSIM proxy, CPU)"),
    model_help=gettext_lazy("Model id: not used (SSIM compares pixels)."),
    family=DIRECT,
    runner=ImageSimilarityBackend,
    params=judge_params.IMAGE_SIMILARITY,
    modes=MODES,
    decides=decides,
)
