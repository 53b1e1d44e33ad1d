"""Image-similarity judge on CPU: structural similarity (SSIM; Wang et al. 2004, Eq. 13, with
a uniform 7x7 window on grey levels at a common size) for the papers' automatic filters.

Modes (``params.mode``; default: the mode the preset declares, ``Preset.direct_judges``):

- ``valueground_q3``: ValueGround Q3 (minimal contrast) proxy: SSIM of Image A vs Image B
  mapped to 0/1/2 by ``q3_thresholds`` (default [0.35, 0.6]: our default, not the paper's).
- ``counterfactual_filter``: Cultural Counterfactuals' image-image filter (App. A: reject when
  similarity < 0.75 to the context image or < 0.85 to the person image; the paper uses CLIP
  similarity, this judge SSIM, so thresholds are configurable: ``context_min``,
  ``person_min``). Answers the ``flags`` checklist with ``context_missing`` / ``person_missing``
  only (the other flags are not assessed by this judge and stay unticked)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .base import DIRECT_MODES, BackendUnavailable, JudgeBackend, JudgeItem, Verdict

SIZE = 256
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
        self.mode = str(p.get("mode") or spec.preset_mode())
        wanted = DIRECT_MODES["image_similarity"].get(self.mode)
        if wanted is None:
            raise BackendUnavailable(
                f"the image-similarity judge has no mode for preset {spec.preset_key!r} "
                "(params.mode: valueground_q3 or counterfactual_filter)"
            )
        if tuple(spec.questions) != wanted:
            raise BackendUnavailable(f"the image-similarity judge in mode {self.mode} answers {list(wanted)}")
        self.q3_thresholds = [float(x) for x in p.get("q3_thresholds", [0.35, 0.6])]
        self.context_min = float(p.get("context_min", 0.75))
        self.person_min = float(p.get("person_min", 0.85))

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
                    cf, ctx, person = self._need(item, "counterfactual_image", "context_image", "person_image")
                    s_ctx, s_person = image_ssim(cf, ctx), image_ssim(cf, person)
                    flags = []
                    if s_person < self.person_min:
                        flags.append("person_missing")
                    if s_ctx < self.context_min:
                        flags.append("context_missing")
                    answers = {"flags": flags}
                    evidence = {
                        "ssim_context": round(s_ctx, 4),
                        "ssim_person": round(s_person, 4),
                        "context_min": self.context_min,
                        "person_min": self.person_min,
                    }
                raw, err = json.dumps(evidence), ""
            except (OSError, ValueError) as exc:
                answers, raw, err = None, "", f"cannot judge this item: {exc}"
            ms = int((time.perf_counter() - t0) * 1000)
            out.extend(Verdict(item.item_id, p, raw, answers, err, ms) for p in passes)
        return out
