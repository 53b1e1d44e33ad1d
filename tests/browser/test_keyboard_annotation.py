"""Annotating with the keyboard only, in a real headless Chromium against the live server.

Data: ``seed_demo`` (demo users whose passwords equal their usernames, one demo project per
preset with annotator1 and annotator2). Every test logs in as annotator1 through the login
page and then only presses keys (digits, arrows, Tab, Enter, Ctrl+Enter, Escape, ``?``) and
types text; no form control is clicked. What the browser submitted is checked in the
database: ``Annotation.answers`` / ``derived`` / ``revision`` and the assignment's status.

The rules of issue 14, for every preset: Enter on a question and Ctrl+Enter anywhere submit
once the required answers are in (and otherwise go to the first one missing); a digit never
moves the focus into optional text (checked after every key, see ``Session.press``);
conditional questions are marked required when they apply and skipped otherwise; an empty
checklist is confirmed first; and at 390 x 844 the queue and the form fit the screen, with
one scroll and images side by side as thumbnails that open full size.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.core.management import call_command

from annotation.models import Annotation, Assignment, Project
from benchmarks.registry import PRESETS
from demo.management.commands import seed_demo

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

USERNAME = "annotator1"
ANNOTATE_URL = re.compile(r"/a/(\d+)/$")
SUBMIT_KEYS = ("Enter", "Control+Enter")
# Keys that move the focus on purpose, or submit (and may be navigating away when they return).
MOVING_KEYS = {"Tab", "Shift+Tab", "ArrowDown", "ArrowUp", "Enter", "Control+Enter"}
PHONE = {"width": 390, "height": 844}


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
        """Press keys in order. After a key that picks or leaves (a digit, an arrow along a
        scale, Escape) the focus must not have moved into an optional text box (issue 14)."""
        for key in keys:
            self.page.keyboard.press(key)
            if key not in MOVING_KEYS:
                assert not self.focus_in_optional_text(), f"{key!r} moved the focus into optional text"

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

    def focus_in_text(self) -> bool:
        return self.page.evaluate("() => document.activeElement instanceof HTMLTextAreaElement")

    def focus_in_optional_text(self) -> bool:
        return self.page.evaluate(
            "() => { const a = document.activeElement;"
            " return a instanceof HTMLTextAreaElement && !!a.closest('[data-optional-text]'); }"
        )

    def question(self, qid: str):
        return self.page.locator(f".question[data-question={qid}]")

    def is_marked_required(self, qid: str) -> bool:
        """The question shows the required star, and its inputs say so to assistive tech."""
        return self.page.evaluate(
            """(qid) => {
                const q = document.querySelector(`.question[data-question="${qid}"]`);
                const star = q.querySelector('.q-head .req');
                const shown = !!star && !star.hidden && star.offsetParent !== null;
                const units = Array.from(q.querySelectorAll('fieldset.unit'));
                const aria = units.every((u) => u.dataset.type === 'text'
                    ? u.querySelector('textarea').required
                    : u.getAttribute('aria-required') === 'true');
                return shown && aria;
            }""",
            qid,
        )

    def is_skipped(self, qid: str) -> bool:
        """The question is shown as not applying, and its inputs can be neither reached nor sent."""
        return self.page.evaluate(
            """(qid) => {
                const q = document.querySelector(`.question[data-question="${qid}"]`);
                return q.classList.contains('not-applicable')
                    && Array.from(q.querySelectorAll('fieldset.unit')).every((u) => u.disabled);
            }""",
            qid,
        )

    def nothing_posted(self, a: Assignment) -> None:
        assert self.current_assignment().id == a.id
        assert not Annotation.objects.filter(assignment_id=a.id).exists()
        a.refresh_from_db()
        assert a.status == "in_progress"


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
# must be stored. The page starts with the focus on the first unanswered question; a driver
# leaves it on a question (never in a text box), from which the test submits with Enter or
# Ctrl+Enter.
Driver = Callable[[Session, Assignment], tuple[dict, dict]]


def drive_valueground(s: Session, a: Assignment):
    assert s.active_unit() == "q1"
    s.press("2")  # q1 = 2, moves to q2
    assert s.active_unit() == "q2"
    s.press("Tab")  # leave q2 unanswered for now: Tab goes to the q3 fieldset (radios are tabindex=-1)
    assert s.active_unit() == "q3"
    s.press("2", "1")  # q3 = 2, q4 = 1: the focus stays on q4, not in the optional feedback box
    assert s.active_unit() == "q4" and not s.focus_in_text()
    s.press("Enter")  # q2 is still missing: Enter goes there instead of submitting
    assert s.active_unit() == "q2"
    assert "an answer is required" in s.question("q2").inner_text()
    s.nothing_posted(a)
    s.press("1")  # q2 = 1 -> q3
    assert s.active_unit() == "q3"
    assert s.question("q2").locator(".error").count() == 0  # answering clears the message
    s.press("ArrowDown", "Tab")  # q4, then into the optional feedback box on purpose
    assert s.active_unit() == "feedback" and s.focus_in_text()
    s.type("Images are fine.")
    s.press("Shift+Tab")  # back onto q4
    assert s.active_unit() == "q4"
    return (
        {"q1": 2, "q2": 1, "q3": 2, "q4": 1, "feedback": "Images are fine."},
        {"total": pytest.approx(0.875), "accepted": True},
    )


def drive_faithfulness(s: Session, a: Assignment):
    country = a.item.country
    assert country
    faith = s.question("faith")
    # the paper's question, asked about the item's country (annotator1 is from Germany)
    assert f"How well does this image show {a.item.data['activity']} in {country}?" in faith.inner_text()
    assert "your country" not in faith.inner_text()
    # GT-EXAG and GT-HAL run the other way from GT-FAITH and realism, and say so
    for qid in ("exag", "hal"):
        assert s.question(qid).locator("[data-testid=reversed-cue]").inner_text() == (
            "Reversed scale: 1 = best, 5 = worst"
        )
    for qid in ("faith", "realism"):
        assert s.question(qid).locator("[data-testid=reversed-cue]").count() == 0
    assert s.active_unit() == "faith"
    s.press("ArrowRight", "ArrowRight", "ArrowRight")  # along the scale: 1, 2, 3 (does not advance)
    assert s.active_unit() == "faith"
    s.press("ArrowDown")
    s.press("2", "1", "5")  # exag, hal, realism -> the rationale, which is required text
    assert s.active_unit() == "rationale"
    s.type("A plausible family meal; nothing exaggerated.")
    s.press("Shift+Tab")  # back onto realism
    assert s.active_unit() == "realism"
    return (
        {"faith": 3, "exag": 2, "hal": 1, "realism": 5, "rationale": "A plausible family meal; nothing exaggerated."},
        {},
    )


def drive_descriptors(s: Session, a: Assignment):
    n = len(a.item.data["descriptors"])
    assert n >= 2
    marks = [1] * (n - 1) + [0]
    assert s.active_unit() == "descriptor_correct.0"
    s.press(*[str(m) for m in marks])  # one unit per descriptor, each digit advances
    assert s.active_unit() == "coverage"
    s.press("4")  # the last required answer: the optional "missing" box is not focused
    assert s.active_unit() == "coverage" and not s.focus_in_text()
    s.press("Tab")
    assert s.active_unit() == "missing"
    s.type("a samovar")
    s.press("Shift+Tab")
    assert s.active_unit() == "coverage"
    return (
        {"descriptor_correct": marks, "coverage": 4, "missing": "a samovar"},
        {"precision": pytest.approx((n - 1) / n), "reported_missing": 1},
    )


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
    )


def drive_blendvis_image(s: Session, a: Assignment):
    assert s.active_unit() == "verdict"
    assert s.is_skipped("reason_category") and s.is_skipped("reason")
    s.press("1")  # Good: the reason questions stay skipped and the focus stays on the verdict
    assert s.active_unit() == "verdict"
    assert s.is_skipped("reason_category") and s.is_skipped("reason")
    return {"verdict": "G", "reason_category": None, "reason": None}, {"good": 1}


def drive_blendvis_template(s: Session, a: Assignment):
    assert s.active_unit() == "verdict"
    s.press("2")  # Bad: the comment is optional, so the focus stays on the verdict
    assert s.active_unit() == "verdict" and not s.focus_in_text()
    s.press("Tab")
    assert s.active_unit() == "comment"
    s.type("Awkward phrasing.")
    s.press("Shift+Tab")
    assert s.active_unit() == "verdict"
    return {"verdict": "Bad", "comment": "Awkward phrasing."}, {"good": 0}


def drive_story(s: Session, a: Assignment):
    n_rewrites = len(a.item.data["rewrites"])
    n_values = len(a.item.data["values"])
    assert n_rewrites >= 1 and n_values >= 2
    # Each rewrite is labelled in the guide's terms: "Obvious rewrite n", its original line in
    # "Consistent story" and the rewrite (textContent: the labels are upper-cased by CSS).
    first = s.page.locator("fieldset.unit[data-name='rewrite_improvement.0']")
    assert first.locator("legend").text_content().strip() == "Obvious rewrite 1"
    parts = [t.strip() for t in first.locator(".shown-part .field-label").all_text_contents()]
    assert parts == ["Before (line in Consistent story)", "After (Obvious rewrite)"]
    assert first.locator(".shown-part .longtext").nth(0).text_content() == a.item.data["rewrites"][0]["before"]
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
    assert s.active_unit() == "naturalness"
    return (
        {"rewrite_improvement": rewrites, "consistency": consistency, "reflection": reflection, "naturalness": 4},
        {
            "natural": 1,
            "mean_rewrite_improvement": pytest.approx(sum(rewrites) / n_rewrites),
            "consistency_rate": pytest.approx(sum(consistency) / n_values),
            "reflection_rate": pytest.approx(sum(reflection) / n_values),
        },
    )


def drive_turing(s: Session, a: Assignment):
    order = a.presentation["pair_order"]["human_written"]
    assert sorted(order) == ["human_utterance", "model_utterance"]
    sides = s.page.locator(".pair .side .longtext")
    assert sides.nth(0).inner_text() == a.item.data[order[0]]
    assert sides.nth(1).inner_text() == a.item.data[order[1]]
    assert s.active_unit() == "human_written"
    s.press("1")  # "left"
    assert s.active_unit() == "human_written"
    return (
        {"human_written": "left"},
        {"correct": 1 if order[0] == "human_utterance" else 0, "tie": 0},
    )


def drive_value_extraction(s: Session, a: Assignment):
    n = len(a.item.data["values"])
    assert n >= 2
    grades = [(1, 0.5, 0)[i % 3] for i in range(n)]
    # the keys as the form marks them (a choice's keys count its options: 1, 2, 3)
    keys = {
        g: s.page.locator(f"fieldset.unit[data-name='value_extraction.0'] input[value='{g}']").get_attribute("data-key")
        for g in (1, 0.5, 0)
    }
    assert s.active_unit() == "value_extraction.0"
    s.press(*[keys[g] for g in grades])  # one unit per ground-truth value, each key advances
    assert s.active_unit() == f"value_extraction.{n - 1}"
    return {"value_extraction": grades}, {"ve_score": pytest.approx(sum(grades) / n)}


def drive_arena(s: Session, a: Assignment):
    """Pairwise preference: the two responses in the stored random order, the first digit
    chooses the left one; the optional reason is left empty."""
    order = a.presentation["pair_order"]["preference"]
    assert sorted(order) == ["response_a", "response_b"]
    sides = s.page.locator(".pair .side .longtext")
    assert sides.nth(0).inner_text() == a.item.data[order[0]]
    assert sides.nth(1).inner_text() == a.item.data[order[1]]
    assert s.active_unit() == "preference"
    s.press("1")  # "left"
    first_is_a = order[0] == "response_a"
    return (
        {"preference": "left", "reason": None},  # the optional reason left empty is stored as none
        {"a_wins": 1 if first_is_a else 0, "b_wins": 0 if first_is_a else 1, "tie": 0},
    )


DRIVERS: dict[str, Driver] = {
    "arena.preference": drive_arena,
    "valueground.pair_quality": drive_valueground,
    "cultivate.faithfulness": drive_faithfulness,
    "cultivate.descriptors": drive_descriptors,
    "counterfactuals.audit": drive_audit,
    "blendvis.image": drive_blendvis_image,
    "blendvis.template": drive_blendvis_template,
    "cqbench.story": drive_story,
    "cqbench.turing": drive_turing,
    "cqbench.value_extraction": drive_value_extraction,
}
# Researcher-facing notes ("our default wording; the paper does not give it") never reach the
# annotator: not in the form, not in the instructions dialog (issue 14).
RESEARCHER_NOTE = re.compile(r"(?i)\bthe paper\b|\bpaper's\b|\bour default\b")


def complete_item(s: Session, preset_key: str, submit_key: str) -> None:
    """Open the next item, answer it with the preset's driver, submit it with ``submit_key``
    pressed on a question, and check what was stored."""
    a = s.open_next(preset_key)
    assert a.status == "in_progress" and a.opened_at is not None  # opening the page started it
    assert not s.focus_in_text()  # the page starts on a question, never in a text box
    text = s.page.evaluate("() => document.body.textContent")
    assert not RESEARCHER_NOTE.search(text)
    assert not re.search(r"\{[#%]|[#%]\}", text)  # no template comment or tag shown as text
    answers, derived = DRIVERS[preset_key](s, a)
    assert s.active_unit() is not None and not s.focus_in_text()  # submitted from a question
    response = s.submit_with(submit_key)
    assert_moved_on(s, a, response)

    a.refresh_from_db()
    assert a.status == "submitted" and a.submitted_at is not None
    ann = annotation_of(a)
    assert ann.answers == answers
    for key, value in derived.items():
        assert ann.derived[key] == value, (key, ann.derived)
    assert ann.revision == 1
    assert ann.rubric_version_id == a.project.rubric_version_id
    assert ann.duration_ms is not None and ann.duration_ms > 0


def test_every_preset_has_a_keyboard_driver():
    assert set(DRIVERS) == set(PRESETS)


@pytest.mark.parametrize("submit_key", SUBMIT_KEYS)
@pytest.mark.parametrize(("preset_key", "demo_presets"), [(k, (k,)) for k in DRIVERS], ids=list(DRIVERS))
def test_complete_an_item_with_the_keyboard(session, preset_key, submit_key):
    complete_item(session, preset_key, submit_key)


def presets_with(predicate) -> list[str]:
    return [k for k, p in PRESETS.items() if any(predicate(q) for q in p.rubric["questions"])]


CONDITIONAL = presets_with(lambda q: q.get("required_if"))
CHECKLIST = presets_with(lambda q: q["type"] == "checklist")


def test_the_special_cases_are_covered():
    """The presets with a conditional question or a checklist are the ones the tests below
    drive; a preset that adds one needs its own test here."""
    assert CONDITIONAL == ["blendvis.image"]
    assert CHECKLIST == ["counterfactuals.audit"]


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
def test_conditional_questions_are_marked_when_they_apply_and_skipped_otherwise(session):
    """BLEnD-Vis image: "B" makes the failure category and the reason required; with "G" they
    are skipped: not reached by digits or Tab, and not sent, even if answered under "B"."""
    a = session.open_next("blendvis.image")
    page = session.page
    for qid in ("reason_category", "reason"):
        assert session.is_skipped(qid) and not session.is_marked_required(qid)
        assert session.question(qid).locator(".q-cond").inner_text() == (
            "Required when Verdict is B (Bad); skipped otherwise."
        )
    assert session.is_marked_required("verdict")
    assert session.active_unit() == "verdict"
    session.press("Tab")  # nothing to answer after the verdict yet: Tab reaches the submit button
    assert page.evaluate("() => document.activeElement.id") == "submit-btn"
    session.press("Shift+Tab")
    assert session.active_unit() == "verdict"

    session.press("2")  # B: both now apply and are required, and the focus moves on to them
    for qid in ("reason_category", "reason"):
        assert not session.is_skipped(qid) and session.is_marked_required(qid)
    assert session.active_unit() == "reason_category"
    session.press("Enter")  # the category is missing: no submission, the focus stays on it
    assert session.active_unit() == "reason_category"
    assert "an answer is required" in session.question("reason_category").locator("[role=alert]").inner_text()
    session.nothing_posted(a)
    session.press("1")  # Clearly Wrong Subject -> the reason, required text
    assert session.active_unit() == "reason"
    session.type("It shows paella.")
    session.press("Escape", "ArrowUp", "ArrowUp")  # out of the text box, back to the verdict
    assert session.active_unit() == "verdict"

    session.press("1")  # G after all: both are skipped again, the answers given stay unsent
    for qid in ("reason_category", "reason"):
        assert session.is_skipped(qid) and not session.is_marked_required(qid)
    assert session.active_unit() == "verdict"
    session.press("ArrowDown")  # the arrows skip them too
    assert session.active_unit() == "verdict"
    assert_moved_on(session, a, session.submit_with("Enter"))
    assert annotation_of(a).answers == {"verdict": "G", "reason_category": None, "reason": None}


@pytest.mark.parametrize("demo_presets", [("blendvis.image",)])
def test_an_answer_the_server_refuses_shows_errors_and_stores_nothing(session):
    """BLEnD-Vis image: the browser sends a reason that is too short (the server's rule); the
    page comes back with the error, keeps the answers and starts on the question at fault."""
    a = session.open_next("blendvis.image")
    page = session.page
    session.press("2", "3")  # B, Unusably Distorted -> the reason
    assert session.active_unit() == "reason"
    session.type("ab")
    response = session.submit_with("Control+Enter")  # Ctrl+Enter from inside the text box
    assert response.status == 400 and response.request.method == "POST"
    assert session.current_assignment().id == a.id
    assert "at least 3 characters" in page.inner_text(".question[data-question=reason] .error")
    assert page.locator(".question[data-question=verdict] .error").count() == 0
    assert "some answers are missing or invalid" in page.inner_text(".messages")
    assert page.locator("input[name=verdict][value=B]").is_checked()  # the answers given are kept
    assert page.locator("input[name=reason_category][value=distorted]").is_checked()
    assert session.is_marked_required("reason") and not session.is_skipped("reason")
    assert not Annotation.objects.filter(assignment_id=a.id).exists()

    assert session.active_unit() == "reason"  # the page starts on the question with the error
    session.press("Control+End")
    session.type(" - this is not patatas bravas")
    session.press("Shift+Tab")  # onto the category: Ctrl+Enter submits from a question too
    assert session.active_unit() == "reason_category"
    response = session.submit_with("Control+Enter")
    assert_moved_on(session, a, response)
    ann = annotation_of(a)
    assert ann.answers == {
        "verdict": "B",
        "reason_category": "distorted",
        "reason": "ab - this is not patatas bravas",
    }
    assert ann.derived == {"good": 0}


@pytest.mark.parametrize("demo_presets", [("counterfactuals.audit",)])
def test_an_empty_checklist_is_confirmed_before_it_is_submitted(session):
    """Cultural Counterfactuals: nothing ticked is the answer "no failure", but a bare Enter
    must not send it unasked. The confirmation is an in-page dialog (no window.confirm: the
    session fixture fails on any JavaScript dialog); Esc goes back, Enter confirms."""
    a = session.open_next("counterfactuals.audit")
    page = session.page
    confirm = page.locator("dialog#confirm-empty")
    assert session.active_unit() == "flags"
    session.press("Enter")
    confirm.wait_for(state="visible")
    assert "Failure flags" in confirm.inner_text()
    session.nothing_posted(a)
    session.press("Escape")
    confirm.wait_for(state="hidden")
    assert session.active_unit() == "flags"
    session.nothing_posted(a)

    session.press("3", "3")  # ticked and unticked again: still empty, still confirmed first
    session.press("Control+Enter")
    confirm.wait_for(state="visible")
    session.nothing_posted(a)
    response = session.submit_with("Enter")  # confirms
    assert_moved_on(session, a, response)
    ann = annotation_of(a)
    assert ann.answers == {"flags": []}
    assert ann.derived["any_failure"] == 0 and ann.derived["generation_failure"] == 0


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


# ------------------------------------------------------------------------- phone width
def horizontal_overflow(page) -> int:
    """How far the page is wider than the viewport, in CSS pixels (0 when it fits)."""
    return page.evaluate("() => Math.max(0, document.scrollingElement.scrollWidth - window.innerWidth)")


def nested_scrollers(page) -> list[str]:
    """Elements in <main> that scroll vertically inside the page (the rubric was one: issue 14)."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('main *')).filter((el) => {
               const oy = getComputedStyle(el).overflowY;
               return (oy === 'auto' || oy === 'scroll') && el.scrollHeight > el.clientHeight + 1;
           }).map((el) => el.tagName.toLowerCase() + (el.className ? '.' + el.className : ''))"""
    )


def buttons_in_view(page, selector: str) -> list[dict]:
    """Each matched element's box, and whether it lies wholly inside the viewport's width and
    is not clipped by a scrolling ancestor (a table that scrolls sideways hid them)."""
    return page.evaluate(
        """(sel) => Array.from(document.querySelectorAll(sel)).map((el) => {
               const r = el.getBoundingClientRect();
               let clipped = false;
               for (let p = el.parentElement; p; p = p.parentElement) {
                   const b = p.getBoundingClientRect();
                   const ox = getComputedStyle(p).overflowX;
                   if (ox !== 'visible' && (r.left < b.left - 0.5 || r.right > b.right + 0.5)) clipped = true;
               }
               return {text: el.textContent.trim(), left: r.left, right: r.right, width: r.width,
                       inside: r.left >= 0 && r.right <= window.innerWidth && r.width > 0 && !clipped};
           })""",
        selector,
    )


@pytest.mark.parametrize(("preset_key", "demo_presets"), [(k, (k,)) for k in DRIVERS], ids=list(DRIVERS))
def test_usable_on_a_phone(session, preset_key):
    """At 390 x 844: the queues fit with their Start buttons in view, the form is one scroll
    with nothing wider than the screen, every image is a thumbnail at least 100 px wide that
    opens full size (side by side, issue 35), and the keyboard flow still submits."""
    page = session.page
    page.set_viewport_size(PHONE)
    project = session.projects[preset_key]

    session.goto("/")
    assert horizontal_overflow(page) == 0
    starts = buttons_in_view(page, f"tr[data-project='{project.id}'] a.button")
    assert [b["text"] for b in starts] in (["Start"], ["Continue"]), starts
    assert all(b["inside"] for b in starts), starts

    session.goto(f"/projects/{project.id}/queue/")
    assert horizontal_overflow(page) == 0
    rows = buttons_in_view(page, "table.queue td.act a.button")
    assert rows and "Start" in {b["text"] for b in rows}, rows
    assert all(b["inside"] for b in rows), [b for b in rows if not b["inside"]]

    a = session.open_next(preset_key)
    assert horizontal_overflow(page) == 0
    assert nested_scrollers(page) == []
    assert page.evaluate("() => getComputedStyle(document.querySelector('.rubric')).overflowY") == "visible"
    images = page.evaluate(
        """() => Array.from(document.querySelectorAll('.stimulus img')).map((img) => {
               const r = img.getBoundingClientRect();
               const link = img.closest('a');
               return {width: r.width, left: r.left, right: r.right, loaded: img.complete && img.naturalWidth > 0,
                       full: link ? link.getAttribute('href') === img.getAttribute('src') : false};
           })"""
    )
    assert len(images) == len([f for f in project.preset.image_fields() if a.item.data.get(f)])
    for im in images:
        assert im["loaded"] and im["full"], im
        assert im["width"] >= 100 and im["left"] >= 0 and im["right"] <= PHONE["width"], im

    answers, derived = DRIVERS[preset_key](session, a)
    assert horizontal_overflow(page) == 0  # e.g. a client-side "required" message
    assert_moved_on(session, a, session.submit_with("Enter"))
    ann = annotation_of(a)
    assert ann.answers == answers
    for key, value in derived.items():
        assert ann.derived[key] == value, (key, ann.derived)
