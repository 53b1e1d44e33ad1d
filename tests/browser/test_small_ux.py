"""The smaller points of issue 25, in real headless Chromium on the CQ-Bench story demo:

- the sample's "Preview counts" and the curation "Preview" answer in place (htmx), writing nothing;
- making an API token redirects (a reload makes no second token; the token is shown once);
- saving an edited answer says so; "All done" puts the focus on its heading;
- a favicon; Swagger links back to the platform."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from accounts.models import ApiToken
from annotation.models import Assignment, Project
from benchmarks.registry import PRESETS
from curation.models import AcceptancePolicy, ItemDecision
from demo.management.commands import seed_demo
from studies.models import Sample

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PRESET = "cqbench.story"
WIDE = {"width": 1280, "height": 800}


@pytest.fixture
def demo(settings, tmp_path, monkeypatch) -> Project:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast demo logins
    monkeypatch.setattr(seed_demo, "PRESETS", {PRESET: PRESETS[PRESET]})
    call_command("seed_demo", stdout=io.StringIO())
    return Project.objects.get(preset_key=PRESET, name__startswith="Demo: ")


def log_in(page, base: str, username: str) -> None:
    page.context.clear_cookies()
    page.goto(base + "/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", username)  # demo password == username
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()


def mark_page(page) -> None:
    """A mark that a page load would wipe: still there means the answer came in place."""
    page.evaluate("window.__hvMark = 1")


def test_previews_answer_in_place_and_write_nothing(demo, page, live_server):
    page.set_viewport_size(WIDE)
    log_in(page, live_server.url, "researcher")
    page.goto(f"{live_server.url}/projects/{demo.id}/design/")
    samples, options = Sample.objects.count(), dict(Project.objects.get(pk=demo.pk).options)
    mark_page(page)
    page.get_by_role("button", name="Preview counts").click()
    preview = page.get_by_test_id("sample-preview")
    preview.wait_for()
    assert page.evaluate("window.__hvMark") == 1 and page.url.endswith("/design/")
    assert Sample.objects.count() == samples

    decisions, policies = ItemDecision.objects.count(), AcceptancePolicy.objects.count()
    page.goto(f"{live_server.url}/projects/{demo.id}/curation/")
    mark_page(page)
    button = page.get_by_role("button", name="Preview", exact=True)
    button.scroll_into_view_if_needed()
    button.click()
    table = page.locator("#preview [data-testid=preview]")
    table.wait_for()
    assert page.evaluate("window.__hvMark") == 1
    box = table.bounding_box()
    assert box is not None and box["y"] < WIDE["height"], box  # shown where it was asked for
    assert ItemDecision.objects.count() == decisions and AcceptancePolicy.objects.count() == policies
    assert dict(Project.objects.get(pk=demo.pk).options) == options


def test_a_new_token_survives_no_reload_and_is_shown_once(demo, page, live_server):
    log_in(page, live_server.url, "researcher")
    page.goto(live_server.url + "/account/tokens/")
    page.fill("input[name=name]", "nightly export")
    with page.expect_navigation():
        page.get_by_role("button", name="Make a token").click()
    assert page.url.endswith("/account/tokens/")
    assert page.get_by_test_id("new-token").is_visible()
    assert ApiToken.objects.count() == 1
    page.reload()  # a GET: nothing made, the token not shown again
    assert ApiToken.objects.count() == 1
    assert page.get_by_test_id("new-token").count() == 0


def test_an_edit_is_confirmed_and_all_done_takes_the_focus(demo, page, live_server):
    mine = Assignment.objects.filter(project=demo, rater__user__username="annotator1")
    submitted = mine.filter(status=Assignment.Status.SUBMITTED).first()
    assert submitted is not None
    mine.exclude(pk=submitted.pk).update(status=Assignment.Status.SKIPPED)  # nothing left to do
    log_in(page, live_server.url, "annotator1")
    page.goto(f"{live_server.url}/a/{submitted.id}/")
    with page.expect_navigation():
        page.locator("#submit-btn").click()
    assert "Your changes are saved." in page.locator(".messages").inner_text()
    page.goto(f"{live_server.url}/projects/{demo.id}/next/")
    assert page.evaluate("document.activeElement.tagName") == "H1"


def test_a_favicon_and_a_way_back_from_swagger(demo, page, live_server):
    log_in(page, live_server.url, "researcher")
    href = page.locator("link[rel=icon]").get_attribute("href")
    assert href and page.request.get(live_server.url + href).status == 200
    page.goto(live_server.url + "/api/docs/")
    back = page.get_by_test_id("api-back").locator("a").first
    with page.expect_navigation():
        back.click()
    assert page.url.rstrip("/") == live_server.url.rstrip("/")
