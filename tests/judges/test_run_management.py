"""Runs you can manage (issue 13, point 5): a run limited to a design sample or a stratum; a
judge hidden (left out of every report, table, policy and export, shown again at will) or
deleted with everything it made; tokens per output and an estimated cost per run from the
researcher's prices; parse failures listed with the raw output."""

from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.urls import reverse

from agreement.selectors import (
    annotation_count,
    assignment_order,
    rater_profiles,
    ratings_frame,
    submitted_annotations,
)
from annotation.models import Annotation, Assignment, Item, Rater
from core.errors import DomainError
from curation.selectors import ratings_for
from judges import administration, configuration, runs, selectors
from judges import views as judge_views
from judges.models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun
from studies.sampling import draw_sample
from tests.annotation.factories import make_project, make_user

from .chat_server import ChatServer, usage_of
from .helpers import project_with_demo
from .test_judge_runs import FAST, run_all, start

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(researcher, tmp_path):
    # CULTIVate demo: 9 items, generator FLUX / Qwen-Image / Stable Diffusion 3.5 (3 each)
    return project_with_demo("cultivate.faithfulness", researcher, tmp_path)


def judge(project, server, name="mllm", **kw):
    return configuration.create_judge_config(
        project=project,
        name=name,
        backend="openai_chat",
        model_id="judge-model",
        params={"base_url": server.base_url, **FAST, **kw.pop("params", {})},
        **kw,
    )


def judged(project, server, capture, name="mllm", **kw):
    config = judge(project, server, name, **kw)
    run = run_all(start(config, capture))
    assert run.status == "done", run.message
    return config, run


# ------------------------------------------------------------------------------ tokens and cost
def test_tokens_are_stored_per_output_and_priced_per_run(project, django_capture_on_commit_callbacks):
    with ChatServer(score=4) as server:
        config, run = judged(project, server, django_capture_on_commit_callbacks, passes=2)
    outputs = list(JudgeOutput.objects.filter(run=run))
    assert len(outputs) == 2 * project.items.count()
    # each output sums the three per-question requests of its pass, as the server counted them
    expected_prompt = sum(usage_of(r["body"], "")["prompt_tokens"] for r in server.requests)
    assert sum(o.prompt_tokens for o in outputs) == expected_prompt > 0
    assert all(o.completion_tokens == 3 * len(["score", "is", "4"]) for o in outputs)
    usage = selectors.run_usage(run)
    assert usage["counted"] == usage["outputs"] == len(outputs)
    assert usage["prompt_tokens"] == expected_prompt
    assert usage["completion_tokens"] == 9 * len(outputs)
    # no price yet: no cost, and the page says what to do
    assert usage["cost"] is None and "set a price per 1M tokens on mllm" in usage["cost_note"]
    administration.set_judge_prices(config=config, prompt="2.5", completion=Decimal("10"))
    usage = selectors.run_usage(run)  # a price set after the run applies to it
    cost = (Decimal(expected_prompt) * Decimal("2.5") + Decimal(9 * len(outputs)) * 10) / Decimal(1_000_000)
    assert usage["cost"] == cost.quantize(Decimal("0.000001")) and usage["cost_note"] == ""


def test_an_endpoint_without_usage_gives_no_counts_and_no_cost(project, django_capture_on_commit_callbacks):
    with ChatServer(score=4, usage=False) as server:
        _, run = judged(
            project, server, django_capture_on_commit_callbacks, price_prompt_per_1m=1, price_completion_per_1m=2
        )
    assert not JudgeOutput.objects.filter(run=run, prompt_tokens__isnull=False).exists()
    usage = selectors.run_usage(run)
    assert usage["prompt_tokens"] is None and usage["cost"] is None and "no token counts" in usage["cost_note"]


def test_an_ensemble_is_priced_member_by_member(project, django_capture_on_commit_callbacks):
    with ChatServer(score=4) as server:
        a = judge(project, server, "a", price_prompt_per_1m=1, price_completion_per_1m=0)
        b = judge(project, server, "b")
        ens = configuration.create_judge_config(project=project, name="both", backend="ensemble", members=[a, b])
        run = run_all(start(ens, django_capture_on_commit_callbacks))
    assert run.status == "done", run.message
    usage = selectors.run_usage(run)
    assert usage["cost"] is None and usage["cost_note"] == "set a price per 1M tokens on b"
    administration.set_judge_prices(config=b, prompt=0, completion="1000")
    per_member = {
        m: (
            sum(o.prompt_tokens for o in JudgeOutput.objects.filter(run=run, member=m)),
            sum(o.completion_tokens for o in JudgeOutput.objects.filter(run=run, member=m)),
        )
        for m in (a, b)
    }
    expected = (Decimal(per_member[a][0]) * 1 + Decimal(per_member[b][1]) * 1000) / Decimal(1_000_000)
    assert selectors.run_usage(run)["cost"] == expected.quantize(Decimal("0.000001"))


@pytest.mark.parametrize(
    ("prompt", "completion", "message"),
    [
        ("1", None, "both prices"),
        (None, 3, "both prices"),
        ("-1", "1", "from 0"),
        ("1", "1000000", "from 0"),
        ("0.0000001", "1", "6 decimal places"),
        ("abc", "1", "must be a number"),
        (True, "1", "must be a number"),
        ("NaN", "1", "from 0"),
    ],
)
def test_bad_prices_are_refused_and_change_nothing(project, prompt, completion, message):
    with ChatServer() as server:
        config = judge(project, server, price_prompt_per_1m="0.5", price_completion_per_1m="1.5")
        with pytest.raises(DomainError, match=message):
            administration.set_judge_prices(config=config, prompt=prompt, completion=completion)
        with pytest.raises(DomainError, match=message):
            judge(project, server, "other", price_prompt_per_1m=prompt, price_completion_per_1m=completion)
    config.refresh_from_db()
    assert (config.price_prompt_per_1m, config.price_completion_per_1m) == (Decimal("0.5"), Decimal("1.5"))
    assert not JudgeConfig.objects.filter(name="other").exists()


# ------------------------------------------------------------------------------ parse failures
def test_parse_failures_are_listed_with_the_raw_output(
    project, client, researcher, django_capture_on_commit_callbacks, monkeypatch
):
    with ChatServer(responder=lambda body: "I would rather not grade this") as server:
        config = judge(project, server)
        run = run_all(start(config, django_capture_on_commit_callbacks))
    assert run.status == "failed"
    failures = list(selectors.run_failures(run))
    assert len(failures) == project.items.count()
    for f in failures:
        assert f.error.startswith("pass 1: parse failed")
        assert [o.pass_index for o in f.item.item_outputs] == [0]
        assert "I would rather not grade this" in f.item.item_outputs[0].raw_output
    client.force_login(researcher)
    page = client.get(reverse("judge_run", args=[project.id, run.id]))
    assert page.status_code == 200 and page.content.count(b'data-testid="failure-raw"') == len(failures)
    assert b"I would rather not grade this" in page.content
    assert b'data-testid="failures-more"' not in page.content  # all shown: nothing to say
    # more failures than the page lists: it says how many and where the rest are
    monkeypatch.setattr(judge_views, "FAILURES_SHOWN", 2)
    page = client.get(reverse("judge_run", args=[project.id, run.id])).content.decode()
    assert page.count('data-testid="failure-raw"') == 2
    assert f"The first 2 of {len(failures)} failed items" in page and 'href="?failures=1#answers"' in page
    api = client.get(reverse("api_judge_run_failures", args=[run.id]), {"limit": 2}).json()
    assert api["count"] == len(failures) and len(api["results"]) == 2
    first = api["results"][0]
    assert first["error"].startswith("pass 1: parse failed") and first["external_id"].startswith("cultivate-")
    assert "I would rather not grade this" in first["outputs"][0]["raw_output"]
    assert first["outputs"][0]["error"].startswith("parse failed")
    # tokens are counted for failed outputs too: they were paid for
    assert selectors.run_usage(run)["counted"] == len(failures)


# ------------------------------------------------------------------------------ scope
def test_a_run_limited_to_a_design_sample_a_stratum_or_both(project, researcher, django_capture_on_commit_callbacks):
    sample = draw_sample(project=project, name="paper", strata_keys=["generator"], per_stratum=2, seed=3)
    in_sample = sorted(sample.items.values_list("id", flat=True))
    flux = sorted(project.items.filter(generator="FLUX").values_list("id", flat=True))
    with ChatServer() as server:
        config = judge(project, server)
    run = start(config, django_capture_on_commit_callbacks, sample_id=sample.id)
    assert run.item_ids == in_sample and len(in_sample) == 6
    assert run.sample_id == sample.id and run.scope == "sample 'paper'"
    run = start(config, django_capture_on_commit_callbacks, stratum={"generator": "FLUX"})
    assert run.item_ids == flux and run.stratum == {"generator": "FLUX"} and run.scope == "stratum generator = FLUX"
    run = start(config, django_capture_on_commit_callbacks, sample_id=sample.id, stratum={"generator": "FLUX"})
    assert run.item_ids == sorted(set(in_sample) & set(flux)) and len(run.item_ids) == 2
    assert run.scope == "sample 'paper' · stratum generator = FLUX"
    # meta keys too, and a random subset of the scope after it
    Item.objects.filter(pk__in=flux[:2]).update(meta={"batch": "b1"})
    run = start(config, django_capture_on_commit_callbacks, stratum={"meta.batch": "b1"})
    assert run.item_ids == flux[:2] and run.stratum == {"batch": "b1"}
    run = start(config, django_capture_on_commit_callbacks, stratum={"batch": ""}, sample_size=3, seed=1)
    assert len(run.item_ids) == 3 and set(run.item_ids) <= set(project.items.values_list("id", flat=True)) - set(
        flux[:2]
    )
    assert run.scope == "stratum batch = (blank) · random 3 of 7 (seed 1)"


def test_a_rerun_says_what_it_covers(project, django_capture_on_commit_callbacks):
    with ChatServer(score=4) as server:
        config = judge(project, server)
        run = start(config, django_capture_on_commit_callbacks, stratum={"generator": "FLUX"})
        runs.cancel_judge_run(run=run)
        with django_capture_on_commit_callbacks(execute=False):
            again = runs.rerun_failed_items(run=run)
    assert again.scope == f"failed or unjudged items of run {run.id} (stratum generator = FLUX)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sample_id": 999999}, "no sample 999999"),
        ({"sample_id": "1"}, "by its id"),
        ({"stratum": {"generator": "DALL-E"}}, "no item of this project is in stratum generator = DALL-E"),
        ({"stratum": {"bad key!": "x"}}, "invalid stratum key"),
        ({"stratum": {"generator": ["FLUX"]}}, "must be text"),
        ({"stratum": {"generator": "x" * 301}}, "over 300"),
        ({"stratum": ["generator"]}, "a stratum is"),
        ({"stratum": {f"k{i}": "v" for i in range(11)}}, "at most 10 keys"),
        ({"stratum": {"generator": "FLUX"}, "item_ids": [1]}, "not both"),
    ],
)
def test_a_bad_scope_is_refused_and_starts_nothing(project, kwargs, message, django_capture_on_commit_callbacks):
    with ChatServer() as server:
        config = judge(project, server)
    with pytest.raises(DomainError, match=message):
        start(config, django_capture_on_commit_callbacks, **kwargs)
    assert not JudgeRun.objects.exists()


def test_a_sample_of_another_project_is_refused(project, researcher, tmp_path, django_capture_on_commit_callbacks):
    other = project_with_demo("cqbench.story", researcher, tmp_path)
    sample = draw_sample(project=other, name="theirs", strata_keys=[], total_size=2)
    with ChatServer() as server:
        config = judge(project, server)
    with pytest.raises(DomainError, match=f"no sample {sample.id}"):
        start(config, django_capture_on_commit_callbacks, sample_id=sample.id)
    assert not JudgeRun.objects.exists()


def test_parse_stratum_reads_the_pages_form():
    assert runs.parse_stratum(" country = China , meta.generator=sd ") == {"country": "China", "generator": "sd"}
    assert runs.parse_stratum("") == {}
    with pytest.raises(DomainError, match="key=value"):
        runs.parse_stratum("China")
    with pytest.raises(DomainError, match="given twice"):
        runs.parse_stratum("a=1, a=2")


def test_the_start_form_and_the_api_take_a_sample_and_a_stratum(
    project, client, researcher, django_capture_on_commit_callbacks
):
    sample = draw_sample(project=project, name="paper", strata_keys=["generator"], per_stratum=1, seed=0)
    with ChatServer() as server:
        config = judge(project, server)
    client.force_login(researcher)
    page = client.get(reverse("judges", args=[project.id]))
    assert f'<option value="{sample.id}">sample: paper</option>'.encode() in page.content
    with django_capture_on_commit_callbacks(execute=False):
        resp = client.post(
            reverse("judge_start_run", args=[project.id, config.id]),
            {"sample": sample.id, "stratum": "generator=FLUX", "sample_size": ""},
        )
    run = JudgeRun.objects.get()
    assert resp.status_code == 302 and run.sample_id == sample.id and run.stratum == {"generator": "FLUX"}
    assert len(run.item_ids) == 1
    resp = client.post(reverse("judge_start_run", args=[project.id, config.id]), {"stratum": "FLUX"}, follow=True)
    assert b"key=value" in resp.content and JudgeRun.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=False):
        api = client.post(
            reverse("api_judge_runs", args=[project.id, config.id]),
            {"sample": sample.id, "stratum": {"generator": "Qwen-Image"}},
            content_type="application/json",
        )
    assert api.status_code == 201, api.content
    body = api.json()
    assert body["sample"] == sample.id and body["stratum"] == {"generator": "Qwen-Image"} and body["total"] == 1
    assert body["scope"] == "sample 'paper' · stratum generator = Qwen-Image"
    assert body["usage"]["cost"] is None and body["usage"]["outputs"] == 0
    bad = client.post(
        reverse("api_judge_runs", args=[project.id, config.id]),
        {"stratum": {"generator": "nope"}},
        content_type="application/json",
    )
    assert bad.status_code == 400 and JudgeRun.objects.count() == 2


# ------------------------------------------------------------------------------ hide
def test_a_hidden_judge_leaves_reports_curation_and_exports_and_comes_back(
    project, client, researcher, django_capture_on_commit_callbacks
):
    with ChatServer(score=4) as server:
        config, run = judged(project, server, django_capture_on_commit_callbacks)
        judged(project, server, django_capture_on_commit_callbacks, name="other")
    n = project.items.count()
    ids = list(project.items.values_list("id", flat=True))

    def seen() -> set[str]:
        raters = set(ratings_frame(project).rater)
        assert set(rater_profiles(project)) == raters
        assert {r for _, r in assignment_order(project)} == raters
        assert {r.rater.split("#")[0] for rs in ratings_for(project, ids).values() for r in rs} == raters
        return raters

    assert seen() == {"judge: mllm", "judge: other"} and annotation_count(project) == 2 * n
    administration.set_judge_hidden(config=config, hidden=True)
    assert seen() == {"judge: other"} and annotation_count(project) == n
    assert not submitted_annotations(project).filter(rater=config.rater).exists()
    # kept: its ratings, runs and outputs are all still there
    assert Annotation.objects.filter(rater=config.rater).count() == n and JudgeOutput.objects.filter(run=run).exists()
    client.force_login(researcher)
    page = client.get(reverse("judges", args=[project.id])).content.decode()
    assert 'data-testid="hidden-judges"' in page
    assert reverse("judge_run", args=[project.id, run.id]) not in page  # its runs leave the list
    assert client.get(reverse("judge_run", args=[project.id, run.id])).status_code == 200  # but stay readable
    resp = client.post(reverse("judge_hide", args=[project.id, config.id]), {"hidden": "0"})
    assert resp.status_code == 302
    assert seen() == {"judge: mllm", "judge: other"}
    api = client.patch(
        reverse("api_judge", args=[project.id, config.id]), {"hidden": True}, content_type="application/json"
    )
    assert api.status_code == 200 and api.json()["hidden"] is True and seen() == {"judge: other"}


def test_bad_hide_requests_change_nothing(project, client, researcher):
    with ChatServer() as server:
        config = judge(project, server)
    client.force_login(researcher)
    client.post(reverse("judge_hide", args=[project.id, config.id]), {"hidden": "yes"})
    bad = client.patch(
        reverse("api_judge", args=[project.id, config.id]),
        {"hidden": True, "price_prompt_per_1m": "1"},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "both prices" in bad.content.decode()
    config.refresh_from_db()
    assert config.hidden is False and config.price_prompt_per_1m is None
    ok = client.patch(
        reverse("api_judge", args=[project.id, config.id]),
        {"price_prompt_per_1m": "0.15", "price_completion_per_1m": "0.6"},
        content_type="application/json",
    )
    assert ok.status_code == 200 and ok.json()["price_prompt_per_1m"] == "0.150000"
    one = client.patch(
        reverse("api_judge", args=[project.id, config.id]),
        {"price_completion_per_1m": "0.9"},
        content_type="application/json",
    )
    assert one.status_code == 200 and one.json()["price_completion_per_1m"] == "0.900000"
    assert one.json()["price_prompt_per_1m"] == "0.150000"


# ------------------------------------------------------------------------------ delete
def test_deleting_a_judge_removes_its_runs_ratings_and_rater_in_one_step(
    project, client, researcher, django_capture_on_commit_callbacks
):
    with ChatServer(score=4) as server:
        config, run = judged(project, server, django_capture_on_commit_callbacks)
        other, other_run = judged(project, server, django_capture_on_commit_callbacks, name="other")
    n = project.items.count()
    rater_id = config.rater_id
    client.force_login(researcher)
    confirm = client.get(reverse("judge_delete", args=[project.id, config.id]))
    assert confirm.status_code == 200
    text = confirm.content.decode()
    assert f"<strong>1</strong> run(s) with their <strong>{n}</strong> raw output(s)" in text
    assert f"<strong>{n}</strong> rating(s)" in text
    assert JudgeConfig.objects.filter(pk=config.pk).exists()  # the GET deletes nothing
    resp = client.post(reverse("judge_delete", args=[project.id, config.id]))
    assert resp.status_code == 302 and resp.url == reverse("judges", args=[project.id])
    assert not JudgeConfig.objects.filter(pk=config.pk).exists()
    assert not Rater.objects.filter(pk=rater_id).exists()
    assert not JudgeRun.objects.filter(pk=run.pk).exists()
    assert not JudgeOutput.objects.filter(run_id=run.pk).exists()
    assert not JudgeItemResult.objects.filter(run_id=run.pk).exists()
    assert not Annotation.objects.filter(rater_id=rater_id).exists()
    assert not Assignment.objects.filter(rater_id=rater_id).exists()
    # the other judge is untouched
    assert Annotation.objects.filter(rater=other.rater).count() == n
    assert JudgeOutput.objects.filter(run=other_run).count() == n
    assert set(ratings_frame(project).rater) == {"judge: other"}
    api = client.delete(reverse("api_judge", args=[project.id, other.id]))
    assert api.status_code == 204 and api.content == b""
    assert not JudgeConfig.objects.exists() and not Rater.objects.filter(kind="model").exists()


def test_a_judge_with_a_pending_run_or_in_an_ensemble_is_not_deleted(
    project, client, researcher, django_capture_on_commit_callbacks
):
    with ChatServer(score=4) as server:
        a, _ = judged(project, server, django_capture_on_commit_callbacks, name="a")
        b = judge(project, server, "b")
        ens = configuration.create_judge_config(project=project, name="ens", backend="ensemble", members=[a, b])
    pending = start(b, django_capture_on_commit_callbacks)
    n_annotations = Annotation.objects.count()
    with pytest.raises(DomainError, match="member of the ensemble ens") as exc:
        administration.delete_judge(config=a)
    assert exc.value.code == "conflict"
    with pytest.raises(DomainError, match=f"run {pending.id} is still queued or running"):
        administration.delete_judge(config=b)
    client.force_login(researcher)
    assert client.delete(reverse("api_judge", args=[project.id, a.id])).status_code == 409
    resp = client.post(reverse("judge_delete", args=[project.id, b.id]), follow=True)
    assert b"cancel it first" in resp.content
    page = client.get(reverse("judge_delete", args=[project.id, a.id]))
    assert b"member of the ensemble ens" in page.content and b"Delete judge a</button>" not in page.content
    assert JudgeConfig.objects.count() == 3 and Annotation.objects.count() == n_annotations
    # the ensemble goes first, then its member; a cancelled run no longer blocks
    administration.delete_judge(config=ens)
    administration.delete_judge(config=a)
    runs.cancel_judge_run(run=pending)
    administration.delete_judge(config=b)
    assert not JudgeConfig.objects.exists() and not JudgeRun.objects.exists()


# ------------------------------------------------------------------------------ pages and prices
def test_the_judge_page_shows_runs_with_tokens_and_cost_and_saves_prices(
    project, client, researcher, django_capture_on_commit_callbacks
):
    with ChatServer(score=4) as server:
        config, run = judged(project, server, django_capture_on_commit_callbacks)
    client.force_login(researcher)
    url = reverse("judge_detail", args=[project.id, config.id])
    page = client.get(url)
    usage = selectors.run_usage(run)
    assert page.status_code == 200 and f"<td>{usage['prompt_tokens']}</td>".encode() in page.content
    assert b"set a price per 1M tokens on mllm" in page.content
    bad = client.post(url, {"price_prompt_per_1m": "1", "price_completion_per_1m": ""})
    assert bad.status_code == 400 and b"both prices" in bad.content
    ok = client.post(url, {"price_prompt_per_1m": "3", "price_completion_per_1m": "15"})
    assert ok.status_code == 302
    config.refresh_from_db()
    assert (config.price_prompt_per_1m, config.price_completion_per_1m) == (Decimal(3), Decimal(15))
    run_page = client.get(reverse("judge_run", args=[project.id, run.id]))
    cost = selectors.run_usage(run)["cost"]
    shown = cost.quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)  # as floatformat:4 rounds
    assert cost > 0 and f"<strong>{shown}</strong>".encode() in run_page.content
    api = client.get(reverse("api_judge_run", args=[run.id])).json()
    assert Decimal(api["usage"]["cost"]) == cost and api["usage"]["prompt_tokens"] == usage["prompt_tokens"]
    outputs = client.get(reverse("api_judge_run_outputs", args=[run.id])).json()["results"]
    assert all(o["prompt_tokens"] > 0 and o["completion_tokens"] == 9 for o in outputs)
    created = client.post(
        reverse("judges", args=[project.id]),
        {
            "name": "priced",
            "backend": "openai_chat",
            "model_id": "m",
            "questions": "faith",
            "passes": 1,
            "combine": "mean",
            "params": "{}",
            "price_prompt_per_1m": "0.5",
            "price_completion_per_1m": "2",
        },
    )
    assert created.status_code == 302
    assert JudgeConfig.objects.get(name="priced").price_completion_per_1m == Decimal(2)


# ------------------------------------------------------------------------------ access
@pytest.fixture
def outsider(db):
    return make_user("outsider", researcher=True)  # a researcher, but not of this project


def test_outsiders_get_404_and_annotators_403_on_the_management_pages(
    researcher, annotator, outsider, tmp_path, client, django_capture_on_commit_callbacks
):
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path, annotators=[annotator])
    with ChatServer(score=4) as server:
        config, _ = judged(project, server, django_capture_on_commit_callbacks)
    gets = [
        reverse("judge_detail", args=[project.id, config.id]),
        reverse("judge_delete", args=[project.id, config.id]),
    ]
    posts = [
        (
            reverse("judge_detail", args=[project.id, config.id]),
            {"price_prompt_per_1m": 1, "price_completion_per_1m": 1},
        ),
        (reverse("judge_hide", args=[project.id, config.id]), {"hidden": "1"}),
        (reverse("judge_delete", args=[project.id, config.id]), {}),
        (reverse("judge_start_run", args=[project.id, config.id]), {"stratum": "generator=FLUX"}),
    ]
    for user, code in ((annotator, 403), (outsider, 404)):
        client.force_login(user)
        for url in gets:
            assert client.get(url).status_code == code, (user, url)
        for url, data in posts:
            assert client.post(url, data).status_code == code, (user, url)
    config.refresh_from_db()
    assert config.hidden is False and config.price_prompt_per_1m is None and JudgeRun.objects.count() == 1
    assert Annotation.objects.filter(rater=config.rater).count() == project.items.count()


def test_outsiders_and_annotators_get_404_from_the_management_api(
    researcher, annotator, outsider, tmp_path, client, django_capture_on_commit_callbacks
):
    """The judge API never confirms a project exists to anyone who cannot manage it (as the
    other judge endpoints, tests/judges/test_access.py)."""
    project = project_with_demo("cultivate.faithfulness", researcher, tmp_path, annotators=[annotator])
    with ChatServer(score=4) as server:
        config, run = judged(project, server, django_capture_on_commit_callbacks)
    detail = reverse("api_judge", args=[project.id, config.id])
    for user in (annotator, outsider):
        client.force_login(user)
        assert client.get(detail).status_code == 404
        assert client.patch(detail, {"hidden": True}, content_type="application/json").status_code == 404
        assert client.delete(detail).status_code == 404
        assert client.get(reverse("api_judge_run_failures", args=[run.id])).status_code == 404
        assert (
            client.post(
                reverse("api_judge_runs", args=[project.id, config.id]),
                {"stratum": {"generator": "FLUX"}},
                content_type="application/json",
            ).status_code
            == 404
        )
    config.refresh_from_db()
    assert config.hidden is False and JudgeRun.objects.count() == 1
    client.logout()
    assert client.get(detail).status_code in (401, 403)
    assert client.get(reverse("judge_detail", args=[project.id, config.id])).status_code == 302


def test_a_judge_of_another_project_is_not_found(researcher, client, tmp_path):
    mine = make_project("cultivate.faithfulness", owner=researcher, name="mine")
    theirs = project_with_demo("cultivate.faithfulness", researcher, tmp_path)
    with ChatServer() as server:
        config = judge(theirs, server)
    client.force_login(researcher)
    assert client.get(reverse("judge_detail", args=[mine.id, config.id])).status_code == 404
    assert client.get(reverse("api_judge", args=[mine.id, config.id])).status_code == 404
    assert client.post(reverse("judge_delete", args=[mine.id, config.id])).status_code == 404
    assert JudgeConfig.objects.filter(pk=config.pk).exists()
