"""Names HV gives a sample itself (no name given, or an active sample's rounds) are stored in
English and shown in the page's language (issue 35); a researcher's own name is shown as given."""

from __future__ import annotations

import pytest
from django.template import Context, Template
from django.utils import translation

RENDER = Template("{% load study_labels %}{{ name|sample_name }}")


def shown(name: str, language: str) -> str:
    with translation.override(language):
        return RENDER.render(Context({"name": name}))


@pytest.mark.parametrize(
    ("stored", "language", "expected"),
    [
        ("sample 2026-11-28 02:20", "de", "Stichprobe 2026-11-28 02:20"),
        ("sample 2026-11-28 02:20", "zh-hans", "样本 2026-11-28 02:20"),
        ("active sample 2026-11-28 02:20", "de", "aktive Stichprobe 2026-11-28 02:20"),
        ("unsure items (round 1 of 2)", "de", "unsure items (Runde 1 von 2)"),
        ("unsure items (round 1 of 2)", "zh-hans", "unsure items（第 1 轮，共 2 轮）"),
        ("active sample 2026-11-28 02:20 (round 2 of 3)", "de", "aktive Stichprobe 2026-11-28 02:20 (Runde 2 von 3)"),
        ("sample 2026-11-28 02:20", "en", "sample 2026-11-28 02:20"),
        ("paper subset", "de", "paper subset"),  # the researcher's own name
        ("sample of Germany", "de", "sample of Germany"),
    ],
)
def test_a_generated_sample_name_reads_in_the_page_language(stored, language, expected):
    assert shown(stored, language) == expected


@pytest.mark.django_db
def test_a_sample_drawn_without_a_name_shows_its_name_in_german_on_the_design_page():
    from django.test import Client

    from studies import sampling
    from tests.annotation.factories import make_user
    from tests.studies.design_helpers import strata_project

    owner = make_user("owner", researcher=True)
    project = strata_project(owner, {("China", "food"): 2, ("Germany", "food"): 2})
    sample = sampling.draw_sample(project=project, name="", strata_keys=["country"], per_stratum=1)
    assert sample.name.startswith("sample ")  # stored in English
    client = Client()
    client.force_login(owner)
    client.cookies["django_language"] = "de"
    html = client.get(f"/projects/{project.id}/design/").content.decode()
    assert f"Stichprobe {sample.name.removeprefix('sample ')}" in html
    assert f">{sample.name}<" not in html
