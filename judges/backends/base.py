"""The one interface every judge backend implements: "score these items under this rubric".

Backends never import Django models: they get a :class:`JudgeSpec` (a snapshot of the judge
configuration plus the rubric) and :class:`JudgeItem` rows (item fields plus image files), and
return one :class:`Verdict` per (item, pass). A backend that cannot run at all raises
:class:`BackendUnavailable` with the reason; the run then fails with that message. A backend
never invents a judgement: an answer it could not get or parse is a Verdict with ``error``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from annotation.rubric import Rubric
from benchmarks.registry import PRESETS

from .. import params as judge_params
from .. import parsers

# Cultural Counterfactuals' image-image filter (Sec. 3.2 "CLIP Filtering": reject a counterfactual
# whose similarity is below a threshold to its context image or to its person image), as the
# Table 4 flags it ticks: flag -> (the source image compared with the counterfactual, the
# parameter holding the threshold), in checklist order. The filter decides only these two flags;
# a threshold set to null leaves its flag undecided (missing for the judge, never a "no").
FILTER_FLAGS: dict[str, tuple[str, str]] = {
    "person_missing": ("person_image", "person_min"),  # flag 4 (Fig. 8: 0.716 < 0.85)
    "context_missing": ("context_image", "context_min"),  # flag 6 (Fig. 7: 0.622 < 0.75)
}


def filter_thresholds(params: Mapping[str, Any], defaults: Mapping[str, float | None]) -> dict[str, float | None]:
    """The filter's thresholds (``context_min``, ``person_min``): ``params`` over the backend's
    ``defaults``; null = that flag is not decided. ValueError with the reason for anything else
    than a number in [-1, 1] (the range of a cosine and of SSIM), or when no flag is left."""
    out: dict[str, float | None] = {}
    for _, key in FILTER_FLAGS.values():
        v = params[key] if key in params else defaults[key]
        if v is None:
            out[key] = None
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not -1.0 <= float(v) <= 1.0:
            raise ValueError(f"{key} must be a number between -1 and 1, or null to leave its flag undecided; got {v!r}")
        out[key] = float(v)
    if all(v is None for v in out.values()):
        raise ValueError("the filter would decide no flag: give context_min or person_min a threshold")
    return out


def filter_flags(similarity: Mapping[str, float], thresholds: Mapping[str, float | None]) -> list[str]:
    """The flags ticked for one counterfactual: those whose source image's similarity (keyed by
    image field) is below the flag's threshold; a flag without a threshold is never ticked."""
    ticked = []
    for flag, (image, key) in FILTER_FLAGS.items():
        t = thresholds.get(key)
        if t is not None and similarity[image] < t:
            ticked.append(flag)
    return ticked


def filter_decides(question: str, thresholds: Mapping[str, float | None]) -> dict[str, list[str]]:
    """The flags of ``question`` the filter decides under these thresholds (``judges.decides``)."""
    return {question: [flag for flag, (_, key) in FILTER_FLAGS.items() if thresholds.get(key) is not None]}


#: what a worker without the model judges' packages must install (the end of a BackendUnavailable
#: message): ``make run`` installs only the runtime set (``requirements.txt``, no torch), so the
#: first run is quick; the demo's judges are seeded from stored outputs and need none of this
MODEL_EXTRA = (
    "install requirements-judges.txt on the worker that runs it (make run HV_MODEL_JUDGES=1 does; "
    "GPU workers: requirements-gpu.txt)"
)


class BackendUnavailable(RuntimeError):
    """This backend cannot run here (missing package, unreachable model, bad configuration)."""


@dataclass(frozen=True)
class JudgeSpec:
    backend: str
    model_id: str
    prompt_template: Mapping[str, Any]
    parser: str
    questions: tuple[str, ...]
    params: Mapping[str, Any]
    rubric: Rubric
    item_fields: Sequence[Mapping[str, Any]] = ()
    preset_key: str = ""

    def preset_mode(self) -> str:
        """The mode the project's preset declares for this backend (``Preset.direct_judges``), or ""."""
        preset = PRESETS.get(self.preset_key)
        direct = preset.direct_judges.get(self.backend) if preset is not None else None
        return direct.mode if direct is not None else ""

    def direct_mode(self, judge: str, modes: Mapping[str, tuple[str, ...]], *, whole: bool = False) -> str:
        """The mode a prompt-less backend runs in (``params.mode``, else the preset's), checked
        against its ``modes`` (its entry's, :class:`BackendEntry`): BackendUnavailable when the
        mode is unknown or the judge asks questions the mode does not answer (``whole``: the
        mode's questions exactly, as a checklist judge answers its one checklist). ``judge``
        names it in the messages."""
        mode = str(self.params.get("mode") or self.preset_mode())
        if mode not in modes:
            raise BackendUnavailable(
                f"the {judge} judge has no mode for preset {self.preset_key!r} (params.mode: {', '.join(modes)})"
            )
        answers = modes[mode]
        if whole and tuple(self.questions) != answers:
            raise BackendUnavailable(f"the {judge} judge in mode {mode} answers {list(answers)}")
        extra = sorted(set(self.questions) - set(answers))
        if extra:
            raise BackendUnavailable(f"the {judge} judge answers only {', '.join(answers)}, not {', '.join(extra)}")
        return mode

    def image_fields(self) -> list[str]:
        wanted = self.params.get("image_fields")
        if wanted:
            return list(wanted)
        return [f["name"] for f in self.item_fields if f.get("type") == "image"]


@dataclass
class JudgeItem:
    item_id: int
    context: dict[str, Any]  # annotation.presentation.item_render_context(item)
    images: dict[str, Path] = field(default_factory=dict)  # image field -> file on disk


@dataclass
class Verdict:
    item_id: int
    pass_index: int
    raw: str
    answers: dict[str, Any] | None
    error: str = ""
    latency_ms: int | None = None
    labels: dict[str, str] | None = None  # classifier labels outside the rubric (e.g. refused / answered)
    usage: Usage | None = None  # tokens of every request of this pass; None: the backend has no tokens
    # a prompt-less judge's unrounded scores on its questions' scales (``answers`` holds the nearest
    # options) and its numbers outside the rubric (e.g. AHEaD's ALIGN): kept for the statistics
    exact: dict[str, float] | None = None
    metrics: dict[str, float] | None = None


@dataclass
class ChatRequest:
    system: str
    user: str
    images: list[Path]
    schema: dict[str, Any] | None = None
    seed: int | None = None
    # what is said right before each image ("Image A"), parallel to ``images``; "" or missing:
    # the image goes unlabelled (``prompts.image_labels`` decides)
    image_labels: list[str] = field(default_factory=list)

    def labelled_images(self) -> list[tuple[str, Path]]:
        """(label or "", image) in order: what a backend puts into the message."""
        labels = list(self.image_labels)[: len(self.images)]
        return list(zip(labels + [""] * (len(self.images) - len(labels)), self.images, strict=True))


@dataclass(frozen=True)
class Usage:
    """Tokens a request took, as the endpoint reported them (``usage``) or the local tokenizer
    counted them; they price a run (``judges.selectors.run_usage``)."""

    prompt_tokens: int
    completion_tokens: int

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)


@dataclass
class ChatReply:
    text: str | None
    error: str = ""
    latency_ms: int | None = None
    usage: Usage | None = None  # None: the engine did not say


def pass_usage(replies: Sequence[ChatReply]) -> Usage | None:
    """The tokens of one pass (its replies summed). None when a reply that got an answer has no
    count: a partial sum would understate the cost. A request that got no answer (an HTTP
    error, a timeout) is billed nothing and counts zero."""
    total = Usage(0, 0)
    for r in replies:
        if r.usage is not None:
            total = total + r.usage
        elif r.text is not None:
            return None
    return total if any(r.usage is not None for r in replies) else None


class JudgeBackend:
    """Base class. ``queue`` is the Celery queue whose workers can run this backend.

    ``cancelled``: set when the run is cancelled while the backend works (the chunk's watch,
    ``judges/execution.py``); a backend that waits (the OpenAI-compatible one between retries)
    waits on it, so a cancel ends the wait at once (issue 37, M4)."""

    queue = "default"

    def __init__(self, spec: JudgeSpec) -> None:
        self.spec = spec
        self.cancelled = threading.Event()

    def judge(self, items: Sequence[JudgeItem], passes: Sequence[int]) -> list[Verdict]:  # pragma: no cover
        raise NotImplementedError


# How a judge of a backend is made and checked (``configuration.BUILDERS`` holds one builder per
# family, so a new backend of an existing family needs no builder of its own).
PROMPTED = "prompted"  # asked through a prompt template; the configured parser reads its reply
DIRECT = "direct"  # prompt-less: answers its mode's questions itself (``BackendEntry.modes``)
ENSEMBLE = "ensemble"  # combines member judges of the project; runs no backend of its own
FAMILIES = (PROMPTED, DIRECT, ENSEMBLE)
#: the longest backend key ``JudgeConfig.backend`` stores
KEY_LENGTH = 20


@dataclass(frozen=True)
class BackendEntry:
    """One judge backend as the platform offers it: what the judge form, the services, the
    worker and the database read about it, declared once beside its class. A backend is its
    module under ``judges/backends/`` (the class and this entry) plus one line in
    ``judges/registry.py``; nothing else lists backends.

    ``label`` and ``model_help`` (what the model id means; ``%(model)s`` is ``default_model``)
    are shown in the judge form, translated (``gettext_lazy``). ``runner``: the class a worker
    builds from a :class:`JudgeSpec` (None for an ensemble, whose members run); its ``queue`` is
    the Celery queue of the run. ``params``: the parameters declared for it
    (``judges/params.py``; None: it has none, not even the common ones). ``modes``: a prompt-less
    backend's modes and the questions each answers (``params.mode``; default the preset's,
    ``Preset.direct_judges``). ``internal_params``: parameters only the platform sets.
    ``default_model``: the model id a judge made without one records; ``model_required``: why a
    judge needs a model id (the message when none is given), "" when it may be empty.
    ``decides``: (mode, params) -> the checklist flags a judge of this mode and these
    thresholds decides (None: every option); ``check_params``: (params, questions) -> ValueError
    for parameters it cannot use, beyond each declared value (which :meth:`check_declared`
    checks), both read when a judge is made, no model loaded."""

    key: str
    label: Any
    model_help: Any
    family: str
    runner: type[JudgeBackend] | None = None
    params: tuple[judge_params.Param, ...] | None = ()
    modes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    internal_params: tuple[str, ...] = ()
    default_model: str = ""
    model_required: str = ""
    decides: Callable[[str, Mapping[str, Any]], dict[str, list[str]] | None] | None = None
    check_params: Callable[[Mapping[str, Any], Sequence[str]], None] | None = None

    def __post_init__(self) -> None:
        # refused when the entry is written, not when a judge of it cannot be stored
        if not self.key or len(self.key) > KEY_LENGTH:
            raise ValueError(f"a backend key is 1 to {KEY_LENGTH} characters (JudgeConfig.backend): {self.key!r}")
        if self.family not in FAMILIES:
            raise ValueError(f"backend {self.key!r}: family is one of {', '.join(FAMILIES)}, not {self.family!r}")
        if (self.family == DIRECT) != bool(self.modes):
            raise ValueError(f"backend {self.key!r}: a prompt-less backend, and only it, declares its modes")
        if (self.family == ENSEMBLE) != (self.runner is None):
            raise ValueError(f"backend {self.key!r}: every backend but an ensemble names the class that runs it")

    @property
    def queue(self) -> str:
        """The Celery queue whose workers run it (an ensemble's run: its members', ``runs.py``)."""
        return self.runner.queue if self.runner is not None else JudgeBackend.queue

    def schema(self) -> tuple[judge_params.Param, ...]:
        """Every parameter it declares: its mode, its own, then the common ones."""
        return judge_params.schema(self.params, tuple(self.modes))

    def declared(self, name: str) -> judge_params.Param | None:
        return judge_params.declared(self.schema(), name)

    def undeclared(self, params: Mapping[str, Any]) -> list[str]:
        """The keys of ``params`` it does not read."""
        return judge_params.undeclared(self.schema(), params, internal=self.internal_params)

    def check_declared(self, params: Mapping[str, Any], *, image_fields: Sequence[str] | None = None) -> None:
        """``judge_params.ParamError`` for each declared parameter whose value it cannot use."""
        judge_params.check(self.schema(), params, internal=self.internal_params, image_fields=image_fields)

    def describe(self, params: Mapping[str, Any], *, mode: str = "", extractor: str = "") -> list[judge_params.Row]:
        """A judge's parameters as its page shows them (``judge_params.describe``)."""
        return judge_params.describe(
            self.schema(), params, internal=self.internal_params, mode=mode, extractor=extractor
        )

    def build(self, spec: JudgeSpec) -> JudgeBackend:
        """The backend that runs a judge of this spec (BackendUnavailable for an ensemble)."""
        if self.runner is None:
            raise BackendUnavailable(f"the {self.key} judge runs its members, not a backend of its own")
        return self.runner(spec)


class GenerativeBackend(JudgeBackend):
    """A backend that generates text from the rubric prompt; the configured parser reads it.

    Four prompt template forms (``prompts.template_kind``):

    - ``rubric``: the rubric prompt (one request, or one per question), every item image attached
      (labelled "Image A:" ... where the rubric names them, ``prompts.image_labels``);
    - ``format``: a paper's prompt with its own output contract, read by that format's parser
      into one repeated question (``judges/formats.py``, e.g. CQ-Bench's incorporation check);
    - ``classifiers``: closed-choice classifiers (the preset's ``classifier_bank``), one request
      per classifier with only its image, answers compared with the item's intended labels and
      mapped to checklist flags;
    - ``label``: a classifier whose label is not a rubric answer (the refusal judge)."""

    def generate(self, requests: Sequence[ChatRequest]) -> list[ChatReply]:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------------ requests per item
    def units(self, item: JudgeItem) -> list[tuple[str | None, ChatRequest]]:
        """(tag, request) per request one pass over the item makes; ValueError when the item
        cannot be asked (the item fails, listed with the reason)."""
        from ..prompts import (
            answer_schema,
            build_messages,
            classifier_bank,
            classifier_question,
            image_labels,
            render,
            template_kind,
        )

        spec = self.spec
        template = spec.prompt_template
        kind = template_kind(template)
        if kind == "classifiers":
            bank = classifier_bank(spec.preset_key)
            out = []
            for c in template["classifiers"]:
                image = item.images.get(c["image"])
                if image is None:
                    raise ValueError(f"the item has no image {c['image']!r} for classifier {c['id']}")
                prompt, _ = classifier_question(c, item.context, bank)
                out.append(
                    (c["id"], ChatRequest(system=str(template.get("system") or ""), user=prompt, images=[image]))
                )
            return out
        if kind == "label":
            from ..prompts import template_placeholders

            text = {k: str(template.get(k) or "") for k in ("system", "user")}
            needed = [n for k in text for n in template_placeholders(text[k])]
            missing = [n for n in needed if item.context.get(n) in (None, "")]
            if missing:
                raise ValueError(f"the item has no {', '.join(missing)} (give it in the item's data or meta)")
            ctx = {k: v for k, v in item.context.items() if not isinstance(v, (list, dict))}
            schema = {
                "type": "object",
                "properties": {"label": {"type": "string", "enum": list(template["labels"])}},
                "required": ["label"],
                "additionalProperties": False,
            }
            fields = [f for f in template.get("images") or [] if f in item.images]
            return [
                (
                    template["label"],
                    ChatRequest(
                        system=render(text["system"], ctx),
                        user=render(text["user"], ctx),
                        images=[item.images[f] for f in fields],
                        schema=schema,
                        image_labels=image_labels(template, spec.rubric, spec.item_fields, fields),
                    ),
                )
            ]
        if kind == "format":  # a paper's own output contract (``judges/formats.py``): one request
            from ..formats import format_messages

            messages = [(None, *format_messages(template, spec.rubric, item.context, spec.item_fields))]
        else:
            messages = build_messages(template, spec.rubric, spec.questions, item.context, spec.item_fields)
        if not messages:
            raise BackendUnavailable("the prompt template has no prompt for the judged questions")
        fields = [f for f in spec.image_fields() if f in item.images]
        images = [item.images[f] for f in fields]
        labels = image_labels(template, spec.rubric, spec.item_fields, fields)
        json_out = spec.parser == "json" and kind == "rubric"
        schema = answer_schema(spec.rubric, spec.questions, item.context) if json_out else None
        return [
            (qid, ChatRequest(system=system, user=user, images=images, schema=schema, image_labels=labels))
            for qid, system, user in messages
        ]

    def judge(self, items: Sequence[JudgeItem], passes: Sequence[int]) -> list[Verdict]:
        base_seed = self.spec.params.get("seed")
        plan: list[tuple[JudgeItem, int, list[str | None]]] = []
        requests: list[ChatRequest] = []
        verdicts: list[Verdict] = []
        for item in items:
            try:
                units = self.units(item)
            except ValueError as exc:
                verdicts.extend(Verdict(item.item_id, p, "", None, f"cannot judge this item: {exc}") for p in passes)
                continue
            for p in passes:
                for _tag, req in units:
                    requests.append(replace(req, seed=None if base_seed is None else int(base_seed) + p))
                plan.append((item, p, [tag for tag, _ in units]))
        replies = self.generate(requests)
        pos = 0
        for item, p, tags in plan:
            mine = replies[pos : pos + len(tags)]
            pos += len(tags)
            raw = (
                (mine[0].text or "")
                if len(mine) == 1
                else "\n".join(
                    f"[{tag}] {r.text if r.text is not None else ''}" for tag, r in zip(tags, mine, strict=True)
                )
            )
            # the time to the answers; none when no request got one (a silent port's timeout and a
            # refused port's instant error must read the same, issue 37)
            timed = [r.latency_ms for r in mine if r.latency_ms is not None]
            latency = sum(timed) if timed else None
            usage = pass_usage(mine)  # a failed parse cost its tokens too
            errors = [r.error for r in mine if r.error]
            if errors:
                verdicts.append(
                    Verdict(item.item_id, p, raw, None, "request failed: " + "; ".join(errors), latency, usage=usage)
                )
                continue
            try:
                answers, labels = self.read(item, tags, [r.text or "" for r in mine])
                verdicts.append(Verdict(item.item_id, p, raw, answers, "", latency, labels, usage=usage))
            except parsers.ParseError as exc:
                verdicts.append(Verdict(item.item_id, p, raw, None, f"parse failed: {exc}", latency, usage=usage))
        return verdicts

    # ------------------------------------------------------------------ replies -> answers
    def read(
        self, item: JudgeItem, tags: Sequence[str | None], texts: Sequence[str]
    ) -> tuple[dict[str, Any], dict[str, str] | None]:
        """(rubric answers, classifier labels or None) from one pass's replies."""
        from ..prompts import classifier_bank, classifier_question, template_kind

        template = self.spec.prompt_template
        kind = template_kind(template)
        if kind == "label":
            return {}, {template["label"]: parsers.parse_label(texts[0], template["labels"])}
        if kind == "format":
            from ..formats import read_format_reply

            return read_format_reply(template, self.spec.rubric, item.context, texts[0]), None
        if kind == "classifiers":
            by_id = {c["id"]: c for c in template["classifiers"]}
            bank = classifier_bank(self.spec.preset_key)
            labels: dict[str, str] = {}
            wrong: dict[str, bool] = {}
            problems = []
            for tag, text in zip(tags, texts, strict=True):
                c = by_id[tag]
                _, choices = classifier_question(c, item.context, bank)
                try:
                    labels[tag] = parsers.parse_choice(text, choices)
                except parsers.ParseError as exc:
                    problems.append(f"{tag}: {exc}")
                    continue
                wrong[tag] = _norm_label(labels[tag]) != _norm_label(item.context.get(c["expected"]))
            if problems:  # one unreadable classifier answer: no flags are guessed for the item
                raise parsers.ParseError("; ".join(problems))
            answers: dict[str, Any] = {q: set() for q in self.spec.questions}
            for rule in template["flags"]:
                if any(wrong[c] for c in rule["if_wrong"]) and not any(wrong[c] for c in rule.get("unless_wrong", [])):
                    answers.setdefault(rule["question"], set()).add(rule["flag"])
            ordered = {q: [v for v in self.spec.rubric.question(q).option_values() if v in answers[q]] for q in answers}
            return ordered, labels
        answers = {}
        for qid, text in zip(tags, texts, strict=True):
            answers.update(self.parse(text, qid, item))
        return answers, None

    def parse(self, text: str, qid: str | None, item: JudgeItem) -> dict[str, Any]:
        spec = self.spec
        if spec.parser == "json":
            return parsers.parse_json(text, spec.rubric, [qid] if qid else spec.questions)
        target = qid or (spec.questions[0] if len(spec.questions) == 1 else None)
        if spec.parser == "score_is":
            if target is None:
                raise BackendUnavailable('the "score is <num>" parser answers one question per prompt')
            return parsers.parse_score_is(text, spec.rubric.question(target))
        if spec.parser == "choice":
            if target is None:
                raise BackendUnavailable("the closed-choice parser answers one question per prompt")
            return parsers.parse_question_choice(text, spec.rubric.question(target))
        raise BackendUnavailable(f"parser {spec.parser!r} cannot read generated text")


def _norm_label(v: Any) -> str:
    return " ".join(str(v or "").replace("-", " ").split()).lower()


def timed() -> float:
    return time.perf_counter()
