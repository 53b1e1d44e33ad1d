"""Rubrics are data: one declarative schema read by the form renderer, the answer validator,
the API, judge-prompt builders and exporters alike.

Schema (a JSON-able dict, stored in :class:`annotation.models.RubricVersion`)::

    {
      "title": "ValueGround pair quality",
      "instructions": "verbatim protocol text shown on '?'",
      "questions": [
        {"id": "q1", "type": "scale", "label": "Q1 Match-A",
         "prompt": "Image A is closer to {option_a} ...",       # {field} = item field, escaped on render
         "options": [{"value": 0, "label": "..."}, {"value": 1, "label": "..."}, ...]},
        {"id": "verdict", "type": "choice", "options": [{"value": "G", "label": "Good"}, ...]},
        {"id": "reason", "type": "text", "required_if": "verdict == 'B'", "min_length": 3},
        {"id": "flags", "type": "checklist", "options": [{"value": "f1", "label": "..."}]},
        {"id": "human_written", "type": "pairwise", "pair": ["human_utterance", "model_utterance"],
         "allow_tie": true},
        {"id": "consistency", "type": "binary", "options": [...],
         "repeat": {"over": "values", "label": "V{n}", "show": ["statement"]}},
        {"id": "improvement", "type": "scale", "options": [...],
         "repeat": {"over": "rewrites", "show": [["before", "Before (original line)"], "after"]}},
        {"id": "exag", "type": "scale", "reversed": true, "options": [...]},
      ],
      "derived": [{"id": "total", "label": "Total (Eq. 8)", "expr": "(q1/2 + q2/2 + q3/2 + q4) / 4"}],
      "acceptance": {"expr": "q1 + q2 >= 3 and q3 == 2 and q4 == 1", "description": "Eq. 7"}
    }

Question types: ``scale`` (ordinal points with anchors), ``binary`` (two points, 0/1),
``choice`` (single choice), ``checklist`` (any subset of flags), ``pairwise`` (left / right /
optional tie over two item fields whose display order is stored per assignment), ``text``.
``required`` defaults to true except for ``text`` and ``checklist``; ``required_if`` makes a
question required when its expression holds. ``repeat`` asks the question once per element of
a list field of the item; its answer is a list of that length; ``show`` names the keys of an
object element to show with it, each a key or a ``[key, label]`` pair (the label the form shows).
``reversed`` true marks a scale whose higher points are worse (e.g. 5 = strongly exaggerated);
the form shows a cue, since most scales run the other way.

For a pairwise question ``q`` the expression context also has ``q_field``: the item field the
annotator picked (or ``"tie"``), resolved through the assignment's presentation order.

Translations (optional): the rubric's own text is the paper's wording, the canonical version
(``CANONICAL_LOCALE``); ``translations`` maps a UI language of ``settings.LANGUAGES`` to the
annotator-facing text in it, any part of which may be left out (the canonical text is shown)::

    "translations": {
      "de": {
        "title": "...", "instructions": "...", "acceptance": "the acceptance rule's description",
        "fields": {"image_a": "Bild A"},   # the labels of the item's fields the form shows
        "questions": {
          "q1": {"label": "...", "prompt": "... {option_a} ...", "help": "...",
                 "options": {"0": "anchor of 0", "1": "...", "2": "..."},   # by option value
                 "repeat_label": "Wert {n}", "show": {"before": "Vorher"}},  # repeat.show labels
        },
      },
    }

Ids, option values and expressions are never translated, so answers, derived fields and the
acceptance rule are the same in every language; a translated prompt names the same ``{fields}``
as the canonical one. Judges read the canonical wording only. Which wording an annotator was
shown is stored with the annotation (``Annotation.locale``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from .expressions import Expression, ExpressionError

QUESTION_TYPES = ("scale", "binary", "choice", "checklist", "pairwise", "text")
#: the language of a rubric's own text: the papers' wording, which translations never replace
CANONICAL_LOCALE = "en"
_TRANSLATED = {"title", "instructions", "acceptance", "questions", "fields"}
_TRANSLATED_QUESTION = {"label", "prompt", "help", "options", "repeat_label", "show"}
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
_FIELD_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_ID = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
MAX_TEXT = 5000
PAIR_SIDES = ("left", "right")


class RubricError(ValueError):
    """The rubric schema itself is malformed."""


class AnswerError(ValueError):
    """Answers do not satisfy the rubric. ``errors`` maps question id (or ``__all__``) to a message."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


@dataclass(frozen=True)
class Option:
    value: Any
    label: str
    key: str  # the keyboard key that picks it


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    label: str
    prompt: str
    help: str
    options: tuple[Option, ...]
    required: bool
    required_if: Expression | None
    repeat_over: str | None
    repeat_label: str
    repeat_show: tuple[str, ...]
    pair: tuple[str, str] | None
    allow_tie: bool
    min_length: int
    repeat_show_labels: tuple[str, ...] = ()  # one per repeat_show key ("" = the key, capitalised)
    reversed: bool = False

    def option_values(self) -> list[Any]:
        return [o.value for o in self.options]


@dataclass(frozen=True)
class Derived:
    id: str
    label: str
    expr: Expression


@dataclass
class Rubric:
    title: str
    instructions: str
    questions: tuple[Question, ...]
    derived: tuple[Derived, ...]
    acceptance: Expression | None
    acceptance_description: str
    raw: dict = field(repr=False, default_factory=dict)
    #: locale -> the validated translation (see the module docstring); empty when there is none
    translations: dict[str, dict] = field(repr=False, default_factory=dict)
    #: item field -> its label in this wording (a localized rubric's; empty: the preset's labels)
    field_labels: dict[str, str] = field(repr=False, default_factory=dict)
    _localized: dict[str, Rubric] = field(repr=False, compare=False, default_factory=dict)

    # ------------------------------------------------------------------ parsing the schema
    @classmethod
    def from_schema(cls, schema: Mapping[str, Any]) -> Rubric:
        if not isinstance(schema, Mapping):
            raise RubricError("a rubric schema must be an object")
        unknown = set(schema) - {"title", "instructions", "questions", "derived", "acceptance", "translations"}
        if unknown:
            raise RubricError(f"unknown rubric keys: {', '.join(sorted(unknown))}")
        raw_questions = schema.get("questions")
        if not isinstance(raw_questions, list) or not raw_questions:
            raise RubricError("a rubric needs a non-empty list of questions")
        questions: list[Question] = []
        seen: set[str] = set()
        for raw in raw_questions:
            q = _parse_question(raw)
            if q.id in seen:
                raise RubricError(f"duplicate question id {q.id!r}")
            seen.add(q.id)
            questions.append(q)
        names = set(seen) | {f"{q.id}_field" for q in questions if q.type == "pairwise"}
        for q in questions:
            if q.required_if is not None:
                _check_names(q.required_if, names, f"required_if of {q.id}")
        derived: list[Derived] = []
        for raw in schema.get("derived") or []:
            did = raw.get("id", "")
            if not _ID.match(did) or did in names:
                raise RubricError(f"bad or duplicate derived id {did!r}")
            expr = _compile(raw.get("expr", ""), f"derived {did}")
            _check_names(expr, names, f"derived {did}")
            derived.append(Derived(did, str(raw.get("label", did)), expr))
            names.add(did)
        acceptance = None
        acc_desc = ""
        if schema.get("acceptance"):
            acc = schema["acceptance"]
            acceptance = _compile(acc.get("expr", ""), "acceptance")
            _check_names(acceptance, names, "acceptance")
            acc_desc = str(acc.get("description", ""))
        return cls(
            title=str(schema.get("title", "")),
            instructions=str(schema.get("instructions", "")),
            questions=tuple(questions),
            derived=tuple(derived),
            acceptance=acceptance,
            acceptance_description=acc_desc,
            raw=dict(schema),
            translations=_parse_translations(schema.get("translations"), questions),
        )

    # ------------------------------------------------------------------ translations
    def pick_locale(self, language: str | None) -> str | None:
        """The translation to show for a UI language (``de``, ``zh-hans``; a regional variant such
        as ``de-at`` falls back to ``de``), or None for the canonical wording."""
        if not language:
            return None
        language = language.lower()
        for code in (language, language.split("-", 1)[0]):
            if code in self.translations:
                return code
        return None

    def localized(self, locale: str | None) -> Rubric:
        """This rubric with the annotator-facing text of ``locale`` (itself for None or the
        canonical locale). Ids, options' values and expressions are unchanged, so answers given
        under it validate and derive exactly as under the canonical rubric."""
        if not locale or locale == CANONICAL_LOCALE:
            return self
        found = self._localized.get(locale)
        if found is not None:
            return found
        tr = self.translations[locale]
        by_q = tr.get("questions", {})
        questions = []
        for q in self.questions:
            t = by_q.get(q.id)
            if t is None:
                questions.append(q)
                continue
            names = t.get("options", {})
            shows = t.get("show", {})
            questions.append(
                replace(
                    q,
                    label=t.get("label", q.label),
                    prompt=t.get("prompt", q.prompt),
                    help=t.get("help", q.help),
                    options=tuple(replace(o, label=names.get(str(o.value), o.label)) for o in q.options),
                    repeat_label=t.get("repeat_label", q.repeat_label),
                    repeat_show_labels=tuple(
                        shows.get(k, label) for k, label in zip(q.repeat_show, q.repeat_show_labels, strict=True)
                    ),
                )
            )
        found = self._localized[locale] = replace(
            self,
            title=tr.get("title", self.title),
            instructions=tr.get("instructions", self.instructions),
            acceptance_description=tr.get("acceptance", self.acceptance_description),
            questions=tuple(questions),
            field_labels=dict(tr.get("fields", {})),
            _localized={},
        )
        return found

    def check_locale(self, locale: Any) -> str:
        """The wording an answer says it was given under: "" (not said), the canonical locale or
        one of the rubric's translations; anything else raises ValueError."""
        if not isinstance(locale, str):
            raise ValueError(_("the locale must be text"))
        locale = locale.strip().lower()
        if locale and locale != CANONICAL_LOCALE and locale not in self.translations:
            offered = ", ".join([CANONICAL_LOCALE, *sorted(self.translations)])
            raise ValueError(
                _("this rubric has no wording in %(locale)s (it has: %(offered)s)")
                % {"locale": locale[:20], "offered": offered}
            )
        return locale

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(qid)

    # ------------------------------------------------------------------ answers
    def repeat_count(self, q: Question, item: Mapping[str, Any]) -> int:
        items = item.get(q.repeat_over) if q.repeat_over else None
        return len(items) if isinstance(items, list) else 0

    def validate(
        self,
        answers: Mapping[str, Any],
        *,
        item: Mapping[str, Any],
        presentation: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Return the cleaned answers or raise :class:`AnswerError`. The single validator used by
        the web form, the API and judges."""
        if not isinstance(answers, Mapping):
            raise AnswerError({"__all__": "answers must be an object"})
        errors: dict[str, str] = {}
        ids = {q.id for q in self.questions}
        for key in answers:
            if key not in ids:
                errors[str(key)] = "unknown question"
        cleaned: dict[str, Any] = {}
        for q in self.questions:
            raw = answers.get(q.id)
            try:
                if q.repeat_over:
                    n = self.repeat_count(q, item)
                    if raw is None:
                        raw = [None] * n
                    if not isinstance(raw, list) or len(raw) != n:
                        raise ValueError(f"expected a list of {n} answers, one per element of {q.repeat_over}")
                    cleaned[q.id] = [_clean_value(q, v) for v in raw]
                else:
                    cleaned[q.id] = _clean_value(q, raw)
            except ValueError as exc:
                errors[q.id] = str(exc)
        if errors:
            raise AnswerError(errors)
        context = self.context(cleaned, item=item, presentation=presentation)
        for q in self.questions:
            required = q.required if q.required_if is None else bool(q.required_if.evaluate(context))
            if not required:
                continue
            value = cleaned[q.id]
            values = value if q.repeat_over else [value]
            for i, v in enumerate(values):
                if _is_empty(q, v):
                    if q.repeat_over:
                        errors[q.id] = _("an answer is required (%(element)s)") % {
                            "element": q.repeat_label.format(n=i + 1)
                        }
                    else:
                        errors[q.id] = _("an answer is required")
                    break
                if q.type == "text" and len(v) < q.min_length:
                    errors[q.id] = _("write at least %(n)d characters") % {"n": q.min_length}
                    break
        if errors:
            raise AnswerError(errors)
        return cleaned

    def context(
        self,
        cleaned: Mapping[str, Any],
        *,
        item: Mapping[str, Any] | None = None,
        presentation: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        ctx = dict(cleaned)
        for q in self.questions:
            if q.type == "pairwise" and not q.repeat_over:
                ctx[f"{q.id}_field"] = resolve_pair_choice(q, cleaned.get(q.id), presentation)
        return ctx

    def derive(self, cleaned: Mapping[str, Any], *, presentation: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Derived fields, then ``accepted`` (bool or None) when the rubric has an acceptance rule."""
        ctx = self.context(cleaned, presentation=presentation)
        out: dict[str, Any] = {}
        for d in self.derived:
            value = d.expr.evaluate(ctx)
            if isinstance(value, bool):
                value = int(value)
            out[d.id] = value
            ctx[d.id] = value
        if self.acceptance is not None:
            verdict = self.acceptance.evaluate(ctx)
            out["accepted"] = None if verdict is None else bool(verdict)
        return out

    def parse_form(self, data: Any, *, item: Mapping[str, Any]) -> dict[str, Any]:
        """Turn an HTML form (a QueryDict-like with ``get``/``getlist``) into typed answers for
        :meth:`validate`. Field names: ``<id>`` or ``<id>.<index>`` for repeated questions."""

        def one(q: Question, name: str) -> Any:
            if q.type == "checklist":
                return [_coerce_option(q, v) for v in data.getlist(name)]
            raw = data.get(name)
            if raw is None or raw == "":
                return None
            if q.type in ("scale", "binary", "choice"):
                return _coerce_option(q, raw)
            return raw

        answers: dict[str, Any] = {}
        for q in self.questions:
            if q.repeat_over:
                answers[q.id] = [one(q, f"{q.id}.{i}") for i in range(self.repeat_count(q, item))]
            else:
                answers[q.id] = one(q, q.id)
        return answers

    def answer_fields(self) -> list[str]:
        """Top-level answer and derived field names (a repeated question's answer is a list)."""
        return [q.id for q in self.questions] + [d.id for d in self.derived]


def resolve_pair_choice(q: Question, side: Any, presentation: Mapping[str, Any] | None) -> str | None:
    if side is None or q.pair is None:
        return None
    if side == "tie":
        return "tie"
    order = pair_order(q, presentation)
    return order[PAIR_SIDES.index(side)]


def pair_order(q: Question, presentation: Mapping[str, Any] | None) -> list[str]:
    """Which item field is shown left and right for this assignment (default: declared order)."""
    order = (presentation or {}).get("pair_order", {}).get(q.id)
    if order and sorted(order) == sorted(q.pair or ()):
        return list(order)
    return list(q.pair or ())


# ---------------------------------------------------------------------- helpers
def _compile(source: Any, where: str) -> Expression:
    if not isinstance(source, str) or not source.strip():
        raise RubricError(f"{where}: expression must be a non-empty string")
    try:
        return Expression(source)
    except ExpressionError as exc:
        raise RubricError(f"{where}: {exc}") from None


def _check_names(expr: Expression, names: set[str], where: str) -> None:
    unknown = expr.names - names
    if unknown:
        raise RubricError(f"{where}: unknown name(s) {', '.join(sorted(unknown))}")


def _parse_question(raw: Any) -> Question:
    if not isinstance(raw, Mapping):
        raise RubricError("each question must be an object")
    allowed = {
        "id",
        "type",
        "label",
        "prompt",
        "help",
        "options",
        "required",
        "required_if",
        "repeat",
        "pair",
        "allow_tie",
        "min_length",
        "reversed",
    }
    unknown = set(raw) - allowed
    qid = raw.get("id", "")
    if unknown:
        raise RubricError(f"question {qid!r}: unknown keys {', '.join(sorted(unknown))}")
    if not isinstance(qid, str) or not _ID.match(qid) or qid.endswith("_field"):
        raise RubricError(f"question id {qid!r} must be lower_snake_case")
    qtype = raw.get("type")
    if qtype not in QUESTION_TYPES:
        raise RubricError(f"question {qid}: type must be one of {', '.join(QUESTION_TYPES)}")
    options: list[Option] = []
    raw_options = raw.get("options") or []
    if qtype in ("scale", "binary", "choice", "checklist"):
        if not raw_options:
            raise RubricError(f"question {qid}: options are required for type {qtype}")
        values = [o.get("value") for o in raw_options]
        if len(set(map(repr, values))) != len(values):
            raise RubricError(f"question {qid}: duplicate option values")
        if qtype in ("scale", "binary"):
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in values) or values != sorted(values):
                raise RubricError(f"question {qid}: {qtype} options must be ascending integers")
            if qtype == "binary" and values != [0, 1]:
                raise RubricError(f"question {qid}: binary options must be 0 and 1")
        for i, o in enumerate(raw_options):
            v = o["value"]
            if qtype in ("scale", "binary") and 0 <= v <= 9:
                key = str(v)
            else:
                key = str(i + 1) if i < 9 else ""
            options.append(Option(value=v, label=str(o.get("label", v)), key=key))
    elif raw_options:
        raise RubricError(f"question {qid}: type {qtype} takes no options")
    pair = None
    if qtype == "pairwise":
        p = raw.get("pair")
        if not (isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)):
            raise RubricError(f"question {qid}: pairwise needs 'pair': [field_a, field_b]")
        pair = (p[0], p[1])
        keys = ["1", "2", "3"]
        options = [Option("left", "Left", keys[0]), Option("right", "Right", keys[1])]
        if raw.get("allow_tie", False):
            options.append(Option("tie", "Tie", keys[2]))
    repeat = raw.get("repeat")
    repeat_over = None
    repeat_label = "{n}"
    repeat_show: tuple[str, ...] = ()
    repeat_show_labels: tuple[str, ...] = ()
    if repeat is not None:
        if not isinstance(repeat, Mapping) or not isinstance(repeat.get("over"), str):
            raise RubricError(f"question {qid}: repeat needs 'over': <list field>")
        repeat_over = repeat["over"]
        repeat_label = str(repeat.get("label", "{n}"))
        shows = [_parse_show(s, qid) for s in repeat.get("show") or ()]
        repeat_show = tuple(k for k, _label in shows)
        repeat_show_labels = tuple(label for _key, label in shows)
        if qtype == "pairwise":
            raise RubricError(f"question {qid}: pairwise questions cannot repeat")
    if raw.get("reversed") and qtype != "scale":
        raise RubricError(f"question {qid}: only a scale can be reversed")
    required_if = _compile(raw["required_if"], f"required_if of {qid}") if raw.get("required_if") else None
    default_required = qtype not in ("text", "checklist")
    return Question(
        id=qid,
        type=qtype,
        label=str(raw.get("label", qid)),
        prompt=str(raw.get("prompt", "")),
        help=str(raw.get("help", "")),
        options=tuple(options),
        required=bool(raw.get("required", default_required)),
        required_if=required_if,
        repeat_over=repeat_over,
        repeat_label=repeat_label,
        repeat_show=repeat_show,
        pair=pair,
        allow_tie=bool(raw.get("allow_tie", False)),
        min_length=int(raw.get("min_length", 1)),
        repeat_show_labels=repeat_show_labels,
        reversed=bool(raw.get("reversed", False)),
    )


def _parse_translations(raw: Any, questions: Sequence[Question]) -> dict[str, dict]:
    """Validate a rubric's ``translations`` (see the module docstring): known UI languages only,
    known question ids and option values only, text only, and prompts naming the same item
    fields as the canonical ones. Returns them as given (copied)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise RubricError("translations must be an object: {locale: {...}}")
    known = sorted(code for code, _name in settings.LANGUAGES if code != CANONICAL_LOCALE)
    by_id = {q.id: q for q in questions}
    out: dict[str, dict] = {}
    for locale, tr in raw.items():
        where = f"translations[{locale!r}]"
        if locale == CANONICAL_LOCALE:
            raise RubricError(f"{where}: {CANONICAL_LOCALE!r} is the canonical wording (the rubric's own text)")
        if locale not in known:
            raise RubricError(f"{where}: unknown locale (the UI's languages: {', '.join(known)})")
        if not isinstance(tr, Mapping):
            raise RubricError(f"{where} must be an object")
        unknown = set(tr) - _TRANSLATED
        if unknown:
            raise RubricError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        for key in ("title", "instructions", "acceptance"):
            if key in tr:
                _text(tr[key], f"{where}.{key}")
        fields = tr.get("fields", {})
        if not isinstance(fields, Mapping):
            raise RubricError(f"{where}.fields must be an object: {{item field: label}}")
        for name, label in fields.items():
            if not isinstance(name, str) or not _FIELD_NAME.match(name):
                raise RubricError(f"{where}.fields: {name!r} is not an item field name")
            _text(label, f"{where}.fields[{name!r}]")
        qs = tr.get("questions", {})
        if not isinstance(qs, Mapping):
            raise RubricError(f"{where}.questions must be an object: {{question id: {{...}}}}")
        for qid, qt in qs.items():
            q = by_id.get(qid)
            if q is None:
                raise RubricError(f"{where}: unknown question id {qid!r}")
            _check_question_translation(q, qt, f"{where}.questions[{qid!r}]")
        out[locale] = {
            **{k: v for k, v in tr.items() if k != "questions"},
            "questions": {qid: dict(qt) for qid, qt in qs.items()},
        }
    return out


def _check_question_translation(q: Question, qt: Any, where: str) -> None:
    if not isinstance(qt, Mapping):
        raise RubricError(f"{where} must be an object")
    unknown = set(qt) - _TRANSLATED_QUESTION
    if unknown:
        raise RubricError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    for key in ("label", "help"):
        if key in qt:
            _text(qt[key], f"{where}.{key}")
    for key, canonical in (("prompt", q.prompt), ("repeat_label", q.repeat_label)):
        if key not in qt:
            continue
        _text(qt[key], f"{where}.{key}")
        if key == "repeat_label" and not q.repeat_over:
            raise RubricError(f"{where}: question {q.id} does not repeat")
        mine, theirs = set(_PLACEHOLDER.findall(qt[key])), set(_PLACEHOLDER.findall(canonical))
        if mine != theirs:
            shown = ", ".join("{" + n + "}" for n in sorted(theirs)) or "none"
            given = ", ".join("{" + n + "}" for n in sorted(mine)) or "none"
            raise RubricError(f"{where}.{key} must name the canonical text's fields ({shown}), not ({given})")
    if "options" in qt:
        names = qt["options"]
        if q.type in ("pairwise", "text") or not isinstance(names, Mapping):
            raise RubricError(f"{where}.options: only option questions take translated options, by value")
        values = {str(o.value) for o in q.options}
        for value, label in names.items():
            if value not in values:
                raise RubricError(
                    f"{where}.options: unknown option value {value!r} (values: {', '.join(sorted(values))})"
                )
            _text(label, f"{where}.options[{value!r}]")
    if "show" in qt:
        shows = qt["show"]
        if not isinstance(shows, Mapping) or not set(shows) <= set(q.repeat_show):
            raise RubricError(f"{where}.show: labels by the keys of repeat.show ({', '.join(q.repeat_show)})")
        for key, label in shows.items():
            _text(label, f"{where}.show[{key!r}]")


def _text(value: Any, where: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise RubricError(f"{where} must be non-empty text")


def _parse_show(entry: Any, qid: str) -> tuple[str, str]:
    """A ``repeat.show`` entry: a key, or ``[key, label]`` where the form should not show the
    bare key (e.g. CQ-Bench's ``before`` is the line as it stood in the "Consistent story")."""
    if isinstance(entry, str):
        return entry, ""
    if isinstance(entry, (list, tuple)) and len(entry) == 2 and all(isinstance(x, str) for x in entry):
        return entry[0], entry[1]
    raise RubricError(f"question {qid}: each repeat 'show' entry is a key or [key, label]")


def _coerce_option(q: Question, raw: str) -> Any:
    """Map a submitted form string back to the typed option value (unknown strings pass through
    so that the validator reports them)."""
    for v in q.option_values():
        if str(v) == raw:
            return v
    return raw


def _clean_value(q: Question, v: Any) -> Any:
    if q.type == "checklist":
        if v is None:
            return []
        if not isinstance(v, list):
            raise ValueError("expected a list of flags")
        allowed = q.option_values()
        bad = [x for x in v if x not in allowed]
        if bad:
            raise ValueError(f"unknown flag(s): {', '.join(map(str, bad))}")
        if len(set(v)) != len(v):
            raise ValueError("a flag is listed twice")
        return [x for x in allowed if x in v]  # canonical order
    if v is None:
        return None
    if q.type in ("scale", "binary", "choice"):
        if isinstance(v, bool) or v not in q.option_values() or (q.type != "choice" and not isinstance(v, int)):
            allowed = ", ".join(str(x) for x in q.option_values())
            raise ValueError(f"{v!r} is not one of {allowed}")
        return v
    if q.type == "pairwise":
        allowed_sides = [o.value for o in q.options]
        if v not in allowed_sides:
            raise ValueError(f"{v!r} is not one of {', '.join(allowed_sides)}")
        return v
    if q.type == "text":
        if not isinstance(v, str):
            raise ValueError("expected text")
        v = v.strip()
        if len(v) > MAX_TEXT:
            raise ValueError(f"text longer than {MAX_TEXT} characters")
        return v or None
    raise ValueError("unsupported question type")  # pragma: no cover


def _is_empty(q: Question, v: Any) -> bool:
    if q.type == "checklist":
        return False  # no flag ticked is a valid answer
    return v is None or v == ""


def fill_prompt(template: str, item: Mapping[str, Any]) -> str:
    """Replace ``{field}`` with the item's value (plain text; escaping happens at render)."""

    def repl(m: re.Match[str]) -> str:
        val = item.get(m.group(1))
        return m.group(0) if val is None or isinstance(val, (list, dict)) else str(val)

    return re.sub(r"\{([a-z_][a-z0-9_]*)\}", repl, template)


def as_sequence(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else []
