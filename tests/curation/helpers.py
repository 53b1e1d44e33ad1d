"""Building curated projects for the tests: a ValueGround project with images, annotators'
answers submitted through the annotation service, and a model judge stored like a rater."""

from __future__ import annotations

from pathlib import Path

from annotate import annotating
from annotation import importing, presentation
from annotation.models import Annotation, Assignment, Item, Rater
from tests.annotation.factories import jsonl, make_project, valueground_records

PASS = {"q1": 2, "q2": 1, "q3": 2, "q4": 1}
FAIL = {"q1": 2, "q2": 2, "q3": 2, "q4": 0, "feedback": "remove the flag in image B"}
REJECT = {"q1": 0, "q2": 1, "q3": 0, "q4": 1}


def valueground_project(owner, annotators, folder: Path, n: int = 4, k: int | None = None):
    project = make_project("valueground.pair_quality", owner=owner, annotators=annotators, k=k or len(annotators))
    folder.mkdir(parents=True, exist_ok=True)
    report = importing.import_items(
        project=project, data=jsonl(valueground_records(folder, n=n)), data_format="jsonl", images=folder
    )
    assert report.ok, report.errors
    return project


def submit_all(project, answers_for) -> int:
    """answers_for(item, rater) -> answers or None (leave unanswered). Returns the count submitted."""
    n = 0
    for a in (
        Assignment.objects.filter(project=project, rater__kind="human")
        .select_related("rater", "item")
        .order_by("item_id", "rater__name")
    ):
        answers = answers_for(a.item, a.rater)
        if answers is not None:
            annotating.submit_annotation(assignment_id=a.id, rater=a.rater, answers=answers)
            n += 1
    return n


def judge_rates(project, answers_for, name: str = "gpt-judge") -> Rater:
    judge = Rater.objects.create(
        kind=Rater.Kind.MODEL,
        name=name,
        backend="fake",
        model_id=name,
        prompt_hash="ab" * 32,
        parameters={"temperature": 0},
    )
    rubric = project.rubric_version.parsed()
    for item in Item.objects.filter(project=project).order_by("id"):
        a = Assignment.objects.create(project=project, item=item, rater=judge, status=Assignment.Status.SUBMITTED)
        cleaned = rubric.validate(answers_for(item), item=presentation.item_render_context(item))
        Annotation.objects.create(
            assignment=a,
            item=item,
            rater=judge,
            rubric_version=project.rubric_version,
            answers=cleaned,
            derived=rubric.derive(cleaned),
        )
    return judge
