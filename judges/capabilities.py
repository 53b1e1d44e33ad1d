"""What each judge backend can answer in a project: the rubric questions, and of a checklist the
flags, that it decides, and what it does not. The judge form shows it per backend (and mode, or
prompt template), the judge page for the judge as made.

Read from the same places that decide it when a judge is created (``configuration.create_judge_config``):
the prompt-less backends' modes and the flags their thresholds decide (their registry entries'
``modes`` and ``decides``, ``judges/registry.py``), the parsers' question types (``configuration.PARSER_TYPES``),
the preset's paper prompt and named templates (classifier flags, output formats), and for a
judge the ``decides`` its rater records (``judges.decides``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _

from annotation.models import Project
from annotation.rubric import Rubric
from benchmarks.base import Preset

from . import formats, prompts
from . import params as judge_params
from .backends.ahead import BACKEND as AHEAD
from .backends.ahead import extractor_of
from .backends.base import DIRECT, ENSEMBLE, BackendEntry
from .configuration import PARSER_TYPES, direct_mode
from .decides import Decides, rater_decides
from .models import JudgeConfig
from .registry import BACKENDS


@dataclass(frozen=True)
class Named:
    """A question or flag: its id and its label in the rubric."""

    id: str
    label: str


@dataclass(frozen=True)
class Flags:
    """Of checklist ``question``: the flags decided and those that are not (missing for the
    judge in every analysis, never a "no")."""

    question: str
    decided: tuple[Named, ...]
    undecided: tuple[Named, ...]


@dataclass(frozen=True)
class Way:
    """One way a backend answers (a mode, a prompt template, a parser): what it answers and
    decides, and the rubric questions it does not answer. ``default``: what a new judge of this
    backend gets when nothing is chosen."""

    how: str
    answers: tuple[Named, ...]
    flags: tuple[Flags, ...] = ()
    missing: tuple[Named, ...] = ()
    default: bool = False
    note: str = ""


@dataclass(frozen=True)
class Capability:
    backend: str
    label: str
    ways: tuple[Way, ...] = ()
    note: str = ""  # when no way is listed: why
    answerable: tuple[str, ...] = field(default=())  # every question some way answers


def shown_rubric(rubric: Rubric, language: str | None = None) -> Rubric:
    """The rubric as the page names its questions and flags: in the UI's language where the
    rubric has that translation (``Rubric.localized``, as the annotate page shows it), else in
    its canonical wording. Only labels are read from it: what a judge answers is decided on the
    canonical rubric, and a judge is asked in the canonical wording."""
    return rubric.localized(rubric.pick_locale(language or translation.get_language()))


def _named_questions(rubric: Rubric, ids: Sequence[str]) -> tuple[Named, ...]:
    wanted = set(ids)
    return tuple(Named(q.id, q.label) for q in rubric.questions if q.id in wanted)


def way(
    rubric: Rubric,
    how: str,
    questions: Sequence[str],
    decides: Mapping[str, Sequence[Any]] | Decides | None,
    *,
    default: bool = False,
    note: str = "",
    shown: Rubric | None = None,
) -> Way:
    """What answering ``questions`` with ``decides`` (flags per checklist, or a rater's
    :class:`Decides`; None: every option) means on this rubric; questions and flags are named
    as ``shown`` (the rubric in the UI's language, :func:`shown_rubric`) names them."""
    shown = shown or rubric
    label = {q.id: q.label for q in shown.questions}
    option_label = {(q.id, str(o.value)): o.label for q in shown.questions for o in q.options}
    flags = []
    for q in rubric.questions:
        if q.id not in questions or q.type != "checklist":
            continue
        if isinstance(decides, Decides):
            decided = set(decides.options(q))
        elif decides is not None and q.id in decides:
            decided = set(decides[q.id])
        else:
            continue
        if len(decided) < len(q.options):
            flags.append(
                Flags(
                    question=q.id,
                    decided=tuple(
                        Named(str(o.value), option_label.get((q.id, str(o.value)), o.label))
                        for o in q.options
                        if o.value in decided
                    ),
                    undecided=tuple(
                        Named(str(o.value), option_label.get((q.id, str(o.value)), o.label))
                        for o in q.options
                        if o.value not in decided
                    ),
                )
            )
    return Way(
        how=how,
        answers=_named_questions(shown, questions),
        flags=tuple(flags),
        missing=tuple(Named(q.id, label.get(q.id, q.label)) for q in rubric.questions if q.id not in questions),
        default=default,
        note=note,
    )


def _direct(entry: BackendEntry, rubric: Rubric, preset: Preset, shown: Rubric) -> list[Way]:
    """One way per mode that answers questions of this rubric, with the flags its default
    thresholds decide."""
    declared = preset.direct_judges.get(entry.key)
    out = []
    ids = {q.id for q in rubric.questions}
    for mode, questions in entry.modes.items():
        if not set(questions) <= ids:
            continue  # a mode for another protocol's rubric
        try:
            decides = entry.decides(mode, {}) if entry.decides is not None else None
        except ValueError:  # pragma: no cover - the declared defaults always decide a flag
            decides = None
        is_default = declared is not None and declared.mode == mode
        out.append(
            way(
                rubric,
                _("mode %(mode)s") % {"mode": mode},
                list(questions),
                decides,
                default=is_default,
                shown=shown,
                note=_("with the default thresholds; a threshold set to null leaves its flag undecided")
                if decides
                else "",
            )
        )
    return out


def _template_way(rubric: Rubric, preset: Preset, how: str, template: Mapping[str, Any], **kw: Any) -> Way | None:
    """What an LLM / VLM judge with this named or paper template answers (None: it does not
    fit this rubric)."""
    kind = prompts.template_kind(template)
    try:
        if kind == "classifiers":
            judged, flags = prompts.check_classifier_template(template, rubric, prompts.classifier_bank(preset.key))
            decides = {
                q: [f for r, f in zip(template["flags"], flags, strict=True) if r["question"] == q] for q in judged
            }
            return way(rubric, how, judged, decides, **kw)
        if kind == "format":
            return way(rubric, how, formats.check_format_template(template, rubric), None, **kw)
    except ValueError:
        return None
    if kind == "label":
        labels = ", ".join(str(x) for x in template.get("labels") or [])
        return way(
            rubric,
            how,
            [],
            None,
            note=_("a label outside the rubric (%(labels)s), kept with each output") % {"labels": labels},
            **kw,
        )
    return None


def _generative(rubric: Rubric, preset: Preset, shown: Rubric) -> list[Way]:
    """The preset's default prompt, its named templates, and the rubric prompt per parser."""
    out = []
    defaults = prompts.preset_defaults(preset, rubric)
    template = defaults["prompt_template"]
    paper = preset.judge_prompt is not None
    how = (
        _("the preset's paper prompt (parser %(parser)s)") if paper else _("the rubric prompt (parser %(parser)s)")
    ) % {"parser": defaults["parser"]}
    if prompts.template_kind(template) == "rubric":
        out.append(way(rubric, how, defaults["questions"], None, default=True, shown=shown))
    else:
        found = _template_way(rubric, preset, how, template, default=True, shown=shown)
        if found is not None:
            out.append(found)
    for name, named in preset.named_templates.items():
        found = _template_way(rubric, preset, _("template %(name)s") % {"name": name}, named.template, shown=shown)
        if found is not None:
            out.append(found)
    for parser, types in PARSER_TYPES.items():
        questions = [q.id for q in rubric.questions if q.type in types]
        if questions:
            how = _("any rubric prompt, parser %(parser)s") % {"parser": parser}
            out.append(way(rubric, how, questions, None, shown=shown))
    return out


def backend_capabilities(project: Project, language: str | None = None) -> dict[str, Capability]:
    """What every backend can answer in this project, keyed by backend; questions and flags
    named in ``language`` (default: the UI's) where the rubric has that translation."""
    rubric = project.rubric_version.parsed()
    shown = shown_rubric(rubric, language)
    preset = project.preset
    out = {}
    for backend, entry in BACKENDS.items():
        label = entry.label
        if entry.family == ENSEMBLE:
            out[backend] = Capability(backend, str(label), note=_("What its member judges answer."))
            continue
        ways = _direct(entry, rubric, preset, shown) if entry.family == DIRECT else _generative(rubric, preset, shown)
        note = "" if ways else _("It answers no question of this project's rubric: its modes are for other protocols.")
        answerable = tuple(q.id for q in rubric.questions if any(q.id in {a.id for a in w.answers} for w in ways))
        out[backend] = Capability(backend, str(label), tuple(ways), note, answerable)
    return out


def judge_decides(config: JudgeConfig, language: str | None = None) -> Way:
    """What this judge decides, as its rater records it (``judges.decides``); questions and
    flags named in ``language`` (default: the UI's) where the rubric has that translation."""
    project = config.project
    rubric = project.rubric_version.parsed()
    decides = rater_decides(
        kind="model", backend=config.backend, parameters=config.rater.parameters, preset=project.preset
    )
    return way(rubric, config.name, list(config.questions), decides, shown=shown_rubric(rubric, language))


def parameter_rows(config: JudgeConfig) -> list[judge_params.Row]:
    """The judge's parameters as its page shows them: those its backend reads in its mode (or
    with its extractor), set or default, then any set that it does not read; secrets hidden."""
    params = config.params or {}
    entry = BACKENDS.get(config.backend)
    if entry is None:  # its backend left the registry: every parameter is shown as not read
        return judge_params.describe((), params)
    mode = extractor = ""
    if entry.family == DIRECT:
        mode = direct_mode(config.backend, config.project.preset, params)
    if entry.key == AHEAD.key:
        extractor = extractor_of(params)
    return entry.describe(params, mode=mode, extractor=extractor)


__all__ = [
    "Capability",
    "Flags",
    "Named",
    "Way",
    "backend_capabilities",
    "judge_decides",
    "parameter_rows",
    "shown_rubric",
    "way",
]
