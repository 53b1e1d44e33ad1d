"""Fast reports (issue 35): the agreement page, the printable report and the report API answer
from a stored report, recomputed by a job when the ratings, judges or raters change, the last
good report shown meanwhile and never as current; the drill-down's one-pass majorities against a
counted majority (the vectorised resamples: tests/hvstats/test_resampled_kappa.py)."""

from __future__ import annotations

import collections
import json
import random

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse

from agreement import selectors, services
from agreement.models import AgreementReport
from agreement.services import ReportParams
from annotation import importing
from annotation.models import Annotation, Item
from judges.models import JudgeConfig
from tests.agreement.test_platform_report import (
    annotate_all,
    judge_annotates,
    judge_rater,
    story_answers,
    story_records,
)
from tests.annotation.factories import jsonl, make_project, make_user

PARAMS = {"field": "naturalness", "bootstrap": 10}


@pytest.fixture
def story(db, settings):
    """A small CQ-Bench story project: 8 stories, 3 annotators and a judge."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    owner = make_user("owner", researcher=True)
    anns = [make_user(f"ann{i}") for i in range(3)]
    project = make_project("cqbench.story", owner=owner, annotators=anns, k=3)
    assert importing.import_items(project=project, data=jsonl(story_records(8)), data_format="jsonl").ok
    quality = {it.id: 1 + (k % 5) for k, it in enumerate(Item.objects.filter(project=project).order_by("id"))}
    rng = random.Random(1)
    annotate_all(project, lambda item, rater: story_answers(rng, quality[item.id]))
    judge_annotates(project, judge_rater(), lambda item: story_answers(rng, quality[item.id]))
    project.owner = owner
    project.annotator_users = anns
    return project


def _page(client, project, **extra):
    return client.get(reverse("agreement_report", args=[project.id]), {**PARAMS, **extra})


def _no_computing(monkeypatch):
    """Any computation from here on fails the test: the answer must come from the stored row."""

    def refuse(**kwargs):
        raise AssertionError("the report was computed again instead of served from the stored one")

    monkeypatch.setattr(services, "compute_report", refuse)


def _change_a_rating(project) -> None:
    a = Annotation.objects.filter(item__project=project, rater__kind="human").order_by("id").first()
    a.answers = {**a.answers, "naturalness": 1 if a.answers.get("naturalness") != 1 else 2}
    a.save()


def _run_on_worker(callbacks) -> None:
    from config.celery import app

    app.conf.task_always_eager = True
    try:
        for cb in callbacks:
            cb()
    finally:
        app.conf.task_always_eager = False


# ------------------------------------------------------------------------------ stored, current
@pytest.mark.django_db
def test_the_stored_report_is_served_while_current(client, story, monkeypatch):
    client.force_login(story.owner)
    first = _page(client, story)
    assert first.status_code == 200 and 'data-state="current"' in first.content.decode()
    stored = AgreementReport.objects.get(project=story)
    assert stored.status == "done" and stored.data_signature == selectors.report_fingerprint(story)
    _no_computing(monkeypatch)
    again = _page(client, story)
    html = again.content.decode()
    assert again.status_code == 200 and "Krippendorff" in html and 'data-state="current"' in html
    api = client.get(reverse("api_agreement_report", args=[story.id]), {**PARAMS, "format": "json"})
    body = api.json()
    assert api.status_code == 200 and body["report_id"] == stored.id and body["computed_at"]
    assert body["result"] == stored.result and "last_good" not in body
    assert AgreementReport.objects.filter(project=story).count() == 1


@pytest.mark.django_db
def test_bad_input_stores_nothing(client, story):
    client.force_login(story.owner)
    assert _page(client, story, field="nope").status_code == 400
    assert client.get(reverse("api_agreement_report", args=[story.id]), {"bootstrap": -1}).status_code == 400
    assert not AgreementReport.objects.filter(project=story).exists()


# ------------------------------------------------------------------------------ out of date
@pytest.mark.django_db
def test_a_changed_rating_is_never_shown_as_current_and_the_job_updates_it(
    client, settings, story, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    client.force_login(story.owner)
    _page(client, story)
    old = AgreementReport.objects.get(project=story)
    _change_a_rating(story)
    assert selectors.report_fingerprint(story) != old.data_signature
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        r = _page(client, story)
        api = client.get(reverse("api_agreement_report", args=[story.id]), {**PARAMS, "format": "json"})
        printable = client.get(reverse("printable_report", args=[story.id]), PARAMS)
    html = r.content.decode()
    job = AgreementReport.objects.exclude(pk=old.pk).get(project=story)  # one job for the three
    assert job.status == "queued"
    # the last good report, marked updating and out of date, polling the job
    assert 'data-state="updating"' in html and 'data-state="current"' not in html
    assert "Updating, 0%" in html and "Out of date" in html and "Krippendorff" in html
    assert reverse("agreement_job", args=[story.id, job.id]) in html
    body = api.json()
    assert api.status_code == 202 and body["status"] == "queued" and body["result"] is None
    assert body["last_good"]["report_id"] == old.id and body["last_good"]["current"] is False
    assert 'data-state="updating"' in printable.content.decode()
    _run_on_worker(callbacks)
    job.refresh_from_db()
    assert job.status == "done" and job.data_signature == selectors.report_fingerprint(story)
    expected = services.compute_report(project=story, params=ReportParams(**PARAMS))
    assert job.result["fields"] == json.loads(json.dumps(expected["fields"]))
    assert not AgreementReport.objects.filter(pk=old.pk).exists()  # superseded
    poll = client.get(reverse("agreement_job", args=[story.id, job.id]), HTTP_HX_REQUEST="true")
    assert 'data-state="current"' in poll.content.decode() and "every 1s" not in poll.content.decode()
    after = _page(client, story)
    assert 'data-state="current"' in after.content.decode()


@pytest.mark.django_db
def test_a_report_overtaken_while_it_ran_is_marked_out_of_date(client, story):
    client.force_login(story.owner)
    _page(client, story)
    job = AgreementReport.objects.get(project=story)
    _change_a_rating(story)
    poll = client.get(reverse("agreement_job", args=[story.id, job.id]), HTTP_HX_REQUEST="true")
    html = poll.content.decode()
    assert 'data-state="out-of-date"' in html and 'data-state="current"' not in html


@pytest.mark.django_db
def test_hiding_a_judge_relabelling_it_or_renaming_a_rater_changes_the_fingerprint(story):
    judge = Annotation.objects.filter(item__project=story, rater__kind="model").first().rater
    config = JudgeConfig.objects.create(project=story, name="gpt-judge", backend="fake", rater=judge)
    before = selectors.report_fingerprint(story)
    assert selectors.report_fingerprint(story) == before  # stable while nothing changes
    config.hidden = True
    config.save()
    hidden = selectors.report_fingerprint(story)
    assert hidden != before
    config.hidden = False
    config.save()
    assert selectors.report_fingerprint(story) == before
    config.short_label = "GPT"  # the tables' judge label
    config.save()
    labelled = selectors.report_fingerprint(story)
    assert labelled != before
    before = labelled
    judge.attributes = {"nationality": "Germany"}
    judge.save()
    assert selectors.report_fingerprint(story) != before


@pytest.mark.django_db
def test_a_large_project_without_a_stored_report_polls(client, settings, story):
    settings.HV_AGREEMENT_INLINE_MAX = 10
    client.force_login(story.owner)
    html = _page(client, story).content.decode()
    assert 'hx-trigger="every 1s"' in html and 'data-testid="agreement-percent"' in html
    assert "Krippendorff" not in html  # nothing to show yet, and nothing stale


# ------------------------------------------------------------------------------ permissions
@pytest.mark.django_db
def test_stored_reports_stay_researchers_only(client, story):
    client.force_login(story.owner)
    _page(client, story)
    job = AgreementReport.objects.get(project=story)
    urls = [
        reverse("agreement_job", args=[story.id, job.id]),
        reverse("printable_report", args=[story.id]),
        reverse("api_validation_report", args=[story.id]),
    ]
    client.force_login(story.annotator_users[0])
    assert [client.get(u).status_code for u in urls] == [403, 403, 403]
    client.force_login(make_user("outsider", researcher=True))
    assert [client.get(u).status_code for u in urls] == [404, 404, 404]
    client.logout()
    assert client.get(urls[0]).status_code == 302 and client.get(urls[2]).status_code in (401, 403)


@pytest.mark.django_db
def test_the_validation_report_api_reads_the_stored_report(client, story, monkeypatch):
    client.force_login(story.owner)
    url = reverse("api_validation_report", args=[story.id])
    first = client.get(url, {"bootstrap": 10, "format": "json"})
    assert first.status_code == 200 and first.json()["tables"]
    _no_computing(monkeypatch)
    again = client.get(url, {"bootstrap": 10, "format": "json"})
    assert again.status_code == 200 and again.json()["tables"] == first.json()["tables"]
    assert again.json()["answers"] == first.json()["answers"]


# ------------------------------------------------------------------------------ the fast statistics
def test_drilldown_majorities_equal_a_counted_majority():
    rng = np.random.default_rng(0)
    values = rng.choice(np.array(["a", "b", "c", None], dtype=object), size=(60, 4))
    H = pd.DataFrame(values).where(pd.notna(values))
    got = services.human_majorities(H).tolist()
    for row, m in zip(values, got, strict=True):
        counted = collections.Counter(v for v in row if v is not None).most_common()
        tie = not counted or (len(counted) > 1 and counted[0][1] == counted[1][1])
        assert m == (None if tie else counted[0][0])


@pytest.mark.django_db
def test_a_stored_report_is_rendered_once_per_language_and_viewer(client, story, monkeypatch):
    from agreement import views

    client.force_login(story.owner)
    first = _page(client, story).content.decode()
    calls = []
    real = views.report_context
    monkeypatch.setattr(views, "report_context", lambda result: calls.append(1) or real(result))
    again = _page(client, story).content.decode()
    assert calls == [] and "Krippendorff" in again  # the cached HTML of the same stored report
    assert again.count('data-testid="heatmap"') == first.count('data-testid="heatmap"')
    client.cookies["django_language"] = "de"
    german = _page(client, story).content.decode()
    assert calls == [1] and '<html lang="de">' in german  # another language renders (and caches) its own
    story.owner.is_staff = True  # staff see item links in the drill-down: their own rendering
    story.owner.save()
    _page(client, story)
    assert calls == [1, 1]


@pytest.mark.django_db
def test_the_csv_api_while_updating_has_no_rows_of_the_old_report(client, story):
    client.force_login(story.owner)
    url = reverse("api_agreement_report", args=[story.id])
    _page(client, story)
    _change_a_rating(story)
    r = client.get(url, {**PARAMS, "format": "csv"})
    text = r.content.decode()
    assert r.status_code == 202 and text.startswith("status,progress,report_id")
    assert "last_good" not in text and "krippendorff" not in text.lower()
