"""What a model judge decides: its rubric questions and, of a checklist, its flags. Everything
else is missing for that judge in every analysis, never a "no".

A judge answers a part of the rubric (its ``questions``), and of a checklist it may assess only
some flags: of the Cultural Counterfactuals audit (Table 4), the Table 3 classifiers decide flags
1, 2 and 5, the image-image filter (CLIP as in the paper, or the SSIM proxy) flags 4 and 6. A flag
the judge never assesses is unticked in its stored answer, but it is not the judge's "no": counted
as one, the SSIM filter would "agree" with the people that no source context was unrecognisable.

The declaration is stored on the judge's rater when the judge is created (``create_judge_config``):
``Rater.parameters["questions"]`` and ``["decides"] = {checklist id: [flags]}``. A rater stored
before ``decides`` was recorded for the image-image filters gets it derived from its backend and
mode (its registry entry's ``decides``, the table ``backends.base.FILTER_FLAGS``). Human raters decide
everything they answer.

Readers: the agreement frame (``agreement.selectors.ratings_frame``, hence the statistics and the
protocols' validation tables), the acceptance policy (``curation.selectors.ratings_for``) and the
long annotations export (``curation.exports.annotations``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from annotation.rubric import Question, Rubric
from benchmarks.base import Preset

from .registry import BACKENDS


@dataclass(frozen=True)
class Decides:
    """The part of a rubric one model rater decides.

    ``questions``: the question ids it answers (None: every question). ``flags``: for a checklist
    question, the flags it decides (a checklist absent here is decided whole)."""

    questions: frozenset[str] | None
    flags: Mapping[str, frozenset[str]]

    def answers(self, qid: str) -> bool:
        return self.questions is None or qid in self.questions

    def options(self, q: Question) -> list[Any]:
        """The options of checklist ``q`` this rater decides, in rubric order ([] when it does
        not answer ``q``)."""
        if not self.answers(q.id):
            return []
        decided = self.flags.get(q.id)
        return [o for o in q.option_values() if decided is None or o in decided]

    def partial(self, rubric: Rubric) -> frozenset[str]:
        """Checklist questions it answers with only some of their flags decided: the list it
        stores is not its answer to the whole question."""
        return frozenset(
            q.id
            for q in rubric.questions
            if q.type == "checklist" and self.answers(q.id) and len(self.options(q)) < len(q.options)
        )

    def undecided(self, rubric: Rubric) -> frozenset[str]:
        """Names (questions, ``<q>_field`` of a pairwise question, derived fields, ``accepted``)
        whose value is not this rater's decision: questions it does not answer, and derived fields
        reading one of them, or reading a partly decided checklist other than through
        ``count(<checklist>, '<decided flag>')``. A partly decided checklist itself is not listed
        (:meth:`partial`): its decided flags are the rater's answers."""
        out: set[str] = set()
        for q in rubric.questions:
            if not self.answers(q.id):
                out.add(q.id)
                if q.type == "pairwise":
                    out.add(f"{q.id}_field")
        partial = self.partial_flags(rubric)
        for d in rubric.derived:
            if d.expr.reads_undecided(out, partial):
                out.add(d.id)
        if rubric.acceptance is not None and rubric.acceptance.reads_undecided(out, partial):
            out.add("accepted")
        return frozenset(out)

    def partial_flags(self, rubric: Rubric) -> dict[str, frozenset[str]]:
        """The flags decided of each partly decided checklist (:meth:`partial`)."""
        return {q: frozenset(self.options(rubric.question(q))) for q in self.partial(rubric)}

    def as_json(self) -> dict[str, list[Any]]:
        """The stored form (``Rater.parameters["decides"]``), flags sorted."""
        return {q: sorted(flags) for q, flags in self.flags.items()}


def rater_decides(
    *, kind: str, backend: str, parameters: Mapping[str, Any] | None, preset: Preset | None
) -> Decides | None:
    """What a rater decides (None: everything it answers, a human or a judge that declares no
    narrowing). ``parameters``: the rater's stored ``parameters``; ``preset``: the project's, for
    the default mode of a prompt-less judge stored without ``decides``."""
    if kind != "model":
        return None
    params = parameters or {}
    listed = params.get("questions")
    questions = frozenset(str(q) for q in listed) if isinstance(listed, list) else None
    stored = params.get("decides")
    if isinstance(stored, Mapping):
        flags = {str(q): frozenset(str(f) for f in v) for q, v in stored.items() if isinstance(v, list)}
    else:
        flags = _derived_flags(backend, params, preset)
    if questions is None and not flags:
        return None
    return Decides(questions, flags)


def _derived_flags(backend: str, params: Mapping[str, Any], preset: Preset | None) -> dict[str, frozenset[str]]:
    """The flags a prompt-less judge decides, from its backend, mode and thresholds."""
    entry = BACKENDS.get(backend)
    if entry is None or entry.decides is None:
        return {}
    direct = preset.direct_judges.get(backend) if preset is not None else None
    mode = str(params.get("mode") or (direct.mode if direct is not None else ""))
    try:
        declared = entry.decides(mode, params)
    except ValueError:  # thresholds it could never have run with: no narrowing to read from them
        return {}
    return {q: frozenset(flags) for q, flags in (declared or {}).items()}


def ensemble_decides(
    rubric: Rubric, questions: Sequence[str], members: Sequence[tuple[Sequence[str], Decides | None]]
) -> dict[str, list[Any]] | None:
    """The ``decides`` an ensemble stores, from its members' (questions, decides): of each
    checklist, the flags every member answering it decides. Its answer combines every such
    member's flags (``judges.combine``), so a flag only some of them assess would count the
    others' unticked flag as a vote against it."""
    out: dict[str, list[Any]] = {}
    for qid in questions:
        q = rubric.question(qid)
        if q.type != "checklist":
            continue
        answering = [d for asked, d in members if qid in asked]
        decided = [o for o in q.option_values() if all(d is None or o in d.options(q) for d in answering)]
        if len(decided) < len(q.options):
            out[qid] = decided
    return out or None
