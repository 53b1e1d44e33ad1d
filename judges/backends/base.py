"""The one interface every judge backend implements: "score these items under this rubric".

Backends never import Django models: they get a :class:`JudgeSpec` (a snapshot of the judge
configuration plus the rubric) and :class:`JudgeItem` rows (item fields plus image files), and
return one :class:`Verdict` per (item, pass). A backend that cannot run at all raises
:class:`BackendUnavailable` with the reason; the run then fails with that message. A backend
never invents a judgement: an answer it could not get or parse is a Verdict with ``error``."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.rubric import Rubric

from .. import parsers
from ..prompts import build_messages


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

    def image_fields(self) -> list[str]:
        wanted = self.params.get("image_fields")
        if wanted:
            return list(wanted)
        return [f["name"] for f in self.item_fields if f.get("type") == "image"]


@dataclass
class JudgeItem:
    item_id: int
    context: dict[str, Any]  # annotation.services.item_render_context(item)
    images: dict[str, Path] = field(default_factory=dict)  # image field -> file on disk


@dataclass
class Verdict:
    item_id: int
    pass_index: int
    raw: str
    answers: dict[str, Any] | None
    error: str = ""
    latency_ms: int | None = None


@dataclass
class ChatRequest:
    system: str
    user: str
    images: list[Path]
    schema: dict[str, Any] | None = None
    seed: int | None = None


@dataclass
class ChatReply:
    text: str | None
    error: str = ""
    latency_ms: int | None = None


class JudgeBackend:
    """Base class. ``queue`` is the Celery queue whose workers can run this backend."""

    queue = "default"

    def __init__(self, spec: JudgeSpec) -> None:
        self.spec = spec

    def judge(self, items: Sequence[JudgeItem], passes: Sequence[int]) -> list[Verdict]:  # pragma: no cover
        raise NotImplementedError


class GenerativeBackend(JudgeBackend):
    """A backend that generates text from the rubric prompt; the configured parser reads it."""

    def generate(self, requests: Sequence[ChatRequest]) -> list[ChatReply]:  # pragma: no cover
        raise NotImplementedError

    def judge(self, items: Sequence[JudgeItem], passes: Sequence[int]) -> list[Verdict]:
        spec = self.spec
        plan: list[tuple[JudgeItem, int, list[str | None]]] = []
        requests: list[ChatRequest] = []
        images_of = spec.image_fields()
        base_seed = spec.params.get("seed")
        for item in items:
            messages = build_messages(spec.prompt_template, spec.rubric, spec.questions, item.context,
                                      spec.item_fields)
            if not messages:
                raise BackendUnavailable("the prompt template has no prompt for the judged questions")
            images = [item.images[f] for f in images_of if f in item.images]
            for p in passes:
                qids = []
                for qid, system, user in messages:
                    schema = None
                    if spec.parser == "json":
                        from ..prompts import answer_schema

                        schema = answer_schema(spec.rubric, spec.questions, item.context)
                    requests.append(ChatRequest(system=system, user=user, images=images, schema=schema,
                                                seed=None if base_seed is None else int(base_seed) + p))
                    qids.append(qid)
                plan.append((item, p, qids))
        replies = self.generate(requests)
        verdicts: list[Verdict] = []
        pos = 0
        for item, p, qids in plan:
            mine = replies[pos : pos + len(qids)]
            pos += len(qids)
            raw = (mine[0].text or "") if len(mine) == 1 else "\n".join(
                f"[{qid}] {r.text if r.text is not None else ''}" for qid, r in zip(qids, mine, strict=True)
            )
            latency = sum(r.latency_ms or 0 for r in mine)
            errors = [r.error for r in mine if r.error]
            if errors:
                verdicts.append(Verdict(item.item_id, p, raw, None, "request failed: " + "; ".join(errors), latency))
                continue
            try:
                answers: dict[str, Any] = {}
                for qid, r in zip(qids, mine, strict=True):
                    answers.update(self.parse(r.text or "", qid, item))
                verdicts.append(Verdict(item.item_id, p, raw, answers, "", latency))
            except parsers.ParseError as exc:
                verdicts.append(Verdict(item.item_id, p, raw, None, f"parse failed: {exc}", latency))
        return verdicts

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
            flag = spec.params.get("flag_if_not")
            if flag:  # a closed-choice classifier checked against the item's intended label
                choices = item_choices(spec.params, item.context)
                picked = parsers.parse_choice(text, choices)
                expected = str(item.context.get(flag["expected_field"], ""))
                return {flag["question"]: [] if picked.lower() == expected.lower() else [flag["flag"]]}
            if target is None:
                raise BackendUnavailable("the closed-choice parser answers one question per prompt")
            return parsers.parse_question_choice(text, spec.rubric.question(target))
        raise BackendUnavailable(f"parser {spec.parser!r} cannot read generated text")


def item_choices(params: Mapping[str, Any], ctx: Mapping[str, Any]) -> list[str]:
    from ..prompts import COUNTERFACTUAL_CHOICES

    if params.get("choices"):
        return list(params["choices"])
    by = params.get("choices_by", "dimension")
    entry = COUNTERFACTUAL_CHOICES.get(str(ctx.get(by, "")).lower())
    if entry is None:
        raise parsers.ParseError(f"no closed list of choices for {by}={ctx.get(by)!r}")
    return entry[1]


def timed() -> float:
    return time.perf_counter()
