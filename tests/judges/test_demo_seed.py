"""``seed_demo`` configures ready-to-run demo judges and seeds demo human annotations through
the real submission service; running it again changes nothing. Nothing is judged by the seed."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotation.models import Annotation, Assignment, Project, Rater
from benchmarks.registry import PRESETS
from demo.management.commands import seed_demo
from judges import execution
from judges.backends import JudgeSpec
from judges.backends.image_similarity import ImageSimilarityBackend
from judges.models import JudgeConfig, JudgeRun

pytestmark = pytest.mark.django_db

KEYS = ("cqbench.story", "valueground.pair_quality")


@pytest.fixture
def seeded(monkeypatch):
    monkeypatch.setattr(seed_demo, "PRESETS", {k: PRESETS[k] for k in KEYS})
    call_command("seed_demo", stdout=io.StringIO())
    return {p.preset_key: p for p in Project.objects.filter(name__startswith="Demo: ")}


def snapshot():
    return (
        sorted(JudgeConfig.objects.values_list("project_id", "name", "backend", "rater_id")),
        sorted(Annotation.objects.values_list("id", "rater_id", "item_id", "revision")),
        sorted(Assignment.objects.values_list("id", "status")),
        Rater.objects.count(),
    )


def test_demo_judges_are_configured_not_run(seeded):
    story = JudgeConfig.objects.get(project=seeded["cqbench.story"])
    assert story.backend == "embedding" and story.questions == ["reflection", "rewrite_improvement"]
    assert story.rater.kind == Rater.Kind.MODEL and story.rater.name == f"judge: {story.name}"
    vg = JudgeConfig.objects.get(project=seeded["valueground.pair_quality"])
    assert vg.backend == "image_similarity" and vg.questions == ["q3"]
    # (the simulated studies, "Demo study: ...", carry finished runs: tests/demo)
    assert not JudgeRun.objects.filter(project__name__startswith="Demo: ").exists()
    assert not Annotation.objects.filter(
        rater__kind=Rater.Kind.MODEL, item__project__name__startswith="Demo: "
    ).exists()
    # both are valid backends for their demo project (built without loading any model)
    backend = ImageSimilarityBackend(execution.spec_for(vg))
    assert backend.mode == "valueground_q3" and backend.q3_thresholds == [0.8, 0.87]
    assert isinstance(execution.spec_for(story), JudgeSpec)


def test_demo_humans_rate_part_of_the_story_project(seeded):
    project = seeded["cqbench.story"]
    table = PRESETS["cqbench.story"].demo_answers
    anns = Annotation.objects.filter(item__project=project).select_related("rater", "item", "assignment")
    got = {(a.rater.name, a.item.external_id): a for a in anns}
    assert set(got) == {(u, ext) for u in ("annotator1", "annotator2") for ext in table}
    for (user, ext), a in got.items():
        assert a.answers == table[ext][0 if user == "annotator1" else 1]
        assert a.assignment.status == Assignment.Status.SUBMITTED and a.revision == 1
        assert "reflection_rate" in a.derived and "natural" in a.derived
    # every annotator still has open work in every demo project
    for p in seeded.values():
        for user in ("annotator1", "annotator2"):
            assert Assignment.objects.filter(project=p, rater__name=user, status="assigned").exists()
    # the ValueGround demo keeps its default assignments unopened (its study-design walkthrough)
    assert not Annotation.objects.filter(item__project=seeded["valueground.pair_quality"]).exists()


def test_seed_demo_is_idempotent(seeded):
    before = snapshot()
    call_command("seed_demo", stdout=io.StringIO())
    assert snapshot() == before
