"""The simulated studies of the demo: answers drawn from a hidden truth, pure functions (numpy only,
no database). See docs/demo.md.

A study (a preset's ``demo_study``, ``benchmarks/<paper>/demo/<name>.study.json``) says how each
rubric question behaves (``questions``), who the simulated annotators and judges are, and how
noisy each is. The model, one latent variable per item:

- every item has a latent quality ``u ~ N(0, 1)`` (shifted by its strata, ``shift``), and every
  question (and element of a repeated question) a latent ``z = sqrt(rho) u + sqrt(1 - rho) e``;
- an **ordinal** question (scale, binary, a choice with an ``order``, each flag of a checklist, the
  three outcomes of a pairwise question) cuts ``z`` at the normal quantiles of its marginal ``p``
  (the truth's distribution over its options, lowest first): the hidden truth;
- a rater (annotator or judge) sees ``z + bias + group bias + N(0, noise)`` and cuts it the same
  way, so a noisy rater confuses neighbouring options and a biased one leans one way; a
  **nominal** question (``kind: nominal``) keeps the truth's category with probability
  ``1 - error``; a **text** question is a phrase from ``texts`` when its condition holds.

Everything is drawn from ``numpy.random.default_rng`` seeded by the study's ``seed`` and the
rater's and item's positions, so the same study gives the same answers on every machine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np

_N = NormalDist()


@dataclass(frozen=True)
class QuestionModel:
    """How one rubric question is simulated (see the module docstring)."""

    id: str
    kind: str  # ordinal, nominal, checklist, pairwise, text
    options: tuple[Any, ...] = ()  # ordinal: lowest first; nominal / checklist: the values
    p: tuple[float, ...] = ()  # the truth's marginal over ``options`` (checklist: each flag's rate)
    rho: float = 0.5  # share of the latent from the item's quality
    repeat_over: str | None = None
    when: Mapping[str, Any] | None = None  # {"question": id, "in": [values]}: asked only then
    required: bool = True
    error: float = 0.2  # nominal: chance a rater gives another category
    texts: tuple[str, ...] = ()
    rate: float = 1.0  # text: share of raters writing one when asked
    pair: tuple[str, str] = ("", "")  # pairwise: (the truth's field, the other)


@dataclass(frozen=True)
class RaterModel:
    name: str
    noise: float = 0.6
    bias: float = 0.0
    group: str = ""
    # per question id: a further bias (e.g. one nationality reading Q3 more strictly)
    question_bias: Mapping[str, float] = field(default_factory=dict)
    # pairwise / two-sided questions: a preference for what is shown first (judges' position bias)
    position_bias: float = 0.0
    blank_rate: float = 0.0  # optional questions left empty


def question_models(rubric_questions: Sequence[Mapping[str, Any]], spec: Mapping[str, Any]) -> list[QuestionModel]:
    """The model of every rubric question: its type and options from the rubric, the marginals and
    conditions from the study's ``questions`` (a question left out is uniform, or never written
    for an optional text)."""
    out = []
    for q in rubric_questions:
        s = dict(spec.get(q["id"], {}))
        qtype = q["type"]
        values = tuple(o["value"] for o in q.get("options", ()))
        repeat = (q.get("repeat") or {}).get("over")
        common = {
            "id": q["id"],
            "rho": float(s.get("rho", 0.5)),
            "repeat_over": repeat,
            "when": s.get("when"),
            "required": bool(q.get("required", qtype not in ("text", "checklist"))) or bool(q.get("required_if")),
        }
        if qtype == "text":
            out.append(
                QuestionModel(**common, kind="text", texts=tuple(s.get("texts", ())), rate=float(s.get("rate", 1.0)))
            )
        elif qtype == "checklist":
            rates = s.get("p", {})
            out.append(
                QuestionModel(
                    **common, kind="checklist", options=values, p=tuple(float(rates.get(v, 0.05)) for v in values)
                )
            )
        elif qtype == "pairwise":
            p = tuple(s.get("p", (1 / 3, 1 / 3, 1 / 3)))  # (the other, tie, the truth)
            truth = s.get("truth", q["pair"][0])
            other = next(f for f in q["pair"] if f != truth)
            out.append(QuestionModel(**common, kind="pairwise", p=p, pair=(truth, other)))
        elif s.get("kind") == "nominal":
            rates = s.get("p", {})
            opts = tuple(v for v in values)
            p = np.array([float(rates.get(v, 1.0)) for v in opts])
            out.append(
                QuestionModel(
                    **common,
                    kind="nominal",
                    options=opts,
                    p=tuple(p / p.sum()),
                    error=float(s.get("error", 0.2)),
                )
            )
        else:
            opts = tuple(s.get("order", values))
            p = np.array(s.get("p", [1.0] * len(opts)), dtype=float)
            out.append(QuestionModel(**common, kind="ordinal", options=opts, p=tuple(p / p.sum())))
    return out


@lru_cache(maxsize=256)
def cuts(p: tuple[float, ...]) -> np.ndarray:
    """Normal quantiles that split N(0, 1) into the marginal ``p`` (lowest option first)."""
    c = np.cumsum(p)[:-1]
    return np.array([_N.inv_cdf(min(max(x, 1e-6), 1 - 1e-6)) for x in c])


@dataclass(frozen=True)
class Truth:
    """The hidden truth of one item: the latent of every (question, element), the nominal
    categories, and the item's quality."""

    quality: float
    latent: Mapping[str, np.ndarray]  # question id -> one latent per element (checklist: per flag)
    category: Mapping[str, np.ndarray]  # nominal question id -> option index per element


def n_elements(q: QuestionModel, item: Mapping[str, Any]) -> int:
    return len(item.get(q.repeat_over) or ()) if q.repeat_over else 1


def draw_truth(
    rng: np.random.Generator, models: Sequence[QuestionModel], item: Mapping[str, Any], shift: float = 0.0
) -> Truth:
    u = float(rng.normal()) + shift
    latent, category = {}, {}
    for q in models:
        n = n_elements(q, item)
        width = len(q.options) if q.kind == "checklist" else 1
        e = rng.normal(size=(n, width))
        latent[q.id] = np.sqrt(q.rho) * u + np.sqrt(1 - q.rho) * e
        if q.kind == "nominal":
            category[q.id] = rng.choice(len(q.options), size=n, p=np.asarray(q.p))
    return Truth(u, latent, category)


def _ordinal(z: float, p: tuple[float, ...]) -> int:
    return int(np.searchsorted(cuts(tuple(p)), z))


def _holds(when: Mapping[str, Any] | None, answers: Mapping[str, Any]) -> bool:
    return when is None or answers.get(when["question"]) in when.get("in", ())


def answer(
    rng: np.random.Generator,
    models: Sequence[QuestionModel],
    truth: Truth,
    rater: RaterModel,
    *,
    questions: Sequence[str] | None = None,
    first_shown: Mapping[str, str] | None = None,
    exact: bool = False,
) -> dict[str, Any]:
    """One rater's answers to one item (only ``questions`` when given: a judge's). ``first_shown``:
    for a pairwise question, the field shown first (left), which a position bias favours; for a
    rater with a position bias and no pairwise question, the first question of the pair named in
    ``first_shown["__pair__"]`` (e.g. ``"q1"``) gets the bias (what is shown first looks better).
    Pairwise answers are ``left`` / ``right`` / ``tie`` as the rater saw them (``first_shown``
    left). ``exact``: the truth itself (no noise, no bias)."""
    out: dict[str, Any] = {}
    shown = first_shown or {}
    for q in models:
        if questions is not None and q.id not in questions:
            continue
        if not _holds(q.when, out):
            continue
        z = truth.latent[q.id]
        bias = 0.0 if exact else rater.bias + rater.question_bias.get(q.id, 0.0)
        if not exact and rater.position_bias and shown.get("__pair__") == q.id:
            bias += rater.position_bias
        noise = 0.0 if exact else rater.noise

        def seen(x: np.ndarray, bias: float = bias, noise: float = noise) -> np.ndarray:
            return x + bias + (rng.normal(scale=noise, size=x.shape) if noise else 0.0)

        values: list[Any] = []
        for k in range(z.shape[0]):
            if q.kind == "ordinal":
                values.append(q.options[_ordinal(float(seen(z[k])[0]), q.p)])
            elif q.kind == "checklist":
                flags = seen(z[k])
                values.append([v for f, v in enumerate(q.options) if _ordinal(float(flags[f]), (1 - q.p[f], q.p[f]))])
            elif q.kind == "nominal":
                c = int(truth.category[q.id][k])
                if not exact and rng.random() < q.error:
                    c = int(rng.integers(len(q.options)))
                values.append(q.options[c])
            elif q.kind == "pairwise":
                z_seen = float(seen(z[k])[0])
                outcome = _ordinal(z_seen, q.p)  # 0: the other, 1: tie, 2: the truth
                left = shown.get(q.id, q.pair[0])
                if not exact and rater.position_bias and rng.random() < rater.position_bias:
                    outcome = 2 if left == q.pair[0] else 0  # picks what is shown first
                picked = {0: q.pair[1], 1: "tie", 2: q.pair[0]}[outcome]
                values.append("tie" if picked == "tie" else ("left" if picked == left else "right"))
            else:  # text
                if q.texts and (q.required or rng.random() < q.rate):
                    values.append(q.texts[int(rng.integers(len(q.texts)))])
                else:
                    values.append("")
        if not exact and not q.required and rater.blank_rate and rng.random() < rater.blank_rate:
            values = [[] if q.kind == "checklist" else ("" if q.kind == "text" else None) for _ in values]
        out[q.id] = values if q.repeat_over else values[0]
    return out


def rater_models(specs: Sequence[Mapping[str, Any]], groups: Mapping[str, Mapping[str, float]]) -> list[RaterModel]:
    """Raters from the study file: ``{"name", "noise", "bias", "group", "position_bias",
    "blank_rate"}``; ``groups`` adds each group's per-question bias (systematic disagreement)."""
    return [
        RaterModel(
            name=s["name"],
            noise=float(s.get("noise", 0.6)),
            bias=float(s.get("bias", 0.0)),
            group=s.get("group", ""),
            question_bias=dict(groups.get(s.get("group", ""), {})),
            position_bias=float(s.get("position_bias", 0.0)),
            blank_rate=float(s.get("blank_rate", 0.0)),
        )
        for s in specs
    ]


def rng_for(seed: int, *parts: int) -> np.random.Generator:
    """The generator of one (rater, item) draw: independent of the order anything is drawn in."""
    return np.random.default_rng([int(seed), *map(int, parts)])


#: the name of a simulated judge's stated confidence among its metrics (``judge_metrics``)
CONFIDENCE_METRIC = "confidence"


def _flat(v: Any) -> list[Any]:
    return [repr(x) for x in v] if isinstance(v, list) else [repr(v)]


def confidence(
    rng: np.random.Generator, given: Mapping[str, Any], exact: Mapping[str, Any], how: Mapping[str, float]
) -> float:
    """A judge's stated confidence in [0.05, 0.99], two decimals: ``base + calibration x (a -
    0.5) + N(0, noise)``, ``a`` the share of the judge's answers (each element of a repeated
    question, each checklist as a whole) equal to the hidden truth's. ``calibration`` 0: a
    confidence that says nothing about being right (an overconfident judge: a high ``base``)."""
    pairs = [(x, y) for q, v in given.items() if q in exact for x, y in zip(_flat(v), _flat(exact[q]), strict=False)]
    a = sum(x == y for x, y in pairs) / len(pairs) if pairs else 0.5
    c = float(how.get("base", 0.7)) + float(how.get("calibration", 0.4)) * (a - 0.5)
    c += float(rng.normal(scale=float(how.get("noise", 0.08))))
    return round(min(max(c, 0.05), 0.99), 2)
