"""The active-sample pages on the demo a new researcher meets first (issue 34): every
uncertainty source of every judge of every demo study, shown and drawn, answers without a 5xx;
a source the judge does not offer is refused on the page (4xx) and not offered in the form;
the page is one form with unique element ids; the series shows the round it has reached."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client
from django.urls import reverse

from annotation.models import Project
from demo.studies import PREFIX
from judges import uncertainty as judge_uncertainty
from studies import active as active_design

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(shared_demo, db):
    """The demo, seeded once for the class (tests/conftest.py, shared_demo), read afresh."""
    return list(Project.objects.filter(name__startswith=PREFIX).order_by("id"))


def researcher() -> Client:
    c = Client()
    c.force_login(get_user_model().objects.get(username="researcher"))
    return c


def duplicate_ids(html: str) -> list[str]:
    return [i for i, n in Counter(re.findall(r'\bid="([^"]+)"', html)).items() if n > 1]


def form_for(judge, source: str, **extra) -> dict:
    return {
        "judge": judge.id,
        "source": source,
        "tau": "0.5",
        "floor": "0.1",
        "seed": "3",
        "rounds": "1",
        "budget": "8",
        **extra,
    }


def offered_fields(html: str) -> list[str]:
    select = re.search(r'<select name="field"[^>]*>(.*?)</select>', html, re.S)
    assert select, "the form has no field selector"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def offered_sources(html: str) -> list[str]:
    select = re.search(r'<select name="source"[^>]*>(.*?)</select>', html, re.S)
    assert select, "the form has no uncertainty selector"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


class TestActivePagesOnTheDemo:
    def test_every_source_of_every_judge_shows_and_draws_without_a_server_error(self, demo):
        assert demo, "the demo seeded no study"
        c = researcher()
        for project in demo:
            page = reverse("active_sample", args=[project.id])
            draw = reverse("active_draw", args=[project.id])
            r = c.get(page)
            assert r.status_code == 200, project.name
            html = r.content.decode()
            assert not duplicate_ids(html), (project.name, duplicate_ids(html))
            judges = judge_uncertainty.judge_raters(project)
            assert judges, project.name
            # at least one judge stores an uncertainty (the demo's judges state a confidence), and
            # the form's default for it is that uncertainty, not the uniform baseline
            assert any(judge_uncertainty.sources(project, j)[0][0] != judge_uncertainty.UNIFORM for j in judges), (
                project.name
            )
            for number, judge in enumerate(judges):
                offered = [k for k, _ in judge_uncertainty.sources(project, judge)]
                # the page offers exactly the sources with data, the first one selected by default
                r = c.get(page, {"judge": judge.id})
                html = r.content.decode()
                assert r.status_code == 200 and offered_sources(html) == offered, (project.name, judge.name)
                assert re.search(rf'<option value="{re.escape(offered[0])}" selected>', html), (project.name, judge)
                fields = offered_fields(html)
                assert fields, (project.name, judge.name)
                # a source the judge does not offer is refused by one code path whoever the judge:
                # tried with the study's first judge only (each request reads the whole study)
                unoffered = (
                    [s for s in (judge_uncertainty.PASSES, "confidence:none") if s not in offered]
                    if number == 0
                    else []
                )
                for source in offered + unoffered:
                    # only an offered spread over passes depends on the field; the other sources once
                    for field in fields if source == judge_uncertainty.PASSES and source in offered else fields[:1]:
                        data = form_for(judge, source, field=field)
                        shown = c.post(draw, {**data, "action": "show"})
                        assert shown.status_code < 500, (project.name, judge.name, source, field)
                        body = shown.content.decode()
                        assert not duplicate_ids(body), (project.name, duplicate_ids(body))
                        if source in offered and source != judge_uncertainty.PASSES:
                            assert shown.status_code == 200 and "uncertainty-distribution" in body, (
                                project.name,
                                source,
                            )
                        if source in unoffered:
                            assert shown.status_code == 400 and 'class="error" role="alert"' in body, (
                                project.name,
                                source,
                            )
                    with transaction.atomic():
                        drawn = c.post(draw, {**data, "action": "draw"})
                        # only the uniform draw is kept (one series per judge): every series drawn
                        # is read again by each later request of the study
                        transaction.set_rollback(source != judge_uncertainty.UNIFORM)
                    assert drawn.status_code < 500, (project.name, judge.name, source)
                    if source in unoffered:
                        assert drawn.status_code == 400 and 'class="error" role="alert"' in drawn.content.decode()
                    else:  # an offered source draws (the demo's judges state a confidence)
                        assert drawn.status_code == 302, (source, drawn.content.decode()[:2000])
                # the page with the series drawn so far still answers, its ids unique
                r = c.get(page, {"judge": judge.id})
                assert r.status_code == 200 and not duplicate_ids(r.content.decode()), project.name

    def test_a_two_round_series_is_named_by_the_round_it_reached(self, demo):
        c = researcher()
        project = demo[0]
        judge = judge_uncertainty.judge_raters(project)[0]
        page = c.get(reverse("active_sample", args=[project.id]), {"judge": judge.id}).content.decode()
        data = form_for(judge, "uniform", field=offered_fields(page)[0], rounds="2", name="two rounds", budget="10")
        r = c.post(reverse("active_draw", args=[project.id]), {**data, "action": "draw"})
        assert r.status_code == 302
        first = active_design.project_series(project)[0]
        html = c.get(reverse("active_sample", args=[project.id])).content.decode()
        assert "two rounds (round 1 of 2)" in html
        r = c.post(reverse("active_next_round", args=[project.id, first.id]), {})  # refit unticked
        assert r.status_code == 302
        html = c.get(reverse("active_sample", args=[project.id])).content.decode()
        assert "two rounds (round 2 of 2)" in html and "two rounds (round 1 of 2)</a>" not in html
        assert not duplicate_ids(html)
