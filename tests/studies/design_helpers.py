"""Helpers for the sampling / assignment-plan / QC tests: projects whose items carry strata."""

from __future__ import annotations

from annotation import importing, projects
from annotation.models import Item, Project
from tests.annotation.factories import jsonl, make_project, make_user


def strata_records(spec: dict[tuple[str, str], int], *, prefix: str = "s") -> list[dict]:
    """Turing-pair records, ``spec[(country, generator)] = n`` items each."""
    records = []
    for (country, generator), n in spec.items():
        for i in range(n):
            records.append(
                {
                    "id": f"{prefix}-{country}-{generator}-{i}",
                    "human_utterance": f"h {country} {i}",
                    "model_utterance": f"m {generator} {i}",
                    "country": country,
                    "generator": generator,
                    "meta": {"topic": "food" if i % 2 else "family"},
                }
            )
    return records


def strata_project(
    owner,
    spec: dict[tuple[str, str], int],
    *,
    annotators=(),
    k: int = 2,
    take_over: bool = True,
    extra: list[dict] | None = None,
) -> Project:
    project = make_project("cqbench.turing", owner=owner, k=k)
    if take_over:
        project.options = {**project.options, "assignment": "plans"}
        project.save(update_fields=["options"])
    for a in annotators:
        projects.add_member(project=project, user=a, role="annotator")
    report = importing.import_items(
        project=project, data=jsonl(strata_records(spec) + (extra or [])), data_format="jsonl"
    )
    assert report.ok, report.errors
    return project


def annotator(username: str, **attributes):
    user = make_user(username)
    rater = projects.rater_for_user(user)
    if attributes:
        rater.attributes = attributes
        rater.save(update_fields=["attributes"])
    return user


def items_by_country(project: Project) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for item_id, country in Item.objects.filter(project=project).values_list("id", "country"):
        out.setdefault(country, []).append(item_id)
    return out
