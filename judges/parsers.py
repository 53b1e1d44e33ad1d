"""Output contracts of the judges: turn a model's text into rubric answers, or say why not.
A parse failure is a ``ParseError`` whose message is stored next to the raw output."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from annotation.rubric import Question, Rubric
from core.values import loads


class ParseError(ValueError):
    pass


# CULTIVate Tables 29-31: "score is <num>" (the paper prints it as `< num >`).
_SCORE_IS = re.compile(r"score\s+is\s*[:=]?\s*<?\s*(-?\d+(?:\.\d+)?)\s*>?", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_score_is(text: str, q: Question) -> dict[str, Any]:
    found = _SCORE_IS.findall(text or "")
    if not found:
        raise ParseError(f'no "score is <num>" in the reply for {q.id}')
    values = {float(v) for v in found}
    if len(values) > 1:
        raise ParseError(f"the reply gives different scores for {q.id}: {', '.join(sorted(found))}")
    value = values.pop()
    if value != int(value) or int(value) not in q.option_values():
        raise ParseError(f"score {found[0]} is not one of {', '.join(map(str, q.option_values()))} for {q.id}")
    return {q.id: int(value)}


def _coerce(q: Question, v: Any) -> Any:
    """Lenient typing of model JSON: "2" or 2.0 for a scale point, a label for a choice."""
    if isinstance(v, list) and (q.repeat_over or q.type == "checklist"):
        if q.repeat_over:
            return [_coerce_one(q, x) for x in v]
        return [_coerce_one(q, x) for x in v]
    return _coerce_one(q, v)


def _coerce_one(q: Question, v: Any) -> Any:
    if q.type in ("scale", "binary"):
        if isinstance(v, str) and re.fullmatch(r"\s*-?\d+(\.0+)?\s*", v):
            return int(float(v))
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, bool):
            return int(v) if q.type == "binary" else v
    if q.type in ("choice", "checklist") and isinstance(v, str):
        for o in q.options:
            if v.strip().lower() in (str(o.value).lower(), o.label.lower()):
                return o.value
    return v


def parse_json(text: str, rubric: Rubric, questions: Sequence[str]) -> dict[str, Any]:
    raw = (text or "").strip()
    fenced = _FENCE.search(raw)
    if fenced:
        raw = fenced.group(1).strip()
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        raise ParseError("no JSON object in the reply")
    try:
        data = loads(raw[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON ({exc.msg}: column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ParseError("the JSON reply is not an object")
    missing = [q for q in questions if q not in data]
    if missing:
        raise ParseError(f"the JSON reply lacks {', '.join(missing)}")
    return {qid: _coerce(rubric.question(qid), data[qid]) for qid in questions}


def _norm(s: str) -> str:
    return re.sub(r"[\s\"'`.\[\]]+", " ", s).strip().lower()


def parse_choice(text: str, choices: Sequence[str]) -> str:
    """One label from a closed list (Cultural Counterfactuals Table 3: "Answer only with one of
    the following choices"). Exact match after trimming quotes and punctuation; otherwise the
    single choice named in the reply; anything else is a parse failure."""
    said = _norm(text or "")
    if not said:
        raise ParseError("empty reply")
    for c in choices:
        if said == _norm(c):
            return c
    named = [c for c in choices if re.search(rf"(?<![a-z]){re.escape(_norm(c))}(?![a-z])", said)]
    # "middle income" also contains "income": prefer the longest, drop choices inside others
    named = [c for c in named if not any(c != d and _norm(c) in _norm(d) for d in named)]
    if len(named) == 1:
        return named[0]
    if not named:
        raise ParseError(f"the reply is not one of: {', '.join(choices)}")
    raise ParseError(f"the reply names several choices: {', '.join(named)}")


# Zheng et al. (NeurIPS 2023), MT-Bench / Chatbot Arena, Fig. 5: the pairwise judge ends its reply
# with "[[A]]" (assistant A, shown first, is better), "[[B]]" or "[[C]]" (a tie).
_PAIR_VERDICT = re.compile(r"\[\[\s*(A|B|C|tie)\s*\]\]", re.IGNORECASE)
PAIR_VERDICTS = {"a": "left", "b": "right", "c": "tie", "tie": "tie"}


def parse_pair_verdict(text: str, q: Question) -> dict[str, Any] | None:
    """The MT-Bench verdict of a reply to a pairwise question, as the side shown (``left`` for
    [[A]], ``right`` for [[B]], ``tie`` for [[C]]); None when the reply gives none (another
    contract may still read it). A reply that gives two different verdicts is a parse failure,
    as is a tie where the question allows none."""
    found = {PAIR_VERDICTS[m.lower()] for m in _PAIR_VERDICT.findall(text or "")}
    if not found:
        return None
    if len(found) > 1:
        raise ParseError(f"the reply gives several verdicts for {q.id}: {', '.join(sorted(found))}")
    side = found.pop()
    if side not in q.option_values():
        raise ParseError(f"{q.id} allows no tie, and the reply says [[C]]")
    return {q.id: side}


def parse_question_choice(text: str, q: Question) -> dict[str, Any]:
    """A closed-choice answer to a rubric question (choice / binary / scale / pairwise): the option
    value or its label; for a pairwise question also the MT-Bench verdict ([[A]] / [[B]] / [[C]])."""
    if q.type == "pairwise":
        verdict = parse_pair_verdict(text, q)
        if verdict is not None:
            return verdict
    labels = {o.label: o.value for o in q.options}
    values = {str(o.value): o.value for o in q.options}
    picked = parse_choice(text, list(values) + [lbl for lbl in labels if lbl not in values])
    return {q.id: values.get(picked, labels.get(picked))}


def parse_label(text: str, labels: Sequence[str]) -> str:
    """A label judge's answer (Cultural Counterfactuals App. D.1: structured JSON with exactly
    one of ``refused`` / ``answered``): ``{"label": "refused"}``, or the bare label."""
    raw = (text or "").strip()
    fenced = _FENCE.search(raw)
    if fenced:
        raw = fenced.group(1).strip()
    if raw.startswith("{"):
        try:
            data = loads(raw)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON ({exc.msg}: column {exc.colno})") from None
        if not isinstance(data, dict) or not isinstance(data.get("label"), str):
            raise ParseError('the JSON reply has no "label"')
        raw = data["label"]
    return parse_choice(raw, labels)


# ---------------------------------------------------------------------- per-value verdicts
# CQ-Bench App. D gives its validation and grading prompts their own output contracts, each a
# verdict per value of a list the prompt was given ("Only output the exact and comprehensive
# value including "-" within it, do not rephrase!"). The readers below find each value by its
# text (case, dashes, brackets and punctuation aside) and return one verdict per value, in the
# order of ``values``: each value as its parts, e.g. ("Work is a duty towards society", "agree"),
# written "statement-attitude" as the paper's "[culture]-[value]".
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
# what may stand before a value at the start of its line: "1.", "V1:", "Value 1 -", "[Value]:"
_LEAD = re.compile(r"^(?:(?:value|v|ground truth)?\s*\d*[\s-]*)$")
_NOTHING = r"(?:none|no|n a|na|nil|null|blank|empty|nothing|not applicable|left blank|leave blank|no values?)"
# "Values not reflected:" left blank, or saying there are none
_NONE_MISSING = re.compile(
    rf"^(?:{_NOTHING}\b\s*)*(?:all (?:the |five |5 )?values (?:are )?reflected(?: in the story)?)?$"
)
# "If there isn't a contradiction, just reply NO"
_NONE_CONTRADICTED = re.compile(
    rf"^(?:{_NOTHING}|(?:there (?:is|are) )?no contradictions?(?: found| in the story)?"
    r"|all (?:the )?speeches are aligned(?: with the values?)?)$"
)


def _canon(text: str) -> str:
    """Lower case, one kind of dash, no brackets, quotes, asterisks or punctuation, one space."""
    s = _DASHES.sub("-", (text or "").lower())
    s = re.sub(r"[^\w\s-]+|_", " ", s)
    s = re.sub(r"\s*-+\s*", "-", s)
    return re.sub(r"\s+", " ", s).strip(" -")


def value_text(parts: Sequence[str]) -> str:
    """A value as the paper writes it in a prompt: "[culture]-[value]" (statement-attitude)."""
    return "-".join(str(p) for p in parts)


def _value_keys(values: Sequence[Sequence[str]]) -> list[list[str]]:
    """The texts each value may be named by: the whole value, then its statement alone where
    no other value shares that statement (a model may drop the attitude it was given)."""
    statements = [_canon(str(v[0])) for v in values]
    keys = []
    for v, st in zip(values, statements, strict=True):
        whole = _canon(value_text(v))
        keys.append([whole] + ([st] if len(v) > 1 and st and statements.count(st) == 1 else []))
    return keys


def _named_at_start(line: str, keys: list[list[str]]) -> tuple[int, int] | None:
    """(value index, end of its name in ``line``) of the value a canonical line opens with."""
    best: tuple[int, int, int] | None = None  # (length, index, end)
    for i, ks in enumerate(keys):
        for k in ks:
            at = line.find(k) if k else -1
            if at >= 0 and _LEAD.match(line[:at]) and (at + len(k) == len(line) or not line[at + len(k)].isalnum()):
                if best is None or len(k) > best[0]:
                    best = (len(k), i, at + len(k))
                break
    return None if best is None else (best[1], best[2])


def _last_section(lines: list[str], header: str) -> tuple[int, str] | None:
    """(line index, the rest of that line) of the last line opening with ``header`` (canonical)."""
    for n in range(len(lines) - 1, -1, -1):
        c = _canon(lines[n])
        if c.startswith(header) and (len(c) == len(header) or not c[len(header)].isalnum()):
            return n, c[len(header) :].strip(" -")
    return None


def _describe(values: Sequence[Sequence[str]], i: int) -> str:
    return f"V{i + 1} ({value_text(values[i])})"


def parse_values_reflected(text: str, values: Sequence[Sequence[str]]) -> list[int]:
    """CQ-Bench App. D "Incorporation check prompt": "For each value, output if the value is
    reflected and provide reasoning. In the end, output the values not reflected without the
    reasoning ... If all the values are reflected, just leave it blank. Follow the format:
    [Value]:[Reasoning, Yes/No] Values not reflected: [Value]".

    1 = reflected, 0 = not, per value. A value's verdict is the Yes / No that ends (or opens)
    the text after its name, up to the next value or the "Values not reflected" list; a value
    in that list is not reflected. Both must agree, every value needs a verdict, and the list
    may name only the story's values."""
    lines = (text or "").splitlines()
    if not _canon(text):
        raise ParseError("empty reply")
    keys = _value_keys(values)
    tail = _last_section(lines, "values not reflected")
    body = lines if tail is None else lines[: tail[0]]
    blocks: dict[int, list[str]] = {}
    current: int | None = None
    for line in body:
        c = _canon(line)
        named = _named_at_start(c, keys)
        if named is not None:
            current = named[0]
            blocks.setdefault(current, []).append(c[named[1] :])
        elif current is not None and c:
            blocks[current].append(c)
    verdicts: dict[int, int] = {}
    for i, parts in blocks.items():
        said = " ".join(p for p in parts if p).strip(" -")
        m = re.search(r"(?:^|\s)(yes|no)$", said) or re.match(r"^(yes|no)\b", said)
        if m is None:
            raise ParseError(f"no Yes/No verdict after {_describe(values, i)}")
        verdicts[i] = 1 if m.group(1) == "yes" else 0
    missing: set[int] = set()
    if tail is not None:
        listed = " ".join([tail[1], *(_canon(x) for x in lines[tail[0] + 1 :])]).strip()
        rest = listed
        for i, ks in enumerate(keys):
            for k in ks:
                if k and re.search(rf"(?<![\w-]){re.escape(k)}(?![\w])", rest):
                    missing.add(i)
                    rest = re.sub(rf"(?<![\w-]){re.escape(k)}(?![\w])", " ", rest)
                    break
        rest = re.sub(r"\b(?:and|value|values|v\d+|\d+)\b|-", " ", rest)
        rest = re.sub(r"\s+", " ", rest).strip()
        if rest and not _NONE_MISSING.match(rest):
            raise ParseError(f"'Values not reflected' names something that is none of the given values: {rest[:80]!r}")
    out = []
    for i in range(len(values)):
        if i in verdicts and tail is not None and (verdicts[i] == 0) != (i in missing):
            said = "Yes" if verdicts[i] else "No"
            where = "listed" if i in missing else "not listed"
            raise ParseError(f"{_describe(values, i)} is marked {said} but {where} under 'Values not reflected'")
        if i in verdicts:
            out.append(verdicts[i])
        elif i in missing:
            out.append(0)
        else:
            raise ParseError(f"no verdict for {_describe(values, i)}")
    return out


def parse_value_contradictions(text: str, values: Sequence[Sequence[str]]) -> list[int]:
    """CQ-Bench App. D "Consistency check prompt": "in the end, only output where is the
    contradiction one by one. If there isn't a contradiction, just reply NO ... Follow the
    format strictly ...: [Reasoning]: [Value-attitude]:[If all the speeches are aligned with the
    value] [Contradictions]: [Value-attitude]: [*character name*:speech]".

    1 = consistent (no character contradicts the value), 0 = a contradiction is reported, per
    value (the story rubric's B). Only the part after the last "[Contradictions]:" counts (the
    reasoning names every value); a reply that is just "NO" means no contradiction. Each
    contradiction must name one of the given values."""
    lines = (text or "").splitlines()
    if not _canon(text):
        raise ParseError("empty reply")
    keys = _value_keys(values)
    section = _last_section(lines, "contradictions")
    if section is None:
        if _NONE_CONTRADICTED.match(_canon(text)):
            return [1] * len(values)
        raise ParseError("no [Contradictions] section in the reply (and not a plain NO)")
    contradicted: set[int] = set()
    open_one = False
    for c in [section[1], *(_canon(x) for x in lines[section[0] + 1 :])]:
        if not c:
            continue
        named = _named_at_start(c, keys)
        if named is not None:
            said = c[named[1] :].strip(" -")
            open_one = not _NONE_CONTRADICTED.match(said)
            if open_one:
                contradicted.add(named[0])
        elif _NONE_CONTRADICTED.match(c):
            open_one = False
        elif not open_one:  # a speech may run over several lines; anything else is malformed
            raise ParseError(f"a contradiction names none of the given values: {c[:80]!r}")
    return [0 if i in contradicted else 1 for i in range(len(values))]


_GROUND_TRUTH = re.compile(r"ground\s*truth(?:\s*value)?\s*#?\s*(\d+)", re.IGNORECASE)
# "]:1", ": 0.5", "]: [0]", "]:1 (fully presented)": the score, then words at most
_SCORE = re.compile(r"^\s*\]?\s*[:=\-\u2013]?\s*\[?\s*(\d+(?:\.\d+)?|\.\d+)(?!\.?\d)([^\d]*)$")
GROUND_TRUTH_SCORES = (1.0, 0.5, 0.0)


def parse_ground_truth_scores(text: str, n_values: int) -> list[float]:
    """CQ-Bench App. D "LLM evaluation prompt" (value extraction, Sec. 4.1): "If the ground
    truth value is fully presented, score 1, if it is partially presented, score 0.5, if it is
    not mentioned at all, score 0 ... Return the results in this format: [Reasoning]: [Ground
    truth 1]: [reasoning] ..... [Final answer]: [Ground truth 1]:1 [Ground truth 2]:0.5 .....".

    The score S(v_i, V^) of each ground-truth value, in order, from the part after the last
    "[Final answer]:" (the reasoning names every ground truth too): each of the ``n_values``
    scored exactly once, with 1, 0.5 or 0."""
    lines = (text or "").splitlines()
    if not _canon(text):
        raise ParseError("empty reply")
    at = None
    for n in range(len(lines) - 1, -1, -1):
        if re.search(r"final\s*answer", lines[n], re.IGNORECASE):
            at = n
            break
    if at is None:
        raise ParseError("no [Final answer] section in the reply")
    head = re.split(r"final\s*answer", lines[at], maxsplit=1, flags=re.IGNORECASE)[1]
    scores: dict[int, float] = {}
    for line in [head, *lines[at + 1 :]]:
        found = list(_GROUND_TRUTH.finditer(line))
        if not found:
            continue
        for k, m in enumerate(found):  # several on one line: "[Ground truth 1]:1 [Ground truth 2]:0.5"
            n = int(m.group(1))
            stop = found[k + 1].start() if k + 1 < len(found) else len(line)
            s = _SCORE.match(line[m.end() : stop])
            if s is None:
                raise ParseError(f"no score 1, 0.5 or 0 for ground truth {n}: {line.strip()[:80]!r}")
            score = float(s.group(1))
            if score not in GROUND_TRUTH_SCORES:
                raise ParseError(f"ground truth {n} is scored {s.group(1)}, not 1, 0.5 or 0")
            if not 1 <= n <= n_values:
                raise ParseError(f"ground truth {n} is not one of the {n_values} ground-truth values")
            if n in scores and scores[n] != score:
                raise ParseError(f"ground truth {n} is scored twice, differently")
            scores[n] = score
    missing = [str(n) for n in range(1, n_values + 1) if n not in scores]
    if missing:
        raise ParseError(f"the final answer scores no ground truth {', '.join(missing)}")
    return [scores[n] for n in range(1, n_values + 1)]
