"""The researcher's pages at phone width (issue 14: "usable at 390 px, no overflow"), in a real
headless Chromium against the live server, on the demo projects ``seed_demo`` makes.

Every page a researcher works in (project, items, judges, study design, annotators, curation,
agreement, dashboard) fits 390 CSS pixels: wide tables scroll inside their own box, never the
page. The curation page's policy inputs were 24rem wide whatever the screen, 23 px too wide."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotation.models import Project
from benchmarks.registry import PRESETS
from demo.management.commands import seed_demo

from .test_keyboard_annotation import PHONE, horizontal_overflow

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# a pair preset with image fields and a story preset with a list field (the element filter form)
DEMO = ("valueground.pair_quality", "cqbench.story")
PAGES = ("", "items/", "judges/", "design/", "annotators/", "curation/", "agreement/", "dashboard/")


@pytest.fixture
def demo(settings, tmp_path, monkeypatch) -> list[Project]:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast demo logins
    monkeypatch.setattr(seed_demo, "PRESETS", {k: PRESETS[k] for k in DEMO})
    call_command("seed_demo", stdout=io.StringIO())
    return list(Project.objects.filter(name__startswith="Demo: "))


def test_every_researcher_page_fits_a_phone(demo, page, live_server):
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + "/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "researcher")  # demo password == username
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    wide = {}
    for project in demo:
        for sub in PAGES:
            response = page.goto(f"{live_server.url}/projects/{project.id}/{sub}")
            assert response is not None and response.status == 200, (project.preset_key, sub)
            if over := horizontal_overflow(page):
                wide[(project.preset_key, sub)] = over
    assert len(demo) == len(DEMO)
    assert wide == {}, f"pages wider than {PHONE['width']} px (by how many px): {wide}"
