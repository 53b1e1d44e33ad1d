"""Judge bias checks end to end: judges asked in both orders and in two passes through the
OpenAI-compatible backend (a loopback server answering as a scripted judge), the stored outputs
(swapped answers mapped back, the rating from the original order), and the checks on the run
page and in the API, against independent computations (scipy, the krippendorff package)."""

from __future__ import annotations

import functools
import json
import re

import krippendorff
import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from annotate import annotating
from annotation.models import Annotation, Assignment
from annotation.projects import rater_for_user
from benchmarks.registry import get_preset
from core.errors import DomainError
from judges import configuration, execution, runs
from judges.models import JudgeConfig, JudgeOutput, JudgeRun
from tests.annotation.factories import make_project, make_user

from .chat_server import ChatServer
from .helpers import project_with_demo

pytestmark = pytest.mark.django_db
FAST = {"backoff_s": 0.01, "max_backoff_s": 0.05, "timeout_s": 5, "max_retries": 1}
TOL = 1e-9


def run_all(run: JudgeRun) -> JudgeRun:
    for start in range(0, len(run.item_ids), run.chunk_size):
        execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids[start : start + run.chunk_size])
    run.refresh_from_db()
    return run


def start(config, capture, **kw) -> JudgeRun:
    with capture(execute=False):
        return runs.start_judge_run(config=config, **kw)


def user_text(body) -> str:
    return json.dumps(body["messages"][-1]["content"], ensure_ascii=False)


def turing_texts(project) -> list[tuple[str, str]]:
    return [(it.data["human_utterance"], it.data["model_utterance"]) for it in project.items.order_by("id")]


def escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


# ------------------------------------------------------------------------------ Turing pairs
def test_a_judge_that_always_picks_the_first_shown_is_caught(
    client, researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo("cqbench.turing", researcher, tmp_path)
    n = project.items.count()
    pairs = turing_texts(project)
    with ChatServer(responder=lambda body: '{"human_written": "left"}') as server:
        config = configuration.create_judge_config(
            project=project,
            name="first",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, **FAST},
            passes=2,
            both_orders=True,
        )
        assert config.questions == ["human_written"] and config.rater.parameters["both_orders"] is True
        run = run_all(start(config, django_capture_on_commit_callbacks))
        requests = [user_text(r["body"]) for r in server.requests]
    assert run.status == "done"
    # each item asked twice per order, through the same backend; the swapped prompt shows the
    # model's utterance first, and no prompt names which field is the human one
    assert len(requests) == 4 * n
    first_shown = []
    for text in requests:
        (h, m) = next((h, m) for h, m in pairs if escaped(h) in text)
        first_shown.append("human" if text.index(escaped(h)) < text.index(escaped(m)) else "model")
        assert "human_utterance" not in text and "model_utterance" not in text
    assert first_shown.count("human") == first_shown.count("model") == 2 * n
    outputs = JudgeOutput.objects.filter(run=run)
    assert outputs.count() == 4 * n
    assert {(o.order, o.pass_index) for o in outputs} == {(a, p) for a in ("original", "swapped") for p in (0, 1)}
    # stored in the item's own order: "left" of the swapped pair was the model's utterance
    for o in outputs:
        assert json.loads(o.raw_output) == {"human_written": "left"}
        assert o.parsed == {"human_written": "left" if o.order == "original" else "right"}
    # the rating: the original order only
    assert {a.answers["human_written"] for a in Annotation.objects.filter(rater=config.rater)} == {"left"}
    assert Annotation.objects.filter(rater=config.rater).count() == n

    client.force_login(researcher)
    data = client.get(reverse("api_judge_run", args=[run.id])).json()
    pos = data["bias"]["position"]
    assert pos["verdict"] == ["human_written"]
    assert pos["consistency"]["value"] == 0.0 and pos["consistency"]["first_both"] == n
    assert pos["consistency"]["ci"] == [0.0, 0.0] and pos["consistency"]["n_missing"] == 0
    rate = pos["first_position_rate"]
    assert rate["value"] == 1.0 and rate["n_first"] == 2 * n and rate["n_ties"] == 0
    assert rate["p_value"] == pytest.approx(stats.binomtest(2 * n, 2 * n, 0.5).pvalue, abs=TOL)
    [stab] = data["bias"]["stability"]
    assert stab["question"] == "human_written" and stab["percent_agreement"]["value"] == 1.0
    assert stab["krippendorff_alpha"]["value"] is None  # one answer throughout: undefined, not 1
    assert data["bias"]["verbosity"] is None  # no score to correlate with length
    page = client.get(reverse("judge_run", args=[project.id, run.id])).content.decode()
    assert "Bias checks" in page and 'data-testid="position-consistency">0.000<' in page
    assert 'data-testid="first-position-rate">1.000<' in page and "swapped" in page


def test_a_judge_that_knows_the_human_is_consistent_and_its_passes_are_compared(
    client, researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo("cqbench.turing", researcher, tmp_path)
    n = project.items.count()
    pairs = turing_texts(project)
    shaky = pairs[0][0]  # in its second pass the judge calls this pair a tie

    def truthful(body):
        text = user_text(body)
        h, m = next((h, m) for h, m in pairs if escaped(h) in text)
        if body.get("seed") == 1 and h == shaky:
            return '{"human_written": "tie"}'
        return json.dumps({"human_written": "left" if text.index(escaped(h)) < text.index(escaped(m)) else "right"})

    with ChatServer(responder=truthful) as server:
        config = configuration.create_judge_config(
            project=project,
            name="truthful",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, "seed": 0, **FAST},
            passes=2,
            combine="majority",
            both_orders=True,
        )
        run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "done"
    # every stored answer in the item's order names the human utterance, but the shaky pass
    swapped = JudgeOutput.objects.filter(run=run, order="swapped", pass_index=0)
    assert {o.parsed["human_written"] for o in swapped} == {"left"}
    client.force_login(researcher)
    data = client.get(reverse("api_judge_run", args=[run.id])).json()["bias"]
    assert data["position"]["consistency"]["value"] == 1.0
    rate = data["position"]["first_position_rate"]
    assert rate["value"] == 0.5 and rate["p_value"] == pytest.approx(1.0, abs=TOL)
    # pass stability against the krippendorff package on the stored original-order answers
    codes = {"left": 0, "right": 1, "tie": 2}
    X = np.full((n, 2), np.nan)
    ids = list(run.item_ids)
    for o in JudgeOutput.objects.filter(run=run, order="original"):
        X[ids.index(o.item_id), o.pass_index] = codes[o.parsed["human_written"]]
    [stab] = data["stability"]
    assert stab["percent_agreement"]["value"] == pytest.approx((n - 1) / n, abs=TOL)
    expected = krippendorff.alpha(reliability_data=X.T, level_of_measurement="nominal")
    assert stab["krippendorff_alpha"]["value"] == pytest.approx(expected, abs=TOL)
    assert stab["level"] == "nominal"


# ------------------------------------------------------------------------------ ValueGround A/B
def test_valueground_pairs_swap_images_and_options_and_map_q1_q2_back(
    client, researcher, tmp_path, django_capture_on_commit_callbacks
):
    project = project_with_demo("valueground.pair_quality", researcher, tmp_path)
    n = project.items.count()
    answer = '{"q1": 2, "q2": 0, "q3": 2, "q4": 1}'  # always prefers the image shown first
    with ChatServer(responder=lambda body: answer) as server:
        config = configuration.create_judge_config(
            project=project,
            name="vlm",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, **FAST},
            both_orders=True,
        )
        run = run_all(start(config, django_capture_on_commit_callbacks))
        sent = [r["body"]["messages"][-1]["content"] for r in server.requests]
    assert run.status == "done" and len(sent) == 2 * n
    options = {(it.data["option_a"], it.data["option_b"]) for it in project.items.all()}
    seen: dict[str, list[tuple[str, ...]]] = {"original": [], "swapped": []}
    for content in sent:
        text = content[0]["text"]
        images = tuple(p["image_url"]["url"] for p in content if p["type"] == "image_url")
        assert len(images) == 2
        # in either order the first image shown is named Image A (judges/prompts.image_labels)
        assert [p["text"] for p in content[1:] if p["type"] == "text"] == ["Image A:", "Image B:"]
        shown = re.search(r"Option A: (.*?) / Option B: (.*?)$", text, re.M).groups()
        kind = "original" if shown in options else "swapped"
        assert kind == "original" or shown[::-1] in options
        seen[kind].append(images)
    assert len(seen["original"]) == len(seen["swapped"]) == n
    # the images swapped with the options
    assert sorted(seen["swapped"]) == sorted(i[::-1] for i in seen["original"])
    for o in JudgeOutput.objects.filter(run=run):
        expected = {"q1": 2, "q2": 0} if o.order == "original" else {"q1": 0, "q2": 2}
        assert o.parsed == {**expected, "q3": 2, "q4": 1}
    assert all(a.answers["q1"] == 2 for a in Annotation.objects.filter(rater=config.rater))
    client.force_login(researcher)
    data = client.get(reverse("api_judge_run", args=[run.id])).json()["bias"]
    assert data["position"]["verdict"] == ["q1", "q2"]
    assert data["position"]["consistency"]["value"] == 0.0
    assert data["position"]["first_position_rate"]["value"] == 1.0
    assert data["stability"] is None and data["verbosity"] is None


def test_a_judge_that_calls_the_longer_text_human_is_shown_beside_the_humans(
    client, researcher, tmp_path, django_capture_on_commit_callbacks
):
    from statsmodels.stats.proportion import proportion_confint

    project = project_with_demo("cqbench.turing", researcher, tmp_path)
    items = list(project.items.order_by("id"))
    pairs = turing_texts(project)
    assert all(len(h) != len(m) for h, m in pairs)

    def longer_is_human(body):  # names whichever utterance is longer, wherever it is shown
        text = user_text(body)
        h, m = next((h, m) for h, m in pairs if escaped(h) in text)
        longer = h if len(h) > len(m) else m
        shorter = m if longer is h else h
        return json.dumps(
            {"human_written": "left" if text.index(escaped(longer)) < text.index(escaped(shorter)) else "right"}
        )

    # two humans: one always picks the side shown left, which alternates between the items
    human_choice = {}
    for k, rater in enumerate(rater_for_user(make_user(f"t{k}")) for k in range(2)):
        for j, it in enumerate(items):
            order = ["human_utterance", "model_utterance"] if (j + k) % 2 else ["model_utterance", "human_utterance"]
            shown = {"pair_order": {"human_written": order}}
            a = Assignment.objects.create(project=project, item=it, rater=rater, presentation=shown)
            side = "left" if k == 0 else ("right" if j % 3 else "tie")
            annotating.submit_annotation(assignment_id=a.id, rater=rater, answers={"human_written": side})
            human_choice[(k, it.id)] = None if side == "tie" else order[0 if side == "left" else 1]

    with ChatServer(responder=longer_is_human) as server:
        config = configuration.create_judge_config(
            project=project,
            name="longer",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, **FAST},
        )
        run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "done"
    client.force_login(researcher)
    data = client.get(reverse("api_judge_run", args=[run.id])).json()["bias"]
    [row] = data["length_choice"]["questions"]
    assert row["question"] == "human_written" and row["pair"] == ["human_utterance", "model_utterance"]
    judge = row["judge"]
    assert judge["value"] == 1.0 and judge["n_longer"] == judge["n_items"] == len(items)
    assert judge["p_value"] == pytest.approx(stats.binomtest(len(items), len(items), 0.5).pvalue, abs=TOL)

    def longer(it) -> str:
        return (
            "human_utterance"
            if len(it.data["human_utterance"]) > len(it.data["model_utterance"])
            else "model_utterance"
        )

    picks = [human_choice[(k, it.id)] == longer(it) for k in range(2) for it in items if human_choice[(k, it.id)]]
    humans = row["humans"]
    assert humans["n_items"] == len(picks) and humans["n_longer"] == sum(picks)
    assert humans["n_left_out"] == 2 * len(items) - len(picks)  # the ties
    assert humans["value"] == pytest.approx(sum(picks) / len(picks), abs=TOL)
    lo, hi = proportion_confint(sum(picks), len(picks), alpha=0.05, method="beta")
    assert humans["ci"] == [pytest.approx(lo, abs=1e-10), pytest.approx(hi, abs=1e-10)]
    assert humans["p_value"] == pytest.approx(stats.binomtest(sum(picks), len(picks), 0.5).pvalue, abs=TOL)
    page = client.get(reverse("judge_run", args=[project.id, run.id])).content.decode()
    assert 'data-testid="bias-length-choice"' in page
    assert 'data-testid="length-choice-judge">1.000' in page


# ------------------------------------------------------------------------------ verbosity
def test_verbosity_of_a_story_judge_beside_the_humans(
    client, researcher, tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    project = project_with_demo("cqbench.story", researcher, tmp_path)
    preset = get_preset("cqbench.story")
    items = list(project.items.order_by("id"))
    by_length = sorted(items, key=lambda it: len(it.data["story"]))
    judge_score = {it.data["story"]: 1 + k % 5 for k, it in enumerate(by_length)}  # a length-loving judge
    humans = [rater_for_user(make_user(f"h{k}")) for k in range(2)]
    human_scores: dict[int, list[int]] = {}
    for it in items:
        demo = preset.demo_answers.get(it.external_id)
        if demo is None:
            continue  # an item the humans did not rate: left out of both correlations
        for rater, answers in zip(humans, demo, strict=True):
            a = Assignment.objects.create(project=project, item=it, rater=rater, presentation={})
            annotating.submit_annotation(assignment_id=a.id, rater=rater, answers=answers)
            human_scores.setdefault(it.id, []).append(answers["naturalness"])

    def responder(body):
        text = user_text(body)
        story = next(s for s in judge_score if escaped(s)[:80] in text)
        schema = body["response_format"]["json_schema"]["schema"]["properties"]
        out = {
            k: [p["items"]["enum"][-1]] * p["minItems"] if p.get("type") == "array" else p["enum"][-1]
            for k, p in schema.items()
        }
        out["naturalness"] = judge_score[story]
        return json.dumps(out)

    with ChatServer(responder=responder) as server:
        config = configuration.create_judge_config(
            project=project,
            name="llm",
            backend="openai_chat",
            model_id="m",
            params={"base_url": server.base_url, **FAST},
        )
        run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "done"
    client.force_login(researcher)
    data = client.get(reverse("api_judge_run", args=[run.id])).json()["bias"]
    assert data["position"] is None and data["stability"] is None
    [nat] = [q for q in data["verbosity"]["questions"] if q["question"] == "naturalness"]
    rated = [it for it in items if it.id in human_scores]
    lengths = [len(it.data["story"]) for it in rated]
    judge = [judge_score[it.data["story"]] for it in rated]
    human_mean = [np.mean(human_scores[it.id]) for it in rated]
    assert nat["n_items"] == len(rated) == 5
    assert nat["judge"]["value"] == pytest.approx(stats.spearmanr(lengths, judge).statistic, abs=TOL)
    assert nat["humans"]["value"] == pytest.approx(stats.spearmanr(lengths, human_mean).statistic, abs=TOL)
    assert nat["difference"]["value"] == pytest.approx(nat["judge"]["value"] - nat["humans"]["value"], abs=TOL)
    page = client.get(reverse("judge_run", args=[project.id, run.id])).content.decode()
    assert 'data-testid="bias-verbosity"' in page and "Position (both orders)" not in page

    # the bootstrap is computed once per set of inputs: visits are served from the cache, and a
    # new human answer (new inputs) is computed afresh, never served stale
    from hvstats import bias as bias_stats

    computed = []
    real = bias_stats.verbosity

    @functools.wraps(real)  # the same statistic, counted
    def counted(*a, **k):
        computed.append(1)
        return real(*a, **k)

    monkeypatch.setattr(bias_stats, "verbosity", counted)
    again = client.get(reverse("api_judge_run", args=[run.id])).json()["bias"]
    assert again == data and computed == []
    third = rater_for_user(make_user("h2"))
    first = rated[0]
    a = Assignment.objects.create(project=project, item=first, rater=third, presentation={})
    low = {**preset.demo_answers[first.external_id][0], "naturalness": 1}
    annotating.submit_annotation(assignment_id=a.id, rater=third, answers=low)
    human_scores[first.id].append(1)
    fresh = client.get(reverse("api_judge_run", args=[run.id])).json()["bias"]
    [nat2] = [q for q in fresh["verbosity"]["questions"] if q["question"] == "naturalness"]
    assert computed  # new inputs: computed afresh
    human_mean = [np.mean(human_scores[it.id]) for it in rated]
    assert nat2["humans"]["value"] == pytest.approx(stats.spearmanr(lengths, human_mean).statistic, abs=TOL)


# ------------------------------------------------------------------------------ configuration
def test_both_orders_and_passes_are_validated_and_nothing_is_stored(researcher, tmp_path):
    story = project_with_demo("cqbench.story", researcher, tmp_path)
    turing = project_with_demo("cqbench.turing", researcher, tmp_path)
    params = {"base_url": "http://127.0.0.1:9/v1"}
    cases = [
        (story, {"both_orders": True}, "pairwise protocols only"),
        (turing, {"passes": 0}, "between 1 and 20"),
        (turing, {"passes": 21}, "between 1 and 20"),
        (turing, {"passes": "2"}, "whole number"),
        (turing, {"both_orders": "yes"}, "true or false"),
    ]
    for project, kw, message in cases:
        with pytest.raises(DomainError, match=message):
            configuration.create_judge_config(
                project=project, name="j", backend="openai_chat", model_id="m", params=params, **kw
            )
    vg = project_with_demo("valueground.pair_quality", researcher, tmp_path)
    with pytest.raises(DomainError, match="must answer q1, q2"):
        configuration.create_judge_config(
            project=vg,
            name="j",
            backend="openai_chat",
            model_id="m",
            params=params,
            questions=["q1", "q3"],
            both_orders=True,
        )
    a = configuration.create_judge_config(project=turing, name="a", backend="openai_chat", model_id="m", params=params)
    b = configuration.create_judge_config(project=turing, name="b", backend="openai_chat", model_id="m", params=params)
    with pytest.raises(DomainError, match="ensemble"):
        configuration.create_judge_config(
            project=turing, name="e", backend="ensemble", members=[a, b], both_orders=True
        )
    assert JudgeConfig.objects.filter(name__in=["j", "e"]).count() == 0


def test_the_form_offers_both_orders_for_pairwise_presets_only_and_the_api_validates(client, researcher, tmp_path):
    story = project_with_demo("cqbench.story", researcher, tmp_path)
    turing = project_with_demo("cqbench.turing", researcher, tmp_path)
    client.force_login(researcher)
    assert 'name="both_orders"' in client.get(reverse("judges", args=[turing.id])).content.decode()
    assert 'name="both_orders"' not in client.get(reverse("judges", args=[story.id])).content.decode()
    body = {"name": "j", "backend": "openai_chat", "model_id": "m", "params": {"base_url": "http://127.0.0.1:9/v1"}}
    r = client.post(
        reverse("api_judges", args=[story.id]), {**body, "both_orders": True}, content_type="application/json"
    )
    assert r.status_code == 400 and "pairwise" in json.dumps(r.json())
    r = client.post(reverse("api_judges", args=[turing.id]), {**body, "passes": 0}, content_type="application/json")
    assert r.status_code == 400
    assert not JudgeConfig.objects.exists()
    r = client.post(
        reverse("api_judges", args=[turing.id]),
        {**body, "both_orders": True, "passes": 2},
        content_type="application/json",
    )
    assert r.status_code == 201 and r.json()["both_orders"] is True and r.json()["passes"] == 2


def test_only_the_projects_researchers_see_the_bias_checks(client, researcher, annotator, tmp_path):
    project = project_with_demo("cqbench.turing", researcher, tmp_path, annotators=[annotator])
    config = configuration.create_judge_config(
        project=project,
        name="j",
        backend="openai_chat",
        model_id="m",
        params={"base_url": "http://127.0.0.1:9/v1"},
        both_orders=True,
    )
    run = runs.start_judge_run(config=config)
    other = make_user("res2", researcher=True)
    make_project("cqbench.turing", owner=other, name="theirs")
    for user, page_code, api_code in ((annotator, 403, 404), (other, 404, 404)):
        client.force_login(user)
        assert client.get(reverse("judge_run", args=[project.id, run.id])).status_code == page_code
        assert client.get(reverse("api_judge_run", args=[run.id])).status_code == api_code
    client.force_login(researcher)
    r = client.get(reverse("api_judge_run", args=[run.id]))
    # nothing judged yet: the checks are there, undefined with the reason
    assert r.status_code == 200
    assert r.json()["bias"]["position"]["consistency"]["value"] is None
    assert "both orders" in r.json()["bias"]["position"]["consistency"]["reason"]
