"""Issue 35, "Short names": a judge has a short label (judges/labels.py) that table headers and
the agreement page use, set by the researcher or derived from its name; a badge, not a
"judge: " prefix, marks a judge on the page, and no heading reads "Judge judge: ...". The label
is set on the judge form, the judge's page and the API; a bad or taken label is refused and
changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from django.apps import apps
from django.urls import reverse

from agreement import validation
from annotate import annotating
from annotation import projects
from annotation.models import Assignment, Item
from core.errors import DomainError
from judges.configuration import create_judge_config
from judges.labels import MAX_LENGTH, check_short_label, default_short_label
from judges.models import JudgeConfig
from tests.agreement.test_paper_tables import import_ok, submit_humans
from tests.annotation.factories import make_project, make_user, turing_records

pytestmark = pytest.mark.django_db

NAMES = {
    # the demo's judges (benchmarks/*/demo/*.study.json): the model's part of the name
    "GPT-4o rubric judge (App. B.1)": "GPT-4o",
    "Gemini 2.5 Flash rubric judge": "Gemini 2.5 Flash",
    "Llama-3.1-8B story judge": "Llama-3.1-8B",
    "Gemini 2.0 Flash-Lite image judge": "Gemini 2.0 Flash-Lite",
    "SSIM pair-match judge (Q3 proxy)": "SSIM",
    "GPT-4o Turing judge": "GPT-4o",
    "MiniLM embedding judge": "MiniLM",
    # no word looks like a model's name: the name itself, cut to the longest label
    "mllm": "mllm",
    "a very long lowercase name of a judge that goes on": "a very long lowercase name of a",
}


@pytest.mark.parametrize(("name", "label"), NAMES.items())
def test_the_default_label_is_the_models_part_of_the_name(name, label):
    assert default_short_label(name) == label
    assert len(label) <= MAX_LENGTH


def test_a_default_label_never_repeats_another_judges():
    taken = {"GPT-4o"}
    assert default_short_label("GPT-4o story judge", taken) == "GPT-4o story judge"
    assert default_short_label("GPT-4o", taken) == "GPT-4o (2)"
    assert default_short_label("GPT-4o", taken | {"GPT-4o (2)"}) == "GPT-4o (3)"


@pytest.mark.parametrize(
    ("label", "why"),
    [("", "empty"), ("x" * 33, "at most 32"), ("two\nlines", "one line"), ("GPT-4o", "already")],
)
def test_a_bad_label_is_refused_with_why(label, why):
    with pytest.raises(DomainError) as exc:
        check_short_label(label, {"GPT-4o"})
    assert why in exc.value.message or (why == "already" and "labelled 'GPT-4o'" in exc.value.message)


@pytest.fixture
def owner(db):
    return make_user("sl-owner", researcher=True)


@pytest.fixture
def project(owner):
    return make_project("cqbench.turing", owner=owner, name="labels")


def judge(project, name: str, **kw) -> JudgeConfig:
    return create_judge_config(project=project, name=name, backend="openai_chat", model_id="gpt-4o", **kw)


def test_a_new_judge_gets_a_derived_label_or_the_one_given(project):
    assert judge(project, "GPT-4o Turing judge").short_label == "GPT-4o"
    assert judge(project, "GPT-4o Turing judge B").short_label == "GPT-4o Turing judge B"
    assert judge(project, "another", short_label="  Mine ").short_label == "Mine"
    with pytest.raises(DomainError, match="labelled 'Mine'"):
        judge(project, "a third", short_label="Mine")
    assert not JudgeConfig.objects.filter(name="a third").exists()  # refused: nothing written


def test_the_migration_fills_the_labels_of_earlier_judges(project):
    from importlib import import_module

    migration = import_module("judges.migrations.0012_judge_short_label")
    a, b = judge(project, "GPT-4o Turing judge"), judge(project, "GPT-4o other judge")
    JudgeConfig.objects.update(short_label="")
    migration.fill_labels(apps, None)
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.short_label, b.short_label) == ("GPT-4o", "GPT-4o other judge")


def test_the_api_creates_and_changes_the_label_and_refuses_a_taken_one(project, owner, client):
    client.force_login(owner)
    made = client.post(
        reverse("api_judges", args=[project.id]),
        {"name": "GPT-4o Turing judge", "backend": "openai_chat", "model_id": "gpt-4o"},
        content_type="application/json",
    )
    assert made.status_code == 201 and made.json()["short_label"] == "GPT-4o"
    other = judge(project, "Llama judge", short_label="Llama")
    url = reverse("api_judge", args=[project.id, other.id])
    ok = client.patch(url, {"short_label": "Llama-3.1-8B"}, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["short_label"] == "Llama-3.1-8B"
    # a taken label, with a price change in the same request: refused whole
    bad = client.patch(
        url,
        {"short_label": "GPT-4o", "price_prompt_per_1m": 1, "price_completion_per_1m": 2},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "labelled 'GPT-4o'" in bad.content.decode()
    other.refresh_from_db()
    assert other.short_label == "Llama-3.1-8B" and other.price_prompt_per_1m is None


def test_the_judge_page_sets_the_label_and_only_its_managers_may(project, owner, client):
    config = judge(project, "GPT-4o Turing judge")
    url = reverse("judge_short_label", args=[project.id, config.id])
    annotator, outsider = make_user("sl-annotator"), make_user("sl-outsider", researcher=True)
    projects.add_member(project=project, user=annotator, role="annotator")
    for user, code in ((annotator, 403), (outsider, 404)):
        client.force_login(user)
        assert client.post(url, {"short_label": "x"}).status_code == code
    client.logout()
    assert client.post(url, {"short_label": "x"}).status_code == 302  # to the login page
    config.refresh_from_db()
    assert config.short_label == "GPT-4o"
    client.force_login(owner)
    page = client.get(reverse("judge_detail", args=[project.id, config.id]))
    assert 'data-testid="judge-short-label"' in page.content.decode()
    assert client.post(url, {"short_label": "4o"}).status_code == 302
    config.refresh_from_db()
    assert config.short_label == "4o"
    resp = client.post(url, {"short_label": "x" * 40}, follow=True)
    assert "at most 32 characters" in resp.content.decode()
    config.refresh_from_db()
    assert config.short_label == "4o"


def rated_project(owner):
    """A Turing project rated by three people and two judges made with the services."""
    rng = np.random.default_rng(5)
    team = [make_user(n) for n in ("sl-a", "sl-b", "sl-c")]
    project = make_project("cqbench.turing", owner=owner, annotators=team, k=3, name="rated")
    import_ok(project, turing_records(12))
    submit_humans(project, lambda e, u, a: {"human_written": str(rng.choice(["left", "right", "tie"]))})
    for name in ("GPT-4o Turing judge", "Llama-3.1-8B Turing judge"):
        rater = judge(project, name).rater
        for item in Item.objects.filter(project=project).order_by("id"):
            a = Assignment.objects.create(project=project, item=item, rater=rater, presentation={})
            answer = {"human_written": str(rng.choice(["left", "right"]))}
            annotating.submit_annotation(assignment_id=a.id, rater=rater, answers=answer)
    return project


def test_tables_and_the_agreement_page_call_a_judge_by_its_label_with_a_badge(owner, client, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    project = rated_project(owner)
    tables = validation.compute_tables(project, bootstrap=0)
    texts = [t.row_header for t in tables] + [c for t in tables for c in t.columns]
    texts += [r.label for t in tables for r in t.rows]
    assert not [x for x in texts if "judge: " in x]
    assert any(x.startswith("GPT-4o") for x in texts) and any(x.startswith("Llama-3.1-8B") for x in texts)
    client.force_login(owner)
    html = client.get(reverse("agreement_report", args=[project.id])).content.decode()
    assert "Judge judge" not in html and "judge: GPT-4o" not in html
    badge = '<span class="badge judge-badge">judge</span>'
    assert f"{badge} GPT-4o vs humans" in html and f"{badge} Llama-3.1-8B" in html
