"""Annotating with the keyboard only, in a real headless Chromium against the live server.

Data: ``seed_demo`` (demo users whose passwords equal their usernames, one demo project per
preset with annotator1 and annotator2). Every test logs in as annotator1 through the login
page and then only presses keys (digits, arrows, Tab, Enter, Ctrl+Enter, Escape, ``?``) and
types text; no form control is clicked. What the browser submitted is checked in the
database: ``Annotation.answers`` / ``derived`` / ``revision`` and the assignment's status.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.core.management import call_command

from annotation.management.commands import seed_demo
from annotation.models import Annotation, Assignment, Project
from benchmarks.registry import PRESETS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

USERNAME = "annotator1"
ANNOTATE_URL = re.compile(r"/a/(\d+)/$")


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture
def demo_presets() -> tuple[str, ...]:
    """Which presets ``seed_demo`` seeds for a test (parametrize this name to narrow it)."""
    return tuple(PRESETS)


@pytest.fixture
def demo(settings, tmp_path, monkeypatch, demo_presets) -> dict[str, Project]:
    """The demo projects by preset key, made by the real ``seed_demo`` command (limited to
    ``demo_presets`` to keep image generation short), images under a per-test MEDIA_ROOT."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast demo logins
    monkeypatch.setattr(seed_demo, "PRESETS", {k: PRESETS[k] for k in demo_presets})
    call_command("seed_demo", stdout=io.StringIO())
    projects = {p.preset_key: p for p in Project.objects.filter(name__startswith="Demo: ")}
    assert set(projects) == set(demo_presets)
    return projects


@dataclass
class Session:
    page: Any
    base: str
    projects: dict[str, Project]
    js_errors: list[str] = field(default_factory=list)
    js_dialogs: list[str] = field(default_factory=list)

    # -- navigation
    def goto(self, path: str):
        response = self.page.goto(self.base + path)
        assert response is not None and response.status == 200, (path, response and response.status)
        return response

    def open_next(self, preset_key: str) -> Assignment:
        """Open the project's next item; returns the assignment shown."""
        project = self.projects[preset_key]
        self.goto(f"/projects/{project.id}/next/")
        return self.current_assignment()

    def current_assignment(self) -> Assignment:
        m = ANNOTATE_URL.search(self.page.url)
        assert m, f"not on an annotation page: {self.page.url}"
        return Assignment.objects.select_related("item", "project").get(pk=int(m.group(1)))

    # -- keyboard
    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)

    def submit_with(self, key: str):
        """Press the submitting key and wait for the resulting page; returns its response."""
        with self.page.expect_navigation() as nav:
            self.page.keyboard.press(key)
        response = nav.value
        self.page.wait_for_load_state()
        return response

    def active_unit(self) -> str | None:
        """data-name of the unit holding the focus (a fieldset, or a textarea's fieldset)."""
        return self.page.evaluate(
            "() => { const u = document.activeElement && document.activeElement.closest('fieldset.unit');"
            " return u ? u.dataset.name : null; }"
        )


@pytest.fixture
def session(demo, page, live_server) -> Session:
    s = Session(page=page, base=live_server.url, projects=demo)
    page.on("pageerror", lambda exc: s.js_errors.append(str(exc)))

    def on_dialog(dialog):  # alert/confirm/prompt: must never happen (e.g. injected script)
        s.js_dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    # Log in through the login page, with the keyboard.
    s.goto("/login/")
    page.focus("input[name=username]")
    s.type(USERNAME)
    s.press("Tab")
    s.type(USERNAME)  # demo password == username
    response = s.submit_with("Enter")
    assert response.status == 200
    assert page.url.rstrip("/") == live_server.url.rstrip("/"), page.url
    assert USERNAME in page.inner_text("header")
    yield s
    assert not s.js_dialogs, f"a JavaScript dialog fired: {s.js_dialogs}"
    assert not s.js_errors, f"JavaScript errors on the page: {s.js_errors}"


def annotation_of(assignment: Assignment) -> Annotation:
    return Annotation.objects.get(assignment_id=assignment.id)


def assert_moved_on(s: Session, before: Assignment, response) -> None:
    """After a successful submission: a redirect (POST -> 302) to the rater's next open item,
    or to the done page when none is left."""
    assert response.status == 200, response.status
    assert response.request.method == "GET"
    first = response.request
    while first.redirected_from is not None:
        first = first.redirected_from
    assert first is not response.request and first.method == "POST"
    nxt = (
        Assignment.objects.filter(rater=before.rater, project=before.project, status__in=["assigned", "in_progress"])
        .order_by("position", "id")
        .first()
    )
    if nxt is None:
        assert s.page.url.endswith(f"/projects/{before.project_id}/next/"), s.page.url
        assert "All done" in s.page.inner_text("main")
    else:
        assert s.current_assignment().id == nxt.id != before.id


# ------------------------------------------------------------------ per-preset drivers
# Each driver answers the open item with the keyboard and returns (answers, derived) as they
# must be stored. The page starts with the focus on the first unanswered question.
Driver = Callable[[Session, Assignment], tuple[dict, dict]]


def drive_valueground(s: Session, a: Assignment):
    assert s.active_unit() == "q1"
    s.press("2")  # q1 = 2, moves to q2
    assert s.active_unit() == "q2"
    s.press("Tab")  # leave q2 unanswered for now: Tab goes to the q3 fieldset (radios are tabindex=-1)
    assert s.active_unit() == "q3"
    s.press("2", "1")  # q3 = 2, q4 = 1 -> the feedback textarea
    assert s.active_unit() == "feedback"
    s.type("Images are fine.")
    s.press("Escape")  # leave the textarea
    s.press("ArrowUp", "ArrowUp", "ArrowUp")  # feedback -> q4 -> q3 -> q2
    assert s.active_unit() == "q2"
    s.press("1")
    return (
        {"q1": 2, "q2": 1, "q3": 2, "q4": 1, "feedback": "Images are fine."},
        {"total": pytest.approx(0.875), "accepted": True},
    ), "Enter"


def drive_faithfulness(s: Session, a: Assignment):
    assert s.active_unit() == "faith"
    s.press("ArrowRight", "ArrowRight", "ArrowRight")  # along the scale: 1, 2, 3 (does not advance)
    assert s.active_unit() == "faith"
    s.press("ArrowDown")
    s.press("2", "1", "5")  # exag, hal, realism -> the rationale textarea
    assert s.active_unit() == "rationale"
    s.type("A plausible family meal; nothing exaggerated.")
    return (
        {"faith": 3, "exag": 2, "hal": 1, "realism": 5, "rationale": "A plausible family meal; nothing exaggerated."},
        {},
    ), "Control+Enter"


def drive_descriptors(s: Session, a: Assignment):
    n = len(a.item.data["descriptors"])
    assert n >= 2
    marks = [1] * (n - 1) + [0]
    assert s.active_unit() == "descriptor_correct.0"
    s.press(*[str(m) for m in marks])  # one unit per descriptor, each digit advances
    assert s.active_unit() == "coverage"
    s.press("4")
    assert s.active_unit() == "missing"
    s.type("a samovar")
    return (
        {"descriptor_correct": marks, "coverage": 4, "missing": "a samovar"},
        {"precision": pytest.approx((n - 1) / n), "reported_missing": 1},
    ), "Control+Enter"


def drive_audit(s: Session, a: Assignment):
    assert s.active_unit() == "flags"
    s.press("2", "4", "5", "5")  # digits toggle flags and stay; 5 toggled twice = off
    assert s.active_unit() == "flags"
    return (
        {"flags": ["context_counterfactual", "person_missing"]},
        {
            "flag_context_source": 0,
            "flag_context_counterfactual": 1,
            "flag_person_missing": 1,
            "flag_attributes": 0,
            "any_failure": 1,
            "generation_failure": 1,
        },
    ), "Enter"


def drive_blendvis_image(s: Session, a: Assignment):
    assert s.active_unit() == "verdict"
    s.press("1")  # Good: the reason questions are not required
    return ({"verdict": "G", "reason_category": None, "reason": None}, {"good": 1}), "Enter"


def drive_blendvis_template(s: Session, a: Assignment):
    assert s.active_unit() == "verdict"
    s.press("2")  # Bad -> the optional comment textarea
    assert s.active_unit() == "comment"
    s.type("Awkward phrasing.")
    return ({"verdict": "Bad", "comment": "Awkward phrasing."}, {"good": 0}), "Control+Enter"


def drive_story(s: Session, a: Assignment):
    n_rewrites = len(a.item.data["rewrites"])
    n_values = len(a.item.data["values"])
    assert n_rewrites >= 1 and n_values >= 2
    rewrites = [(3, 5, 0, 2, 4)[i % 5] for i in range(n_rewrites)]
    consistency = [0 if i == 1 else 1 for i in range(n_values)]
    reflection = [0 if i == n_values - 1 else 1 for i in range(n_values)]
    assert s.active_unit() == "rewrite_improvement.0"
    s.press(*map(str, rewrites))
    assert s.active_unit() == "consistency.0"
    s.press(*map(str, consistency))
    assert s.active_unit() == "reflection.0"
    s.press(*map(str, reflection))
    assert s.active_unit() == "naturalness"
    s.press("4")
    return (
        {"rewrite_improvement": rewrites, "consistency": consistency, "reflection": reflection, "naturalness": 4},
        {
            "natural": 1,
            "mean_rewrite_improvement": pytest.approx(sum(rewrites) / n_rewrites),
            "consistency_rate": pytest.approx(sum(consistency) / n_values),
            "reflection_rate": pytest.approx(sum(reflection) / n_values),
        },
    ), "Enter"


def drive_turing(s: Session, a: Assignment):
    order = a.presentation["pair_order"]["human_written"]
    assert sorted(order) == ["human_utterance", "model_utterance"]
    sides = s.page.locator(".pair .side .longtext")
    assert sides.nth(0).inner_text() == a.item.data[order[0]]
    assert sides.nth(1).inner_text() == a.item.data[order[1]]
    assert s.active_unit() == "human_written"
    s.press("1")  # "left"
    return (
        {"human_written": "left"},
        {"correct": 1 if order[0] == "human_utterance" else 0, "tie": 0},
    ), "Enter"


DRIVERS: dict[str, Driver] = {
    "valueground.pair_quality": drive_valueground,
    "cultivate.faithfulness": drive_faithfulness,
    "cultivate.descriptors": drive_descriptors,
    "counterfactuals.audit": drive_audit,
    "blendvis.image": drive_blendvis_image,
    "blendvis.template": drive_blendvis_template,
    "cqbench.story": drive_story,
    "cqbench.turing": drive_turing,
}


def test_every_preset_has_a_keyboard_driver():
    assert set(DRIVERS) == set(PRESETS)


@pytest.mark.parametrize(("preset_key", "demo_presets"), [(k, (k,)) for k in DRIVERS], ids=list(DRIVERS))
def test_complete_an_item_with_the_keyboard(session, preset_key):
    a = session.open_next(preset_key)
    assert a.status == "in_progress" and a.opened_at is not None  # opening the page started it
    (answers, derived), submit_key = DRIVERS[preset_key](session, a)
    response = session.submit_with(submit_key)
    assert_moved_on(session, a, response)

    a.refresh_from_db()
    assert a.status == "submitted" and a.submitted_at is not None
    ann = annotation_of(a)
    assert ann.answers == answers
    for key, value in derived.items():
        assert ann.derived[key] == value, (key, ann.derived)
    assert ann.revision == 1
    assert ann.rubric_version_id == a.project.rubric_version_id
    assert ann.duration_ms is not None and ann.duration_ms > 0


# --------------------------------------------------------------------- other behaviour
@pytest.mark.parametrize("demo_presets", [("valueground.pair_quality",)])
def test_question_mark_toggles_the_instructions_dialog(session):
    session.open_next("valueground.pair_quality")
    dialog = session.page.locator("dialog#instructions")
    assert not dialog.is_visible()
    session.press("?")
    dialog.wait_for(state="visible")
    assert "ValueGround" in dialog.inner_text()
    session.press("?")
    dialog.wait_for(state="hidden")
    session.press("?")
    dialog.wait_for(state="visible")
    session.press("Escape")
    dialog.wait_for(state="hidden")
    # keys reach the form again once it is closed, and nothing was picked while it was open
    assert session.page.locator("input[name=q1]:checked").count() == 0
    session.page.focus("fieldset.unit[data-name=q1]")
    session.press("1")
    assert session.page.locator("input[name=q1][value='1']").is_checked()


@pytest.mark.parametrize("demo_presets", [("blendvis.image",)])
def test_missing_required_answer_shows_errors_and_stores_nothing(session):
    """BLEnD-Vis image: verdict B makes the reason category and the reason text required."""
    a = session.open_next("blendvis.image")
    session.press("2")  # B(ad), then submit without the reasons
    assert session.active_unit() == "reason_category"
    response = session.submit_with("Enter")
    assert response.status == 400 and response.request.method == "POST"
    assert session.current_assignment().id == a.id
    page = session.page
    assert "an answer is required" in page.inner_text(".question[data-question=reason_category] .error")
    assert "an answer is required" in page.inner_text(".question[data-question=reason] .error")
    assert page.locator(".question[data-question=verdict] .error").count() == 0
    assert "some answers are missing or invalid" in page.inner_text(".messages")
    assert page.locator("input[name=verdict][value=B]").is_checked()  # the answer given is kept
    assert not Annotation.objects.filter(assignment_id=a.id).exists()
    a.refresh_from_db()
    assert a.status == "in_progress"

    # The page starts on the first question with an error; too short a reason is refused too.
    assert session.active_unit() == "reason_category"
    session.press("3")  # distorted -> the reason textarea
    assert session.active_unit() == "reason"
    session.type("ab")
    response = session.submit_with("Control+Enter")
    assert response.status == 400
    assert "at least 3 characters" in page.inner_text(".question[data-question=reason] .error")
    assert page.locator("input[name=reason_category][value=distorted]").is_checked()
    assert not Annotation.objects.filter(assignment_id=a.id).exists()

    assert session.active_unit() == "reason"
    session.press("Control+End")
    session.type(" - this is not patatas bravas")
    response = session.submit_with("Control+Enter")
    assert_moved_on(session, a, response)
    ann = annotation_of(a)
    assert ann.answers == {
        "verdict": "B",
        "reason_category": "distorted",
        "reason": "ab - this is not patatas bravas",
    }
    assert ann.derived == {"good": 0}


@pytest.mark.parametrize("demo_presets", [("cqbench.story",)])
def test_item_text_with_script_is_shown_as_text(session):
    project = session.projects["cqbench.story"]
    target = next(
        a
        for a in Assignment.objects.filter(project=project, rater__user__username=USERNAME).select_related("item")
        if "<script>" in a.item.data["story"]
    )
    session.goto(f"/a/{target.id}/")
    page = session.page
    story = page.inner_text(".stimulus")
    assert "<script>alert(1)</script>" in story
    assert page.locator(".stimulus script").count() == 0
    assert page.evaluate("() => document.querySelectorAll('main script').length") == 0
    page.wait_for_timeout(300)
    assert session.js_dialogs == []


@pytest.mark.parametrize("demo_presets", [("blendvis.template",)])
def test_skip_with_a_reason(session):
    a = session.open_next("blendvis.template")
    page = session.page
    page.focus("details.skip > summary")
    session.press("Enter")  # opens the <details>
    page.locator("details.skip input[name=reason]").wait_for(state="visible")
    session.press("Tab")
    assert page.evaluate("() => document.activeElement.name") == "reason"
    session.type("I do not know this culture")
    response = session.submit_with("Enter")
    assert_moved_on(session, a, response)
    a.refresh_from_db()
    assert a.status == "skipped"
    assert a.skip_reason == "I do not know this culture"
    assert not Annotation.objects.filter(assignment_id=a.id).exists()


@pytest.mark.parametrize("demo_presets", [("cqbench.turing",)])
def test_edit_an_earlier_answer_from_the_queue(session):
    first = session.open_next("cqbench.turing")
    session.press("1")  # left
    assert_moved_on(session, first, session.submit_with("Enter"))
    order = first.presentation["pair_order"]["human_written"]
    ann = annotation_of(first)
    assert ann.answers == {"human_written": "left"} and ann.revision == 1

    project = session.projects["cqbench.turing"]
    session.goto(f"/projects/{project.id}/queue/")
    page = session.page
    page.focus(f"a[href='/a/{first.id}/']")
    with page.expect_navigation():
        session.press("Enter")
    assert session.current_assignment().id == first.id
    assert "submitted — editing" in page.inner_text(".annotate-head")
    assert page.locator("input[name=human_written][value=left]").is_checked()
    assert page.locator("input[name=mode]").get_attribute("value") == "edit"
    assert session.active_unit() == "human_written"
    session.press("3")  # tie
    session.press("ArrowLeft")  # tie -> right, along the options
    assert page.locator("input[name=human_written][value=right]").is_checked()
    response = session.submit_with("Enter")
    assert_moved_on(session, first, response)

    ann.refresh_from_db()
    assert ann.answers == {"human_written": "right"}
    assert ann.revision == 2
    assert ann.derived == {"correct": 1 if order[1] == "human_utterance" else 0, "tie": 0}
    first.refresh_from_db()
    assert first.status == "submitted"
    assert Annotation.objects.filter(assignment_id=first.id).count() == 1
