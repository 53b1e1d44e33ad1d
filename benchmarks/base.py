"""What a protocol preset is: everything one paper's validation protocol brings, in one
subpackage of this package. Adding a protocol = adding one package here and one line in
``benchmarks/registry.py``; the apps (annotation, judges, curation, the demo command) read it
all from the :class:`Preset`, so no view, service or command changes.

A preset holds:

- the **item schema** (``item_fields``, below) and the **rubric** (see annotation/rubric.py),
  with the paper's instructions and anchors verbatim;
- **project defaults** (``defaults``: ``k``, ``show_model_hints``, ``randomise_pair_order``)
  and the paper's **study design** (:class:`StudyDesign`: k, sample, eligibility, balance,
  quality control), offered as suggestions on the study-design pages;
- for a pairwise protocol, how a judge is shown the pair in the other order (:class:`PairOrder`,
  the judges' position-bias check);
- the paper's **judge prompt** (:class:`JudgePrompt`: the prompt text lives in the module;
  the generic machinery that fills it, ``render()``, the generic rubric prompt and the
  parsers, stays in ``judges/``), the **direct judges** (:class:`DirectJudge`: which questions
  the embedding and image-similarity judges answer, in which mode), **named templates**
  (:class:`NamedTemplate`, e.g. closed-choice classifiers) and the **classifier bank** their
  ``ask`` names refer to (:class:`ClassifierBank`);
- the **suggested acceptance policy** (a ``curation.policy.PolicySpec`` object, element filter
  included);
- the **demo**: items (``demo_items``), ready-to-run judges (:class:`DemoJudge`) and seeded
  human answers (``demo_answers``), the items and answers read from the package's data files
  (``benchmarks/<paper>/demo/``, see ``benchmarks/demo_data.py``) when the demo is seeded;
- the protocol's **validation report** (``validation_report``): a :class:`LazyReport` naming
  the function in ``benchmarks/<paper>/tables.py``, imported only when a report is asked for,
  so loading the presets (every app does) never loads numpy or pandas.

A protocol is a package ``benchmarks/<paper>/``: ``__init__.py`` the declaration,
``prompts.py`` the paper's wording (instructions, translations, judge prompts), ``tables.py``
its validation tables, ``demo/`` its demo data.

``tests/benchmarks/test_preset_completeness.py`` checks every registered preset for all of this,
and that no app outside ``benchmarks/`` names a preset key.

Item schema: a list of field specs, in display order::

    {"name": "question", "type": "text", "label": "Question"}
    {"name": "story", "type": "longtext"}                      # shown with line breaks kept
    {"name": "image_a", "type": "image", "group": "pair"}      # same group = side by side
    {"name": "values", "type": "list", "of": "object", "keys": ["statement", "attitude"]}
    {"name": "descriptors", "type": "list", "of": "text"}
    {"name": "model_verdicts", "type": "object", "required": False, "hint": True}
    {"name": "seed", "type": "number", "required": False}

Types: text, longtext, image (a path relative to the import's images folder/zip), number,
list (``of`` text|object; ``keys`` = required keys of each object), object. ``required``
defaults to true. ``display`` false hides a field from annotators (it stays in the data).
``hint`` true shows a field only when the project turns model hints on. ``pair`` fields of a
pairwise question are shown in the assignment's stored order, not here.

Every preset also accepts the common keys ``id`` (external id), the strata ``country``,
``region``, ``generator``, ``category``, ``dimension`` and ``meta`` (an object of any extra
strata keys). Anything else is an unknown field and the import is refused.

This package imports nothing from the Django apps (judges, curation and annotation import it,
never the reverse): a preset is plain data plus pure functions.

The researcher-facing summaries (``name``, ``protocol``, the study design's ``notes``) are plain
English strings, marked with ``gettext_noop`` so the catalogs carry their translations; pages
translate them when they show them (``Preset.display_name``, ``Preset.protocol_text``, the design
pages), while stored data, exports, hashes and judge prompts keep the English declaration.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.utils.translation import gettext

FIELD_TYPES = ("text", "longtext", "image", "number", "list", "object")
COMMON_KEYS = ("id", "country", "region", "generator", "category", "dimension", "meta")
STRATA_KEYS = ("country", "region", "generator", "category", "dimension")

# One human demo rating per demo annotator, in order: (annotator1's answers, annotator2's).
DemoRatings = tuple[dict[str, Any], dict[str, Any]]


@dataclass(frozen=True)
class JudgePrompt:
    """The paper's model-judge prompt: the default of an LLM / VLM judge of this preset.

    ``template`` is a prompt template as ``judges/prompts.py`` describes it (``{"system",
    "user"}``, ``{"per_question": {...}}`` or a closed-choice ``{"classifiers", "flags"}``
    template). ``None`` means the generic rubric prompt; a ``system``/``user`` template that
    leaves one part out gets the generic prompt's part. ``parser`` reads the replies (``json``,
    ``score_is`` or ``choice``); ``questions`` are the rubric questions the prompt answers."""

    parser: str
    questions: tuple[str, ...]
    template: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class PairOrder:
    """How an item of a pairwise protocol is shown to a judge in the other order, for the judge's
    position-bias check (``JudgeConfig.both_orders``): the second run exchanges the item's
    ``fields`` (each pair's values trade places, images included), and its answers are mapped
    back to the item's own order before they are stored: the answers of the questions in
    ``swap_questions`` trade places (Q1 about Image A <-> Q2 about Image B), and for each
    question in ``swap_values`` its two values trade places ("left" <-> "right").

    ``verdict`` names the position the judge preferred: one question whose ``swap_values`` pair
    is (the value naming the member shown first, the one naming the second), any other answer a
    tie; or two questions, the scores of the member shown first and second (the higher wins,
    equal scores tie)."""

    fields: tuple[tuple[str, str], ...]
    verdict: tuple[str, ...]
    swap_questions: tuple[tuple[str, str], ...] = ()
    swap_values: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class DirectJudge:
    """A judge that scores without a prompt (embedding, image similarity): the rubric questions
    it answers for this preset and the backend ``mode`` that computes them (see the backend's
    docstring); both are the defaults of a judge of that backend in a project of this preset."""

    questions: tuple[str, ...]
    mode: str


@dataclass(frozen=True)
class NamedTemplate:
    """A prompt template a judge form can pick by name (``{"use": name}``), besides the preset
    default. Names are unique across all presets; every project is offered all of them."""

    label: str  # shown in the judge form, which translates it (marked with gettext_noop where declared)
    template: Mapping[str, Any]


@dataclass(frozen=True)
class ClosedQuestion:
    """One closed-choice classifier question; ``prompt`` holds ``{choices}``, filled with the list."""

    prompt: str
    choices: tuple[str, ...]


@dataclass(frozen=True)
class ClassifierBank:
    """The closed-choice questions a classifier template's ``ask`` names (by key) for this
    preset. ``ask: "context"`` picks one of the ``context`` keys: the item's ``dimension``, else
    the one whose choices hold the item's expected label. ``source`` names the bank in messages
    (e.g. "Table 3")."""

    source: str
    questions: Mapping[str, ClosedQuestion]
    context: tuple[str, ...] = ()


@dataclass(frozen=True)
class StudyDesign:
    """How the paper designed its human validation, as suggestions for a project's study design
    (the design page pre-fills its sample and plan forms, the dashboard its QC form, each marked
    "Suggested by ``source``"; nothing is applied until the researcher submits). Only what the
    paper states; ``None`` / empty where it is silent.

    - ``k``: annotators per item;
    - ``sample_strata``: item keys the sample is stratified by (strata columns such as
      ``country`` or keys of the items' ``meta``), ``sample_size``: its total size, and
      ``sample_allocation``: ``"equal"`` or ``"proportional"`` per stratum;
    - ``eligibility``: rules ``{"attribute": "nationality", "item_key": "country"}`` (who may
      rate which item) and ``balance``: ``{"attribute": "nationality", "quota": {"China": 2,
      "Germany": 2}}`` (annotators per item by attribute), as ``studies/rules.py`` reads them;
    - ``cap_per_annotator``: the most items one annotator gets;
    - ``qc``: quality-control settings, keys of ``studies/quality.py`` (``attention_rate``,
      ``min_seconds``, ``rationale_question``, ...);
    - ``source``: where the paper says so (file, section), shown with the suggestion;
    - ``notes``: what the paper says about the design that has no setting here (e.g. QC it
      used without giving a rate), shown with the suggestion (translated there: mark each with
      ``gettext_noop``)."""

    source: str
    k: int | None = None
    sample_strata: tuple[str, ...] = ()
    sample_size: int | None = None
    sample_allocation: str | None = None
    eligibility: tuple[Mapping[str, str], ...] = ()
    balance: Mapping[str, Any] | None = None
    cap_per_annotator: int | None = None
    qc: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class DemoJudge:
    """A judge the demo command configures (never runs) on the preset's demo project."""

    name: str
    backend: str  # a judges backend key, e.g. "embedding", "image_similarity", "openai_chat"
    model_id: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LazyReport:
    """A preset's ``validation_report`` by name: ``function`` of ``module`` (e.g.
    ``benchmarks.valueground.tables``), imported on the first call. The tables need numpy and the
    statistics core, which the apps reading a preset (every page, the annotate loop) never need."""

    module: str
    function: str = "validation_report"

    def __call__(self, inp: Any) -> Any:
        return getattr(importlib.import_module(self.module), self.function)(inp)


#: the paper's text file a preset cites, e.g. "(valueground.txt)": internal, never shown in the UI
#: (a Chinese translation may set it in full-width parentheses: "（valueground.txt）")
_PAPER_FILE = re.compile(r"\s*[(（][\w.-]+\.(?:txt|pdf|md)[)）]")


def without_file_names(text: str) -> str:
    """``text`` without the parenthesised paper file names (issue 25): "ValueGround
    (valueground.txt), Sec. 4.2" -> "ValueGround, Sec. 4.2"."""
    return _PAPER_FILE.sub("", text)


def translated(text: str) -> str:
    """A declared English text (marked with ``gettext_noop``) in the UI's language; "" stays ""
    (gettext's translation of "" is the catalog's header)."""
    return gettext(text) if text else text


@dataclass(frozen=True)
class Preset:
    key: str  # e.g. "valueground.pair_quality"; stable, used in URLs and exports
    name: str
    protocol: str  # one paragraph: the paper, section, what is validated
    item_fields: list[dict[str, Any]]
    rubric: dict[str, Any]
    # writes demo images into the folder and returns item records in the import format
    # (benchmarks.demo_data.DemoItems reads them from the package's demo/ files)
    demo_items: Callable[[Path], list[dict[str, Any]]]
    defaults: dict[str, Any] = field(default_factory=dict)  # e.g. {"k": 2, "show_model_hints": False}
    # how the paper designed its human validation (suggestions for the study-design pages)
    study_design: StudyDesign | None = None
    # the paper's judge prompt; None: the generic rubric prompt over every non-text question
    judge_prompt: JudgePrompt | None = None
    # a pairwise protocol: how a judge sees the pair in the other order (position-bias check)
    pair_order: PairOrder | None = None
    # backend key ("embedding", "image_similarity") -> what that judge answers for this preset
    direct_judges: Mapping[str, DirectJudge] = field(default_factory=dict)
    # template name -> template a judge form can pick (see NamedTemplate)
    named_templates: Mapping[str, NamedTemplate] = field(default_factory=dict)
    # the closed-choice questions this preset's classifier templates ask
    classifier_bank: ClassifierBank | None = None
    # keys of a curation policy (rule, aggregation, revise_if, element_filter) suggested for the
    # preset; a missing rule is the rubric's acceptance expression. None: the rubric's rule, all.
    suggested_policy: Mapping[str, Any] | None = None
    demo_judges: tuple[DemoJudge, ...] = ()
    # demo item external id -> the demo annotators' answers, submitted by the demo command
    demo_answers: Mapping[str, DemoRatings] = field(default_factory=dict)
    # the simulated study the demo seeds (docs/demo.md): items, annotators, noise, judges
    # (benchmarks.demo_data.DemoStudy reads ``<name>.study.json``); None: no simulated study
    demo_study: Mapping[str, Any] | None = None
    # The protocol's validation report (the paper's tables from a project's ratings), a
    # LazyReport naming its tables module; None: the protocol has no report.
    validation_report: Callable[..., Any] | None = None
    # "Does the benchmark's conclusion hold?" (issue 36): the item stratum whose values are the
    # benchmark's systems (e.g. the generating model), scored per system by people, the judge and
    # PPI++ (hvstats.systems); None: no per-system section unless a report names one
    system_stratum: str | None = None
    # comparisons of item groups the protocol's conclusions rest on, each "column: A, B vs C"
    # (hvstats.systems.Finding), shown with the per-system section
    findings: tuple[str, ...] = ()

    @property
    def display_name(self) -> str:
        """The name as pages show it, in the UI's language. ``name`` itself stays the English
        declaration: the demo's project names, exports, messages and the API use it."""
        return translated(self.name)

    @property
    def protocol_text(self) -> str:
        """The protocol paragraph as pages show it: in the UI's language, without the paper's file
        name (``protocol`` stays the English declaration, which exports carry)."""
        return without_file_names(translated(self.protocol))

    def field(self, name: str) -> dict[str, Any] | None:
        return next((f for f in self.item_fields if f["name"] == name), None)

    def image_fields(self) -> list[str]:
        return [f["name"] for f in self.item_fields if f["type"] == "image"]
