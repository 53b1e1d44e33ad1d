"""Making a judge: ``create_judge_config`` checks what a researcher asked for (the judges page's
form and the API alike) and stores the judge configuration with its ``Rater(kind=model)``.

Each family of backends has its builder, found through ``BUILDERS`` by the backend's registry
entry (``judges/registry.py``, ``BackendEntry.family``): it fills in what its judges take from
the preset when not given (prompt, parser, questions) and checks what only its judges have: an
LLM / VLM judge's prompt template (``PromptJudge``; a classifier, label or output-format template
has its own check in ``TEMPLATE_CHECKS``), a prompt-less judge's mode and flags (``DirectJudge``,
reading its entry's ``modes`` and ``decides``), an ensemble's members (``EnsembleJudge``). What
is the backend's own comes from its entry too: the model id a judge records by default or must
be given (``default_model``, ``model_required``), its declared parameters and its own checks of
them (``check_params``). What every judge shares is checked by ``create_judge_config`` around the
builder, always in the same order: name, backend, passes, prices and params first; then the
questions it answers, its declared parameters and its own checks, the flags it decides and both
orders; then the rows are written. Judges imported from outside (``judges/imported.py``) are not made here.

Also here: what a judge of a configuration can read and run in (``PARSER_TYPES``,
``direct_mode``), which the judges page's capabilities show (``judges/capabilities.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.models import Project, Rater
from annotation.rubric import Rubric, RubricError
from benchmarks.base import Preset
from core.errors import DomainError
from core.values import value_problem

from . import endpoints, formats, labels, orders, prompts
from . import params as judge_params
from .administration import check_prices
from .backends.base import DIRECT, ENSEMBLE, PROMPTED
from .decides import ensemble_decides, rater_decides
from .models import JudgeConfig
from .ratings import judged_rubric
from .registry import BACKENDS, get_backend, is_ensemble

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


def in_rubric_order(rubric: Rubric, questions: Iterable[str]) -> list[str]:
    """The given question ids in the order the rubric asks them (ids it lacks are dropped)."""
    wanted = set(questions)
    return [q.id for q in rubric.questions if q.id in wanted]


@dataclass
class Draft:
    """A judge configuration while it is checked: what was asked for, completed by its builder."""

    project: Project
    backend: str
    model_id: str
    prompt_template: Any  # as given (anything, from the API) until a prompt judge's builder checks it
    parser: str | None
    questions: Sequence[str] | None
    params: dict[str, Any]
    members: list[JudgeConfig]
    rubric: Rubric
    preset: Preset
    kind: str = "rubric"  # a prompt judge's template kind (``prompts.template_kind``)
    decides: dict[str, list[str]] | None = None  # the checklist flags its template decides
    judged_by_template: list[str] = field(default_factory=list)  # the questions its template fixes


# ------------------------------------------------------------------------------ builders
class JudgeBuilder:
    """How one family of backends completes a draft (``shape``), which questions its judges can
    answer (``answerable``, checked when the judge is created rather than when it runs) and
    which checklist flags they decide (``decides``, after the parameters are checked)."""

    def shape(self, draft: Draft) -> None:
        raise NotImplementedError

    def answerable(self, draft: Draft) -> list[str]:
        raise NotImplementedError

    def decides(self, draft: Draft) -> dict[str, list[str]] | None:
        return draft.decides


class PromptJudge(JudgeBuilder):
    """An LLM / VLM judge asked through a prompt template (OpenAI-compatible or transformers):
    the preset's paper prompt (``Preset.judge_prompt``) or the prompt built from the rubric by
    default, a named template (``{"use": name}``) or the researcher's own."""

    def shape(self, draft: Draft) -> None:
        defaults = prompts.preset_defaults(draft.preset, draft.rubric)
        template, parser = draft.prompt_template, draft.parser
        if isinstance(template, dict) and "use" in template:  # a named template
            named = prompts.named_template(str(template["use"]))
            if named is None:
                raise DomainError(
                    f"no prompt template named {template['use']!r}; choose one of "
                    f"{', '.join(prompts.named_templates())}"
                )
            template = json.loads(json.dumps(named))
        if template is None:
            parser = parser or defaults["parser"]
            template = defaults["prompt_template"] if parser == defaults["parser"] else dict(prompts.GENERIC_TEMPLATE)
        if not isinstance(template, dict) or not (
            "per_question" in template or "user" in template or "classifiers" in template
        ):
            raise DomainError(
                'a prompt template is {"system": ..., "user": ...}, {"per_question": {...}}, '
                '{"classifiers": [...], "flags": [...]}, {"label", "labels", "system", "user"} or '
                '{"output_format", "question", "system", "user"}'
            )
        kind = prompts.template_kind(template)
        if kind == "rubric":
            parser = parser or defaults["parser"]
            if draft.questions is None:
                draft.questions = defaults["questions"]
        else:
            parser = parser or JudgeConfig.Parser.CHOICE
            if parser != JudgeConfig.Parser.CHOICE:
                # a format template is read by its paper's format; it is stored as the choice parser
                # (one closed verdict per element), so the parser choices need no new value
                reader = "its output format" if kind == "format" else "the choice parser"
                raise DomainError(f"a {kind} template is read by {reader}, not {parser!r}")
        if parser not in ("json", "score_is", "choice"):
            raise DomainError(f"unknown parser {parser!r}")
        draft.prompt_template, draft.parser, draft.kind = template, parser, kind
        check = TEMPLATE_CHECKS.get(kind)
        if check is not None:
            check(draft)

    def answerable(self, draft: Draft) -> list[str]:
        """A classifier or output-format template answers the questions it fixes; any other
        template every question its parser can read (``PARSER_TYPES``)."""
        if draft.kind in ("classifiers", "format"):
            return draft.judged_by_template
        types = PARSER_TYPES.get(draft.parser or "json", PARSER_TYPES["json"])
        return in_rubric_order(draft.rubric, (q.id for q in draft.rubric.questions if q.type in types))


def check_classifier_template(draft: Draft) -> None:
    """A classifier template answers the questions of its flag rules and decides those flags."""
    template = draft.prompt_template
    try:
        judged, flags = prompts.check_classifier_template(
            template, draft.rubric, prompts.classifier_bank(draft.preset.key)
        )
    except ValueError as exc:
        raise DomainError(f"classifier template: {exc}") from None
    if draft.questions is not None and list(draft.questions) != judged:
        raise DomainError(
            f"this classifier template can answer only {', '.join(judged)} (its flags), "
            f"not {', '.join(draft.questions) or '(none)'}"
        )
    draft.questions = draft.judged_by_template = judged
    draft.decides = {
        q: [f for r, f in zip(template["flags"], flags, strict=True) if r["question"] == q] for q in judged
    }


def check_label_template(draft: Draft) -> None:
    """A label template names one label and its values; it answers no rubric question."""
    template = draft.prompt_template
    labels = template.get("labels")
    if (
        not isinstance(template.get("label"), str)
        or not template["label"]
        or not (isinstance(labels, list) and len(labels) >= 2 and all(isinstance(x, str) and x for x in labels))
    ):
        raise DomainError('a label template needs "label" (a name) and "labels" (at least two)')
    if draft.questions:
        raise DomainError("a label judge answers no rubric question: its label is stored as its output")
    draft.questions = []


def check_format_template(draft: Draft) -> None:
    """A paper's output-format template (``judges/formats.py``) answers the questions it fixes."""
    template = draft.prompt_template
    try:
        judged = formats.check_format_template(template, draft.rubric)
    except ValueError as exc:
        raise DomainError(f"output-format template: {exc}") from None
    if draft.questions is not None and list(draft.questions) != judged:
        raise DomainError(
            f"this {template['output_format']} template answers only {', '.join(judged)}, "
            f"not {', '.join(draft.questions) or '(none)'}"
        )
    draft.questions = draft.judged_by_template = judged


#: a prompt template's kind (``prompts.template_kind``) -> its own check; a rubric template has none
TEMPLATE_CHECKS: dict[str, Callable[[Draft], None]] = {
    "classifiers": check_classifier_template,
    "label": check_label_template,
    "format": check_format_template,
}


class DirectJudge(JudgeBuilder):
    """A prompt-less judge that answers its mode's questions directly (its entry's ``modes``):
    the embedding, SSIM image-similarity, CLIP and AHEaD judges."""

    def shape(self, draft: Draft) -> None:
        draft.parser = JudgeConfig.Parser.NONE
        draft.prompt_template = {}
        if draft.questions is None:
            draft.questions = self.default_questions(draft)

    @staticmethod
    def default_questions(draft: Draft) -> list[str]:
        """The questions the preset declares for this backend (``Preset.direct_judges``)."""
        direct = draft.preset.direct_judges.get(draft.backend)
        if direct is None:
            raise DomainError(f"the {draft.backend} judge has no default questions for preset {draft.preset.key!r}")
        return list(direct.questions)

    def answerable(self, draft: Draft) -> list[str]:
        backend, preset = draft.backend, draft.preset
        mode = direct_mode(backend, preset, draft.params)
        modes = get_backend(backend).modes
        if mode not in modes:
            raise DomainError(
                f"the {backend} judge has no mode {mode!r} for preset {preset.key!r}; "
                f"params.mode is one of {', '.join(modes)}"
                if mode
                else f"the {backend} judge has no mode for preset {preset.key!r}; set params.mode ({', '.join(modes)})"
            )
        return in_rubric_order(draft.rubric, modes[mode])

    def decides(self, draft: Draft) -> dict[str, list[str]] | None:
        """The flags its mode and thresholds decide (``judges/decides.py``)."""
        entry = get_backend(draft.backend)
        if entry.decides is None:
            return None
        try:
            return entry.decides(direct_mode(draft.backend, draft.preset, draft.params), draft.params)
        except ValueError as exc:
            raise DomainError(f"the {draft.backend} judge cannot use these params: {exc}") from None


class EnsembleJudge(JudgeBuilder):
    """An ensemble of two or more judges of the project, combined per item; by default it
    answers every question a member answers."""

    def shape(self, draft: Draft) -> None:
        members = draft.members
        if len(members) < 2:
            raise DomainError("an ensemble needs at least two member judges")
        if any(m.project_id != draft.project.id or is_ensemble(m.backend) for m in members):
            raise DomainError("ensemble members must be (non-ensemble) judges of the same project")
        draft.parser = JudgeConfig.Parser.NONE
        draft.questions = draft.questions or sorted(
            {q for m in members for q in m.questions}, key=[q.id for q in draft.rubric.questions].index
        )
        draft.prompt_template = {}

    def answerable(self, draft: Draft) -> list[str]:
        return in_rubric_order(draft.rubric, (q for m in draft.members for q in m.questions))

    def decides(self, draft: Draft) -> dict[str, list[str]] | None:
        """The flags its members decide, as their raters record them (``judges/decides.py``)."""
        return ensemble_decides(
            draft.rubric,
            draft.questions,
            [
                (
                    m.questions,
                    rater_decides(kind="model", backend=m.backend, parameters=m.rater.parameters, preset=draft.preset),
                )
                for m in draft.members
            ],
        )


#: a backend's family (``BackendEntry.family``) -> the builder of its judges (every family; a
#: test keeps it whole), so a backend of an existing family needs no builder of its own
BUILDERS: dict[str, JudgeBuilder] = {
    PROMPTED: PromptJudge(),
    DIRECT: DirectJudge(),
    ENSEMBLE: EnsembleJudge(),
}


# ------------------------------------------------------------------------------ create
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
    short_label: str | None = None,
) -> JudgeConfig:
    """A judge for a project; defaults (prompt, parser, questions) come from the preset: its paper
    prompt (``Preset.judge_prompt``) or the prompt built from the rubric, and for the embedding and
    image-similarity judges the questions it declares for them (``Preset.direct_judges``).

    ``both_orders``: every pass also judges the pair swapped (presets that declare a
    ``pair_order`` only; the judge must answer the questions the swap and the verdict touch).
    ``short_label``: what tables call it (:mod:`.labels`); none or blank: derived from the name."""
    name = (name or "").strip()
    if not name:
        raise DomainError("a judge needs a name")
    taken = set(JudgeConfig.objects.filter(project=project).values_list("short_label", flat=True))
    if short_label is not None and short_label.strip():
        short_label = labels.check_short_label(short_label, taken)
    else:
        short_label = labels.default_short_label(name, taken)
    if backend not in BACKENDS:
        raise DomainError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
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
    entry = get_backend(backend)
    builder = BUILDERS[entry.family]
    draft = Draft(
        project=project,
        backend=backend,
        model_id=model_id,
        prompt_template=prompt_template,
        parser=parser,
        questions=questions,
        params=params,
        members=members,
        rubric=rubric,
        preset=preset,
    )
    builder.shape(draft)
    if not draft.model_id and entry.default_model:
        draft.model_id = entry.default_model  # recorded on the rater, so reports name the model
    if entry.model_required and not draft.model_id.strip():
        raise DomainError(entry.model_required)
    questions = draft.questions = list(draft.questions or [])
    model_id, prompt_template, parser, kind = draft.model_id, draft.prompt_template, draft.parser, draft.kind
    if (
        kind == "rubric"
        and parser in ("score_is", "choice")
        and len(questions) > 1
        and "per_question" not in prompt_template
    ):
        raise DomainError(
            f"the {parser} parser reads one answer per reply: give a per_question template or judge one question"
        )
    if kind != "label":  # a label judge answers no rubric question: its label is its output
        known = {q.id: q for q in rubric.questions}
        unknown = [q for q in questions if q not in known]
        if unknown or not questions:
            raise DomainError(
                f"the judge must answer rubric questions; unknown: {', '.join(unknown) or '(none given)'}"
            )
        can = builder.answerable(draft)
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
    try:  # the declared parameters (its entry's, none for an ensemble), as the judge form checks them
        entry.check_declared(params, image_fields=preset.image_fields())
    except judge_params.ParamError as exc:
        raise DomainError(f"the {backend} judge cannot use these params: {exc}", errors=exc.errors) from None
    if entry.check_params is not None:
        try:  # what only this backend rules (a filter deciding no flag, EXAG without its model)
            entry.check_params(params, questions)
        except ValueError as exc:
            raise DomainError(f"the {backend} judge cannot use these params: {exc}") from None
    decides = builder.decides(draft)
    if both_orders:
        check_both_orders(preset, backend, questions)
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
            short_label=short_label,
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


def check_both_orders(preset: Preset, backend: str, questions: Sequence[str]) -> None:
    """Both orders are for a preset with a pair order, and a judge that answers the questions
    its swapped answers map back through (``judges/orders.py``)."""
    order = preset.pair_order
    if order is None:
        raise DomainError(f"both orders are offered for pairwise protocols only; {preset.name} declares no pair order")
    if is_ensemble(backend):
        raise DomainError("an ensemble is not asked in both orders: ask its member judges in both orders")
    needed = orders.order_questions(order)
    missing = sorted(needed - set(questions))
    if missing:
        raise DomainError(
            f"to judge both orders the judge must answer {', '.join(sorted(needed))} "
            f"(the swapped pair's answers map back through them); missing: {', '.join(missing)}"
        )
