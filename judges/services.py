"""Every write of the judge side: configure a judge, start / execute / cancel / re-run a run.

A judge is a rater: each judge configuration owns one ``Rater(kind=model)`` recording backend,
model id, prompt hash and parameters, and the combined answer per item is stored as that
rater's ``Annotation`` on a regular ``Assignment``, validated by the same rubric validator and
``derive`` as a human submission. A judge answers a subset of the rubric (the configured
questions); it is validated against that part of the rubric (derived fields and the
acceptance rule are kept when every name they read is judged).

Execution: ``start_judge_run`` stores the run and, on commit, enqueues chunks of item ids on
the backend's Celery queue (``api``, ``gpu`` or ``default``). ``execute_judge_chunk`` is
idempotent: outputs are keyed by (run, item, pass), items finalise once (``JudgeItemResult``
is unique per run and item), so a redelivered chunk (a worker killed mid-run, ``acks_late``)
only does the work that is missing."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from annotation.answers import METRICS_KEY
from annotation.assets import media_path
from annotation.expressions import Expression
from annotation.models import Annotation, Asset, Assignment, Item, Project, Rater
from annotation.presentation import item_render_context
from annotation.rubric import AnswerError, Rubric, RubricError
from benchmarks.base import Preset
from core import jobs
from core.errors import DomainError
from core.heartbeat import Heartbeat
from core.values import value_problem
from studies.models import Sample, SampleItem
from studies.sampling import metadata_columns

from . import endpoints, formats, orders, prompts
from . import params as judge_params
from .backends import (
    DIRECT_MODES,
    QUEUES,
    BackendUnavailable,
    JudgeItem,
    JudgeSpec,
    Verdict,
    backend_for,
    check_direct_params,
    direct_decides,
)
from .backends.clip_similarity import DEFAULT_MODEL as CLIP_DEFAULT_MODEL
from .combine import combine, combine_metrics
from .decides import ensemble_decides, rater_decides
from .models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun
from .outputs import EXACT_KEY, SCORES_KEY

DEFAULT_CHUNK = 16
MAX_CHUNK = 1000


# ------------------------------------------------------------------------------ rubric part
@lru_cache(maxsize=256)
def _judged_rubric(schema_json: str, questions: tuple[str, ...]) -> Rubric:
    import json

    schema = json.loads(schema_json)
    keep = set(questions)
    qs = []
    for q in schema["questions"]:
        if q["id"] not in keep:
            continue
        q = dict(q)
        if q.get("required_if") and not Expression(q["required_if"]).names <= keep:
            q.pop("required_if")
        qs.append(q)
    names = set(keep)
    derived = []
    for d in schema.get("derived") or []:
        if Expression(d["expr"]).names <= names:
            derived.append(d)
            names.add(d["id"])
    part = {
        "title": schema.get("title", ""),
        "instructions": schema.get("instructions", ""),
        "questions": qs,
        "derived": derived,
    }
    acc = schema.get("acceptance")
    if acc and Expression(acc["expr"]).names <= names:
        part["acceptance"] = acc
    return Rubric.from_schema(part)


def judged_rubric(project: Project, questions: Sequence[str]) -> Rubric:
    """The part of the project's rubric a judge answers."""
    import json

    return _judged_rubric(json.dumps(project.rubric_version.schema, sort_keys=True), tuple(questions))


def spec_for(config: JudgeConfig) -> JudgeSpec:
    project = config.project
    preset = project.preset
    params = dict(config.params)
    if config.backend == JudgeConfig.Backend.AHEAD:  # EXAG's baseline: the real images (Eq. 3)
        from .ahead import real_images_param

        params.update(real_images_param(project, params))
    return JudgeSpec(
        backend=config.backend,
        model_id=config.model_id,
        prompt_template=config.prompt_template,
        parser=config.parser,
        questions=tuple(config.questions),
        params=params,
        rubric=project.rubric_version.parsed(),
        item_fields=preset.item_fields,
        preset_key=project.preset_key,
    )


def queue_for(config: JudgeConfig) -> str:
    if config.backend == JudgeConfig.Backend.ENSEMBLE:
        queues = {QUEUES.get(m.backend, "default") for m in config.members.all()}
        return next((q for q in ("gpu", "api") if q in queues), "default")
    return QUEUES.get(config.backend, "default")


# ------------------------------------------------------------------------------ configure
def create_judge_config(
    *,
    project: Project,
    name: str,
    backend: str,
    model_id: str = "",
    prompt_template: dict | None = None,
    parser: str | None = None,
    questions: Sequence[str] | None = None,
    params: dict[str, Any] | None = None,
    passes: int = 1,
    combine: str = "mean",
    members: Iterable[JudgeConfig] = (),
    both_orders: bool = False,
    created_by: AbstractBaseUser | None = None,
    price_prompt_per_1m: Any = None,
    price_completion_per_1m: Any = None,
) -> JudgeConfig:
    """A judge for a project; defaults (prompt, parser, questions) come from the preset: its paper
    prompt (``Preset.judge_prompt``) or the prompt built from the rubric, and for the embedding and
    image-similarity judges the questions it declares for them (``Preset.direct_judges``).

    ``both_orders``: every pass also judges the pair swapped (presets that declare a
    ``pair_order`` only; the judge must answer the questions the swap and the verdict touch)."""
    name = (name or "").strip()
    if not name:
        raise DomainError("a judge needs a name")
    if backend not in JudgeConfig.Backend.values:
        raise DomainError(f"unknown backend {backend!r}; choose one of {', '.join(JudgeConfig.Backend.values)}")
    if combine not in JudgeConfig.Combine.values:
        raise DomainError("passes combine by mean or majority")
    if isinstance(passes, bool) or not isinstance(passes, int) or not 1 <= passes <= 20:
        raise DomainError("passes must be a whole number between 1 and 20")
    if not isinstance(both_orders, bool):
        raise DomainError("both_orders is true or false")
    if params is not None and not isinstance(params, dict):
        raise DomainError("params must be an object")
    price_prompt_per_1m, price_completion_per_1m = check_prices(price_prompt_per_1m, price_completion_per_1m)
    params = dict(params or {})
    problem = value_problem({"name": name, "model_id": model_id, "params": params, "prompt": prompt_template})
    if problem:
        raise DomainError(f"the judge cannot be stored: {problem}")
    try:  # no literal keys; only the keys and endpoints the administrator allows
        endpoints.check_params(backend, params)
    except ValueError as exc:
        raise DomainError(str(exc)) from None
    rubric = project.rubric_version.parsed()
    members = list(members)
    preset = project.preset
    defaults = prompts.preset_defaults(preset, rubric)
    kind, decides = "rubric", None
    judged_by_template: list[str] = []
    if backend == JudgeConfig.Backend.ENSEMBLE:
        if len(members) < 2:
            raise DomainError("an ensemble needs at least two member judges")
        if any(m.project_id != project.id or m.backend == JudgeConfig.Backend.ENSEMBLE for m in members):
            raise DomainError("ensemble members must be (non-ensemble) judges of the same project")
        parser = JudgeConfig.Parser.NONE
        questions = questions or sorted(
            {q for m in members for q in m.questions}, key=[q.id for q in rubric.questions].index
        )
        prompt_template = {}
    elif backend in DIRECT_MODES:  # prompt-less: embedding, image similarity (SSIM, CLIP)
        parser = JudgeConfig.Parser.NONE
        prompt_template = {}
        if questions is None:
            questions = _direct_questions(backend, preset)
        if backend == JudgeConfig.Backend.CLIP_SIMILARITY and not model_id:
            model_id = CLIP_DEFAULT_MODEL  # recorded on the rater: the paper's CLIP-ViT-L/14
        if backend == JudgeConfig.Backend.AHEAD and not model_id.strip():
            raise DomainError(
                "the AHEaD judge needs the model id of its descriptor extractor (a vision-language model)"
            )
    else:
        if isinstance(prompt_template, dict) and "use" in prompt_template:  # a named template
            named = prompts.named_template(str(prompt_template["use"]))
            if named is None:
                raise DomainError(
                    f"no prompt template named {prompt_template['use']!r}; choose one of "
                    f"{', '.join(prompts.named_templates())}"
                )
            prompt_template = json.loads(json.dumps(named))
        if prompt_template is None:
            parser = parser or defaults["parser"]
            prompt_template = (
                defaults["prompt_template"] if parser == defaults["parser"] else dict(prompts.GENERIC_TEMPLATE)
            )
        if not isinstance(prompt_template, dict) or not (
            "per_question" in prompt_template or "user" in prompt_template or "classifiers" in prompt_template
        ):
            raise DomainError(
                'a prompt template is {"system": ..., "user": ...}, {"per_question": {...}}, '
                '{"classifiers": [...], "flags": [...]}, {"label", "labels", "system", "user"} or '
                '{"output_format", "question", "system", "user"}'
            )
        kind = prompts.template_kind(prompt_template)
        if kind == "rubric":
            parser = parser or defaults["parser"]
            if questions is None:
                questions = defaults["questions"]
        else:
            parser = parser or JudgeConfig.Parser.CHOICE
            if parser != JudgeConfig.Parser.CHOICE:
                # a format template is read by its paper's format; it is stored as the choice parser
                # (one closed verdict per element), so the parser choices need no new value
                reader = "its output format" if kind == "format" else "the choice parser"
                raise DomainError(f"a {kind} template is read by {reader}, not {parser!r}")
        if parser not in ("json", "score_is", "choice"):
            raise DomainError(f"unknown parser {parser!r}")
        if kind == "classifiers":
            try:
                judged, flags = prompts.check_classifier_template(
                    prompt_template, rubric, prompts.classifier_bank(preset.key)
                )
            except ValueError as exc:
                raise DomainError(f"classifier template: {exc}") from None
            if questions is not None and list(questions) != judged:
                raise DomainError(
                    f"this classifier template can answer only {', '.join(judged)} (its flags), "
                    f"not {', '.join(questions) or '(none)'}"
                )
            questions = judged_by_template = judged
            decides = {
                q: [f for r, f in zip(prompt_template["flags"], flags, strict=True) if r["question"] == q]
                for q in judged
            }
        elif kind == "label":
            labels = prompt_template.get("labels")
            if (
                not isinstance(prompt_template.get("label"), str)
                or not prompt_template["label"]
                or not (isinstance(labels, list) and len(labels) >= 2 and all(isinstance(x, str) and x for x in labels))
            ):
                raise DomainError('a label template needs "label" (a name) and "labels" (at least two)')
            if questions:
                raise DomainError("a label judge answers no rubric question: its label is stored as its output")
            questions = []
        elif kind == "format":
            try:
                judged = formats.check_format_template(prompt_template, rubric)
            except ValueError as exc:
                raise DomainError(f"output-format template: {exc}") from None
            if questions is not None and list(questions) != judged:
                raise DomainError(
                    f"this {prompt_template['output_format']} template answers only {', '.join(judged)}, "
                    f"not {', '.join(questions) or '(none)'}"
                )
            questions = judged_by_template = judged
    questions = list(questions or [])
    label_judge = backend != JudgeConfig.Backend.ENSEMBLE and backend not in DIRECT_MODES and kind == "label"
    if (
        not label_judge
        and kind == "rubric"
        and parser in ("score_is", "choice")
        and len(questions) > 1
        and "per_question" not in prompt_template
    ):
        raise DomainError(
            f"the {parser} parser reads one answer per reply: give a per_question template or judge one question"
        )
    if not label_judge:
        known = {q.id: q for q in rubric.questions}
        unknown = [q for q in questions if q not in known]
        if unknown or not questions:
            raise DomainError(
                f"the judge must answer rubric questions; unknown: {', '.join(unknown) or '(none given)'}"
            )
        can = (
            judged_by_template
            if kind in ("classifiers", "format")
            else answerable_questions(
                backend=backend,
                rubric=rubric,
                preset=preset,
                params=params,
                parser=parser,
                members=members,
            )
        )
        cannot = [q for q in questions if q not in can]
        if cannot:
            raise DomainError(
                f"the {backend} judge cannot answer {', '.join(cannot)}; it can answer "
                f"{', '.join(can) or 'no question of this rubric'}"
            )
        try:
            judged_rubric(project, questions)
        except RubricError as exc:
            raise DomainError(f"these questions do not form a valid part of the rubric: {exc}") from None
    if backend != JudgeConfig.Backend.ENSEMBLE:
        try:  # the declared parameters (judges/params.py), as the judge form checks them
            judge_params.check(backend, params, image_fields=preset.image_fields())
        except judge_params.ParamError as exc:
            raise DomainError(f"the {backend} judge cannot use these params: {exc}", errors=exc.errors) from None
    if backend in DIRECT_MODES:  # the flags its mode and thresholds decide (judges/decides.py)
        try:
            check_direct_params(backend, params, questions)
            decides = direct_decides(backend, direct_mode(backend, preset, params), params)
        except ValueError as exc:
            raise DomainError(f"the {backend} judge cannot use these params: {exc}") from None
    elif backend == JudgeConfig.Backend.ENSEMBLE:
        decides = ensemble_decides(
            rubric,
            questions,
            [
                (
                    m.questions,
                    rater_decides(kind="model", backend=m.backend, parameters=m.rater.parameters, preset=preset),
                )
                for m in members
            ],
        )
    if both_orders:
        _check_both_orders(preset, backend, questions)
    phash = prompts.prompt_hash(
        backend=backend,
        model_id=model_id,
        prompt_template=prompt_template,
        parser=parser,
        questions=questions,
        params=params,
    )
    public_params = endpoints.public_params(params)
    with transaction.atomic():
        if JudgeConfig.objects.filter(project=project, name=name).exists():
            raise DomainError(f"this project already has a judge named {name!r}")
        rater = Rater.objects.create(
            kind=Rater.Kind.MODEL,
            name=f"judge: {name}"[:200],
            backend=backend,
            model_id=model_id[:200],
            prompt_hash=phash,
            parameters={
                **public_params,
                "passes": int(passes),
                "combine": combine,
                **({"both_orders": True} if both_orders else {}),
                "parser": parser,
                "questions": questions,
                "members": [m.name for m in members],
                # the checklist flags it decides (a classifier, an image filter, an ensemble of
                # them; judges/decides.py); a label judge's output is its label
                **({"decides": decides} if decides else {}),
                **({"labels": {prompt_template["label"]: prompt_template["labels"]}} if kind == "label" else {}),
            },
        )
        config = JudgeConfig.objects.create(
            project=project,
            name=name[:200],
            backend=backend,
            model_id=model_id,
            prompt_template=prompt_template,
            parser=parser,
            questions=questions,
            params=params,
            passes=int(passes),
            both_orders=both_orders,
            combine=combine,
            rater=rater,
            created_by=created_by,
            price_prompt_per_1m=price_prompt_per_1m,
            price_completion_per_1m=price_completion_per_1m,
        )
        if members:
            config.members.set(members)
    # a backend that cannot be built here may still run on its worker (GPU, API key): checked there
    return config


def _check_both_orders(preset: Preset, backend: str, questions: Sequence[str]) -> None:
    order = preset.pair_order
    if order is None:
        raise DomainError(f"both orders are offered for pairwise protocols only; {preset.name} declares no pair order")
    if backend == JudgeConfig.Backend.ENSEMBLE:
        raise DomainError("an ensemble is not asked in both orders: ask its member judges in both orders")
    needed = orders.order_questions(order)
    missing = sorted(needed - set(questions))
    if missing:
        raise DomainError(
            f"to judge both orders the judge must answer {', '.join(sorted(needed))} "
            f"(the swapped pair's answers map back through them); missing: {', '.join(missing)}"
        )


# the question types each parser of generated text can read
PARSER_TYPES = {
    "json": ("scale", "binary", "choice", "checklist", "pairwise"),
    "score_is": ("scale", "binary"),
    "choice": ("scale", "binary", "choice", "pairwise"),
}


def direct_mode(backend: str, preset: Preset, params: dict[str, Any]) -> str:
    """The mode an embedding / image-similarity judge runs in: ``params.mode`` or the preset's."""
    direct = preset.direct_judges.get(backend)
    return str(params.get("mode") or (direct.mode if direct is not None else ""))


def answerable_questions(
    *,
    backend: str,
    rubric: Rubric,
    preset: Preset,
    params: dict[str, Any],
    parser: str | None,
    members: Sequence[JudgeConfig] = (),
) -> list[str]:
    """The rubric questions (in rubric order) a judge of this configuration can answer, checked
    when the judge is created rather than when it runs: an embedding / image-similarity judge
    answers its mode's questions (``backends.DIRECT_MODES``), an ensemble what its members
    answer, a generative judge every non-text question its parser can read (``PARSER_TYPES``).
    A classifier template's flags are checked by ``prompts.check_classifier_template``."""
    if backend == JudgeConfig.Backend.ENSEMBLE:
        can = {q for m in members for q in m.questions}
    elif backend in DIRECT_MODES:
        mode = direct_mode(backend, preset, params)
        modes = DIRECT_MODES[backend]
        if mode not in modes:
            raise DomainError(
                f"the {backend} judge has no mode {mode!r} for preset {preset.key!r}; "
                f"params.mode is one of {', '.join(modes)}"
                if mode
                else f"the {backend} judge has no mode for preset {preset.key!r}; set params.mode ({', '.join(modes)})"
            )
        can = set(modes[mode])
    else:
        types = PARSER_TYPES.get(parser or "json", PARSER_TYPES["json"])
        can = {q.id for q in rubric.questions if q.type in types}
    return [q.id for q in rubric.questions if q.id in can]


def _direct_questions(backend: str, preset: Preset) -> list[str]:
    """The questions the preset declares for an embedding / image-similarity judge."""
    direct = preset.direct_judges.get(backend)
    if direct is None:
        raise DomainError(f"the {backend} judge has no default questions for preset {preset.key!r}")
    return list(direct.questions)


# ------------------------------------------------------------------------------ runs
def start_judge_run(
    *,
    config: JudgeConfig,
    user: AbstractBaseUser | None = None,
    item_ids: Sequence[int] | None = None,
    sample_size: int | None = None,
    seed: int | None = None,
    chunk_size: int | None = None,
    parent: JudgeRun | None = None,
    sample_id: int | None = None,
    stratum: Mapping[str, Any] | None = None,
) -> JudgeRun:
    """Run the judge over all items of the project, the given ones, or those of a design sample
    (``sample_id``, a ``Sample`` of the project) and / or a stratum (``{key: value}`` over item
    strata or meta keys, e.g. ``{"country": "China"}``); ``sample_size`` then draws a random
    sample of those. The run keeps its scope (``sample``, ``stratum`` and ``scope`` in words)."""
    project = config.project
    qs = Item.objects.filter(project=project)
    stratum = check_stratum(stratum)
    if item_ids is not None and (sample_id is not None or stratum):
        raise DomainError("give item ids, or a sample and / or a stratum, not both")
    scope: list[str] = []
    sample = None
    if sample_id is not None:
        if isinstance(sample_id, bool) or not isinstance(sample_id, int):
            raise DomainError("a sample is given by its id")
        sample = Sample.objects.filter(pk=sample_id, project=project).first()
        if sample is None:
            raise DomainError(f"this project has no sample {sample_id}")
        qs = qs.filter(pk__in=SampleItem.objects.filter(sample=sample).values("item_id"))
        scope.append(f"sample {sample.name!r}")
    if stratum:
        qs = items_in_stratum(qs, stratum)
        scope.append("stratum " + stratum_label(stratum))
    if item_ids is not None:
        wanted = {int(i) for i in item_ids}
        ids = list(qs.filter(pk__in=wanted).order_by("id").values_list("id", flat=True))
        if len(ids) != len(wanted):
            raise DomainError("some items are not in this project")
        if parent is not None:
            scope.append(
                f"failed or unjudged items of run {parent.id}" + (f" ({parent.scope})" if parent.scope else "")
            )
        else:
            scope.append(f"{len(ids)} chosen item(s)")
    else:
        ids = list(qs.order_by("id").values_list("id", flat=True))
        if not ids and scope:
            raise DomainError(f"no item of this project is in {' and '.join(scope)}")
    if sample_size is not None:
        if sample_size < 1:
            raise DomainError("a sample needs at least one item")
        if sample_size < len(ids):
            scope.append(f"random {sample_size} of {len(ids)}" + (f" (seed {seed})" if seed is not None else ""))
            ids = sorted(random.Random(seed).sample(ids, sample_size))
    if not ids:
        raise DomainError("there are no items to judge")
    chunk = int(chunk_size or config.params.get("chunk_size") or DEFAULT_CHUNK)
    if not 1 <= chunk <= MAX_CHUNK:
        raise DomainError(f"chunk size must be between 1 and {MAX_CHUNK}")
    with transaction.atomic():
        run = JudgeRun.objects.create(
            config=config,
            project=project,
            item_ids=ids,
            total=len(ids),
            chunk_size=chunk,
            queue=queue_for(config),
            parent=parent,
            created_by=user,
            sample=sample,
            stratum=stratum,
            scope=" · ".join(scope)[:500],
        )
        transaction.on_commit(lambda: enqueue_chunks(run=run, item_ids=ids))
    return run


# at most this many keys in a stratum, and this long a value (an item's strata columns are 100)
MAX_STRATUM_KEYS = 10
MAX_STRATUM_VALUE = 300
_STRATUM_KEY = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def check_stratum(stratum: Mapping[str, Any] | None) -> dict[str, str]:
    """A stratum as ``{key: value}`` (text values; ``meta.`` before a key is dropped; "" is the
    blank stratum, items without the key included), or a ``DomainError`` saying what is wrong."""
    if stratum is None:
        return {}
    if not isinstance(stratum, Mapping):
        raise DomainError('a stratum is {"key": "value", ...} over item strata or meta keys')
    if len(stratum) > MAX_STRATUM_KEYS:
        raise DomainError(f"a stratum has at most {MAX_STRATUM_KEYS} keys")
    out: dict[str, str] = {}
    for raw, value in stratum.items():
        key = str(raw).strip().removeprefix("meta.")
        if not _STRATUM_KEY.match(key):
            raise DomainError(f"invalid stratum key {str(raw)[:100]!r}: use letters, digits, - and _")
        if key in out:
            raise DomainError(f"stratum key {key!r} given twice")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise DomainError(f"the stratum value of {key!r} must be text")
        value = str(value).strip()
        if len(value) > MAX_STRATUM_VALUE or "\x00" in value:
            raise DomainError(f"the stratum value of {key!r} is not a stratum (over {MAX_STRATUM_VALUE} characters)")
        out[key] = value
    return out


def parse_stratum(text: str) -> dict[str, str]:
    """``"country=China, generator=sd"`` (the pages' form) as a checked stratum."""
    pairs: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise DomainError(
                f"a stratum is key=value pairs separated by commas, e.g. country=China; not {part.strip()!r}"
            )
        if key.strip() in pairs:
            raise DomainError(f"stratum key {key.strip()!r} given twice")
        pairs[key.strip()] = value.strip()
    return check_stratum(pairs)


def stratum_label(stratum: Mapping[str, str]) -> str:
    return ", ".join(f"{k} = {v or '(blank)'}" for k, v in stratum.items())


def items_in_stratum(qs: QuerySet[Item], stratum: Mapping[str, str]) -> QuerySet[Item]:
    """The items of ``qs`` in the stratum: the strata columns by name, other keys read from
    ``Item.meta`` as text (as the design samples read them, ``studies.sampling``)."""
    columns, annotations = metadata_columns(list(stratum))
    qs = qs.annotate(**annotations)
    for column, value in zip(columns, stratum.values(), strict=True):
        # a blank stratum holds the items with an empty value and those without the key
        qs = (
            qs.filter(Q(**{column: ""}) | Q(**{f"{column}__isnull": True}))
            if value == ""
            else qs.filter(**{column: value})
        )
    return qs


def enqueue_chunks(*, run: JudgeRun, item_ids: Sequence[int]) -> int:
    from .tasks import run_judge_chunk

    def fail(message: str) -> None:
        jobs.fail(run, message)

    n = 0
    for start in range(0, len(item_ids), run.chunk_size):
        chunk = list(item_ids[start : start + run.chunk_size])
        if not jobs.send_or_fail(lambda c=chunk: run_judge_chunk.apply_async(args=[run.id, c], queue=run.queue), fail):
            break
        n += 1
    return n


def cancel_judge_run(*, run: JudgeRun) -> JudgeRun:
    """Stop a queued or running run: chunks not started do nothing, a running chunk stops at its
    next batch. What was judged stays."""
    updated = jobs.cancel(run)
    run.refresh_from_db()
    if not updated:
        raise DomainError(f"the run is already {run.status}")
    return run


def rerun_failed_items(*, run: JudgeRun, user: AbstractBaseUser | None = None) -> JudgeRun:
    """A new run of the same judge over the items of this one that failed or never got a result
    (the run was cancelled, or failed because its worker stopped), in the run's order."""
    if run.is_pending:
        raise DomainError("wait for the run to finish (or cancel it) before re-running its failures")
    ok = set(run.results.filter(status=JudgeItemResult.Status.OK).values_list("item_id", flat=True))
    existing = set(Item.objects.filter(pk__in=run.item_ids).values_list("id", flat=True))  # none deleted since
    todo = [i for i in run.item_ids if i not in ok and i in existing]
    if not todo:
        raise DomainError("no item failed or was left unjudged in this run")
    return start_judge_run(config=run.config, user=user, item_ids=todo, chunk_size=run.chunk_size, parent=run)


def resume_judge_run(*, run: JudgeRun) -> int:
    """Enqueue again the items of an active run that have no result yet (e.g. after the broker
    lost messages). Safe to call any time: the writes are idempotent. Returns chunks enqueued."""
    if not run.is_pending:
        raise DomainError(f"the run is {run.status}; only queued or running runs resume")
    finished = set(run.results.values_list("item_id", flat=True))
    missing = [i for i in run.item_ids if i not in finished]
    return enqueue_chunks(run=run, item_ids=missing) if missing else 0


# ------------------------------------------------------------------------------ manage
PRICE_STEP = Decimal("0.000001")  # the prices' stored precision (JudgeConfig: 6 decimal places)
MAX_PRICE = Decimal("1000000")


def check_prices(prompt: Any, completion: Any) -> tuple[Decimal | None, Decimal | None]:
    """Prices per 1M prompt / completion tokens: both (numbers from 0 to under 1,000,000, at
    most 6 decimal places) or neither; a ``DomainError`` saying what is wrong otherwise."""
    if (prompt is None) != (completion is None):
        raise DomainError("give both prices per 1M tokens (prompt and completion), or neither")
    if prompt is None:
        return None, None
    out = []
    for label, value in (("prompt", prompt), ("completion", completion)):
        if isinstance(value, bool) or not isinstance(value, (Decimal, int, float, str)):
            raise DomainError(f"the {label} price per 1M tokens must be a number")
        try:
            d = Decimal(str(value).strip())
        except InvalidOperation:
            raise DomainError(f"the {label} price per 1M tokens must be a number") from None
        if not d.is_finite() or not Decimal(0) <= d < MAX_PRICE:
            raise DomainError(f"the {label} price per 1M tokens must be from 0 to under {MAX_PRICE:,}")
        if d != d.quantize(PRICE_STEP):
            raise DomainError(f"the {label} price per 1M tokens has at most 6 decimal places")
        out.append(d.quantize(PRICE_STEP))
    return out[0], out[1]


def set_judge_prices(*, config: JudgeConfig, prompt: Any, completion: Any) -> JudgeConfig:
    """Set (or clear, with both None) what the judge's model costs per 1M tokens; every run's
    estimated cost follows (it is computed when read)."""
    prompt, completion = check_prices(prompt, completion)
    JudgeConfig.objects.filter(pk=config.pk).update(price_prompt_per_1m=prompt, price_completion_per_1m=completion)
    config.price_prompt_per_1m, config.price_completion_per_1m = prompt, completion
    return config


def set_judge_hidden(*, config: JudgeConfig, hidden: bool) -> JudgeConfig:
    """Hide the judge (its rater leaves the agreement report, the validation tables, curation
    and exports; its runs leave the judges page) or show it again. Nothing is deleted."""
    if not isinstance(hidden, bool):
        raise DomainError("hidden is true or false")
    JudgeConfig.objects.filter(pk=config.pk).update(hidden=hidden)
    config.hidden = hidden
    return config


def delete_blockers(config: JudgeConfig) -> list[str]:
    """Why the judge cannot be deleted now (empty: it can): a run still queued or running (its
    workers would write to it), or an ensemble it is a member of (the ensemble's runs read it)."""
    reasons = []
    pending = list(
        config.runs.filter(status__in=[JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING])
        .order_by("id")
        .values_list("id", flat=True)
    )
    if pending:
        reasons.append(f"run {', '.join(map(str, pending))} is still queued or running: cancel it first")
    ensembles = list(config.ensembles.order_by("name").values_list("name", flat=True))
    if ensembles:
        reasons.append(f"it is a member of the ensemble {', '.join(ensembles)}: delete that first")
    return reasons


def delete_judge(*, config: JudgeConfig) -> dict[str, int]:
    """Delete the judge and everything it made, in one transaction: its runs with their outputs
    and results, its rater's annotations and assignments (the ratings every report and export
    reads), and the rater. Refused, with nothing deleted, for the reasons of
    :func:`delete_blockers`. Returns what was deleted (runs, outputs, annotations)."""
    with transaction.atomic():
        locked = JudgeConfig.objects.select_for_update().filter(pk=config.pk).first()
        if locked is None:
            raise DomainError("no such judge", code="not_found")
        reasons = delete_blockers(locked)
        if reasons:
            raise DomainError(f"judge {locked.name!r} cannot be deleted: " + "; ".join(reasons), code="conflict")
        rater_id = locked.rater_id
        outputs = JudgeOutput.objects.filter(run__config=locked)
        counts = {
            "runs": locked.runs.count(),
            "outputs": outputs.count(),
            "annotations": Annotation.objects.filter(rater_id=rater_id).count(),
        }
        # leaves first, so no cascade has to load rows into memory
        outputs.delete()
        JudgeItemResult.objects.filter(run__config=locked).delete()
        JudgeRun.objects.filter(config=locked).delete()
        locked.delete()  # the rater is PROTECTed while its judge exists
        Annotation.objects.filter(rater_id=rater_id).delete()
        Assignment.objects.filter(rater_id=rater_id).delete()
        Rater.objects.filter(pk=rater_id).delete()
    return counts


# ------------------------------------------------------------------------------ execution
def judge_items(items: Sequence[Item], image_fields: Sequence[str]) -> list[JudgeItem]:
    shas = {item.data.get(f) for item in items for f in image_fields if isinstance(item.data.get(f), str)}
    assets = {a.sha256: a for a in Asset.objects.filter(sha256__in=shas)}
    out = []
    for item in items:
        images = {}
        for f in image_fields:
            asset = assets.get(item.data.get(f))
            if asset is not None:
                images[f] = media_path(asset.relative_path())
        # the item's meta (plain values, e.g. a model's output for the refusal judge) can fill
        # prompt placeholders; the item's own fields and strata win over it
        context = {**(item.meta or {}), **item_render_context(item)}
        out.append(JudgeItem(item_id=item.id, context=context, images=images))
    return out


def _members(config: JudgeConfig) -> list[JudgeConfig]:
    if config.backend == JudgeConfig.Backend.ENSEMBLE:
        return list(config.members.select_related("project__rubric_version").order_by("id"))
    return [config]


def _state(run_id: int) -> str:
    return JudgeRun.objects.filter(pk=run_id).values_list("status", flat=True).first() or JudgeRun.Status.CANCELLED


def execute_judge_chunk(*, run_id: int, item_ids: Sequence[int], batch_size: int | None = None) -> JudgeRun:
    """Judge these items of the run: only the (item, pass, order) outputs that are missing, then
    finalise every item whose passes are all in. Stops early when the run is cancelled.

    A judge with ``both_orders`` asks every pass twice, the pair as stored and swapped
    (``judges/orders.py``), through the same backend call; the swapped answers are stored mapped
    back to the item's order. Only the original-order passes make the judge's rating."""
    run = JudgeRun.objects.select_related("config__project__rubric_version", "config__rater").get(pk=run_id)
    if run.status in JudgeRun.TERMINAL:
        return run
    now = timezone.now()
    # the first chunk to start claims the run (one attempt; the reaper counts the next ones)
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(
        status=JudgeRun.Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
        worker=jobs.worker_id(),
        attempts=F("attempts") + 1,
    )
    JudgeRun.objects.filter(pk=run.pk, started_at__isnull=True).update(started_at=now)
    # every chunk beats the run's lease while it works (several may, on several workers)
    with Heartbeat(JudgeRun, run.pk):
        return _execute_chunk(run, item_ids, batch_size)


def _execute_chunk(run: JudgeRun, item_ids: Sequence[int], batch_size: int | None) -> JudgeRun:
    config = run.config
    members = _members(config)
    per_member = config.passes
    total_passes = per_member * len(members)
    pair_order = run.project.preset.pair_order if config.both_orders else None
    kinds = (orders.ORIGINAL, orders.SWAPPED) if pair_order is not None else (orders.ORIGINAL,)
    try:
        specs = [spec_for(m) for m in members]
        backends = [backend_for(s) for s in specs]
    except BackendUnavailable as exc:
        jobs.fail(run, f"the judge cannot run: {exc}")
        return JudgeRun.objects.get(pk=run.pk)
    finished = set(run.results.filter(item_id__in=item_ids).values_list("item_id", flat=True))
    todo_ids = [i for i in item_ids if i not in finished]
    items_by_id = {it.id: it for it in Item.objects.filter(pk__in=todo_ids, project=run.project)}
    todo = [items_by_id[i] for i in todo_ids if i in items_by_id]
    step = batch_size or max(1, int(config.params.get("batch_size", run.chunk_size)))
    rubric_part = judged_rubric(run.project, config.questions) if config.questions else None
    for start in range(0, len(todo), step):
        if _state(run.pk) != JudgeRun.Status.RUNNING:
            break  # cancelled (or failed elsewhere): stop between batches
        batch = todo[start : start + step]
        have = set(JudgeOutput.objects.filter(run=run, item__in=batch).values_list("item_id", "pass_index", "order"))
        for m_index, (member, spec, backend) in enumerate(zip(members, specs, backends, strict=True)):
            offset = m_index * per_member
            member_rubric = judged_rubric(run.project, member.questions) if member.questions else None
            for kind in kinds:
                need_passes: dict[tuple[int, ...], list[Item]] = {}
                for it in batch:
                    missing = tuple(p for p in range(per_member) if (it.id, offset + p, kind) not in have)
                    if missing:
                        need_passes.setdefault(missing, []).append(it)
                for passes, its in need_passes.items():
                    asked = judge_items(its, spec.image_fields())
                    if kind == orders.SWAPPED:
                        asked = [orders.swapped_item(j, pair_order) for j in asked]
                    try:
                        verdicts = backend.judge(asked, list(passes))
                    except BackendUnavailable as exc:
                        jobs.fail(run, f"the judge cannot run: {exc}")
                        return JudgeRun.objects.get(pk=run.pk)
                    if kind == orders.SWAPPED:
                        verdicts = [replace(v, answers=orders.map_back(v.answers, pair_order)) for v in verdicts]
                    _store_outputs(
                        run, member if len(members) > 1 else None, offset, verdicts, member_rubric, items_by_id, kind
                    )
        for it in batch:
            _finalise_item(run, it, rubric_part, total_passes, len(kinds))
    return maybe_finish(run=run)


def _store_outputs(
    run: JudgeRun,
    member: JudgeConfig | None,
    offset: int,
    verdicts: Sequence[Verdict],
    rubric: Rubric | None,
    items_by_id: dict[int, Item],
    order: str = orders.ORIGINAL,
) -> None:
    """Rubric answers validated by the rubric (``rubric`` None: a label judge answers none),
    the classifier labels kept beside them under ``prompts.LABELS_KEY``."""
    rows = []
    for v in verdicts:
        parsed, error = v.answers, v.error
        if parsed is not None and not error and rubric is not None:
            try:
                parsed = rubric.validate(parsed, item=item_render_context(items_by_id[v.item_id]))
            except AnswerError as exc:
                parsed, error = v.answers, f"invalid answer: {exc}"
        if parsed is not None and v.labels:
            parsed = {**parsed, prompts.LABELS_KEY: v.labels}
        if parsed is not None and not error and v.exact:  # unrounded scores: the statistics read them
            parsed = {**parsed, EXACT_KEY: v.exact}
        if parsed is not None and not error and v.metrics:
            parsed = {**parsed, SCORES_KEY: v.metrics}
        rows.append(
            JudgeOutput(
                run=run,
                item_id=v.item_id,
                pass_index=offset + v.pass_index,
                order=order,
                member=member,
                raw_output=v.raw or "",
                parsed=parsed,
                error=error[:5000],
                latency_ms=v.latency_ms,
                prompt_tokens=v.usage.prompt_tokens if v.usage is not None else None,
                completion_tokens=v.usage.completion_tokens if v.usage is not None else None,
            )
        )
    # (run, item, pass, order) is unique: a redelivered chunk's duplicates are dropped here
    JudgeOutput.objects.bulk_create(rows, ignore_conflicts=True)


def _finalise_item(run: JudgeRun, item: Item, rubric: Rubric | None, total_passes: int, n_orders: int = 1) -> None:
    """The item's result once every (pass, order) output is in: its rating combines the
    original-order passes; a swapped output's error is kept with that output (the bias checks
    count the item as missing its second order), it does not fail the item."""
    every = list(JudgeOutput.objects.filter(run=run, item=item).order_by("pass_index"))
    if len(every) < total_passes * n_orders:
        return
    outputs = [o for o in every if o.order == JudgeOutput.Order.ORIGINAL]
    errors = [f"pass {o.pass_index + 1}: {o.error}" for o in outputs if o.error]
    ctx = item_render_context(item)
    answers = stored = None
    exact: dict[str, Any] = {}
    metrics: dict[str, float] = {}
    if not errors:
        answers = {}
        if rubric is not None:
            combined, exact = combine(
                rubric,
                run.config.questions,
                [o.parsed or {} for o in outputs],
                run.config.combine,
                unrounded=[(o.parsed or {}).get(EXACT_KEY) for o in outputs],
            )
            metrics = combine_metrics([(o.parsed or {}).get(SCORES_KEY) for o in outputs])
            try:
                answers = rubric.validate(combined, item=ctx)
            except AnswerError as exc:
                errors.append(f"combined answer invalid: {exc}")
        labels = combine_labels([(o.parsed or {}).get(prompts.LABELS_KEY) for o in outputs])
        stored = {**answers, prompts.LABELS_KEY: labels} if labels else answers
    with transaction.atomic():
        try:
            with transaction.atomic():
                JudgeItemResult.objects.create(
                    run=run,
                    item=item,
                    status=JudgeItemResult.Status.FAILED if errors else JudgeItemResult.Status.OK,
                    answers=None if errors else stored,
                    error="\n".join(errors)[:5000],
                )
        except IntegrityError:
            return  # finalised already (redelivered chunk)
        if not errors and rubric is not None:  # a label judge's output is no rubric annotation
            write_judge_annotation(
                rater=run.config.rater,
                project=run.project,
                item=item,
                answers=answers,
                derived=judge_derived(rubric, answers, exact, metrics),
            )


def combine_labels(per_pass: Sequence[dict[str, str] | None]) -> dict[str, str] | None:
    """Classifier labels over passes: the majority per classifier (ties: the earliest pass)."""
    present = [p for p in per_pass if p]
    if not present:
        return None
    out = {}
    for key in dict.fromkeys(k for p in present for k in p):
        values = [p[key] for p in present if key in p]
        out[key] = max(values, key=lambda v: (values.count(v), -values.index(v)))
    return out


def judge_derived(
    rubric: Rubric, answers: dict[str, Any], exact: dict[str, Any] | None, metrics: dict[str, float] | None = None
) -> dict[str, Any]:
    """Derived fields of a judge's answer. A combined judge (mean of passes or of an ensemble)
    answers with the options nearest its means and keeps the exact means, with the derived
    fields computed from them (e.g. ValueGround Total of the averaged scores), under
    ``judge_exact`` for the statistics; ``accepted`` stays that of the stored answer. A judge's
    numbers outside the rubric (``metrics``, e.g. AHEaD's ALIGN) go to ``judge_metrics``, where
    the statistics and exports read imported metrics too."""
    derived = rubric.derive(answers)
    if exact:
        exact_derived = rubric.derive({**answers, **exact})
        exact_derived.pop("accepted", None)
        derived["judge_exact"] = {"answers": exact, "derived": exact_derived}
    if metrics:
        derived[METRICS_KEY] = dict(metrics)
    return derived


def write_judge_annotation(
    *, rater: Rater, project: Project, item: Item, answers: dict[str, Any], derived: dict[str, Any]
) -> Annotation:
    """A model rater's annotation of the item on a submitted regular assignment (one per item and
    rater; a later run updates it). ``answers`` are validated by the rubric part the judge
    answers, ``derived`` computed by :func:`judge_derived`. Used by judge runs and by imported
    judge outputs (``judges/imported.py``)."""
    now = timezone.now()
    assignment, _ = Assignment.objects.get_or_create(
        item=item,
        rater=rater,
        purpose=Assignment.Purpose.REGULAR,
        defaults={"project": project, "status": Assignment.Status.SUBMITTED, "submitted_at": now, "opened_at": now},
    )
    if assignment.status != Assignment.Status.SUBMITTED:
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SUBMITTED, submitted_at=now)
    annotation = Annotation.objects.filter(assignment=assignment).first()
    if annotation is None:
        return Annotation.objects.create(
            assignment=assignment,
            item=item,
            rater=rater,
            rubric_version=project.rubric_version,
            answers=answers,
            derived=derived,
        )
    annotation.answers, annotation.derived = answers, derived
    annotation.rubric_version = project.rubric_version
    annotation.revision += 1
    annotation.save(update_fields=["answers", "derived", "rubric_version", "revision", "updated_at"])
    return annotation


def maybe_finish(*, run: JudgeRun) -> JudgeRun:
    """running -> done when every item has a result (failed when none succeeded)."""
    counts = dict(run.results.values_list("status").annotate(n=Count("id")))
    finished = sum(counts.values())
    if finished >= run.total:
        ok = counts.get(JudgeItemResult.Status.OK, 0)
        # only a running run ends here: a cancelled one keeps its outcome
        if ok:
            JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).update(
                status=JudgeRun.Status.DONE, finished_at=timezone.now(), message=""
            )
        else:
            jobs.fail(run, "no item could be judged: see the failures")
    return JudgeRun.objects.get(pk=run.pk)


__all__ = [
    "cancel_judge_run",
    "check_prices",
    "check_stratum",
    "create_judge_config",
    "delete_blockers",
    "delete_judge",
    "execute_judge_chunk",
    "judge_derived",
    "judged_rubric",
    "parse_stratum",
    "rerun_failed_items",
    "resume_judge_run",
    "set_judge_hidden",
    "set_judge_prices",
    "spec_for",
    "start_judge_run",
    "write_judge_annotation",
]
