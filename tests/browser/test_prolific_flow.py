"""A Prolific participant in headless Chromium: the study link, the pre-screen, two items,
the completion page with the code and the Prolific return link."""

from __future__ import annotations

import re

import pytest

from annotation import importing, projects
from annotation.models import Annotation
from studies import crowd, plans, sampling
from studies.models import CrowdParticipant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def study(settings, tmp_path):
    from django.contrib.auth import get_user_model

    settings.MEDIA_ROOT = tmp_path / "media"
    owner = get_user_model().objects.create_user("owner", password="x")
    project = projects.create_project(name="Turing crowd", preset_key="cqbench.turing", created_by=owner, k_per_item=2)
    project.options = {"assignment": "plans"}
    project.save(update_fields=["options"])
    records = "\n".join(
        f'{{"id": "t{i}", "human_utterance": "human {i}", "model_utterance": "model {i}", "country": "{c}"}}'
        for i, c in enumerate(["China", "Germany"] * 3)
    )
    assert importing.import_items(project=project, data=records, data_format="jsonl").ok
    sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=3, seed=1)
    plans.create_plan(
        sample=sample, mode="pooled", k=2, eligibility=[{"attribute": "nationality", "item_key": "country"}]
    )
    return crowd.create_study(
        project=project,
        name="Which is human?",
        completion_code="XK42ZZ",
        items_per_participant=2,
        prescreen=[{"attribute": "nationality", "label": "Your nationality", "choices": ["China", "Germany"]}],
    )


def test_prolific_participant_enters_annotates_and_gets_the_completion_code(study, page, live_server):
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    url = f"{live_server.url}/p/{study.token}/?PROLIFIC_PID=60aa11bb22cc33dd44ee55ff&STUDY_ID=s1&SESSION_ID=x9"
    assert page.goto(url).status == 200
    page.select_option("select[name=nationality]", "China")
    with page.expect_navigation():
        page.click("#prescreen button[type=submit]")
    for _ in range(2):
        assert re.search(r"/a/\d+/$", page.url), page.url
        assert "human" in page.content() and "model" in page.content()
        page.keyboard.press("1")  # first option of the pairwise question
        with page.expect_navigation():
            page.keyboard.press("Enter")
    assert page.url.endswith(f"/p/{study.token}/done/"), page.url
    assert page.inner_text("#completion-code") == "XK42ZZ"
    assert page.get_attribute("#complete-link", "href") == "https://app.prolific.com/submissions/complete?cc=XK42ZZ"
    participant = CrowdParticipant.objects.get()
    assert participant.completed_at is not None and participant.prescreen_answers == {"nationality": "China"}
    answers = Annotation.objects.filter(rater=participant.rater).select_related("item")
    assert answers.count() == 2 and {a.item.country for a in answers} == {"China"}
    assert not errors
