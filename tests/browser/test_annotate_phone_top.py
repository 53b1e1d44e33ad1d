"""The annotate page on a phone (issue 25): it opens at the top of the item, not part-way down at
the first question (ValueGround opened 962 px down, the survey question and Image A off screen);
the first question still holds the focus, and moving with the keyboard still brings each
question into view. Keyboard hints are not shown on a phone, nor in a researcher's read-only
preview of an item."""

from __future__ import annotations

import pytest

from annotation.models import Item

from .test_keyboard_annotation import PHONE, demo, session  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PRESETS = ("valueground.pair_quality", "counterfactuals.audit", "cqbench.story")
IMAGE_PRESETS = ("valueground.pair_quality", "counterfactuals.audit")

IN_VIEW = """() => { const u = document.activeElement && document.activeElement.closest('fieldset.unit');
    if (!u) return null; const r = u.getBoundingClientRect();
    return r.top >= -1 && r.bottom <= window.innerHeight + 1; }"""


#: where the first option of the question with the focus is: the one the next digit answers
FIRST_OPTION = """() => { const u = document.activeElement && document.activeElement.closest('fieldset.unit');
    const o = u && u.querySelector('.opt'); if (!o) return null; const r = o.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, height: window.innerHeight}; }"""


@pytest.fixture
def demo_presets() -> tuple[str, ...]:
    return PRESETS


def test_a_phone_opens_each_item_at_the_top_and_the_keys_still_scroll(session):  # noqa: F811
    page = session.page
    page.set_viewport_size(PHONE)
    for preset_key in PRESETS:
        session.open_next(preset_key)
        page.wait_for_load_state("load")
        assert page.evaluate("window.scrollY") == 0, preset_key
        assert page.locator(".stimulus").bounding_box()["y"] < PHONE["height"] / 2, preset_key
        assert session.active_unit() is not None, preset_key  # the first question has the focus
        # ... and, on the image presets, its first option is on screen: the first digit answers a
        # question the annotator sees (issue 35: on ValueGround it began 1,461 px down an 844 px
        # screen, below two full-width images). CQ-Bench's story is read first, then scrolled.
        if preset_key in IMAGE_PRESETS:
            option = page.evaluate(FIRST_OPTION)
            assert option is not None and option["top"] >= 0 and option["bottom"] <= option["height"], (
                preset_key,
                option,
            )
        assert not page.locator(".annotate-head .keys").is_visible(), preset_key  # no keyboard hints
        units = page.locator("fieldset.unit").count()
        for _ in range(units - 1):
            session.press("ArrowDown")
            assert page.evaluate(IN_VIEW), (preset_key, session.active_unit())


def test_the_keyboard_hints_show_on_a_wide_screen_but_not_in_a_researchers_preview(session, live_server):  # noqa: F811
    page = session.page
    page.set_viewport_size({"width": 1280, "height": 800})
    session.open_next(PRESETS[0])
    assert page.locator(".annotate-head .keys").is_visible()
    assert page.evaluate("window.scrollY") == 0
    # the researcher's read-only view of an item: nothing to press, so no hints
    item = Item.objects.filter(project=session.projects[PRESETS[0]]).first()
    page.context.clear_cookies()
    page.goto(live_server.url + "/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", "researcher")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    response = page.goto(f"{live_server.url}/projects/{item.project_id}/items/{item.id}/preview/")
    assert response is not None and response.status == 200
    assert page.get_by_test_id("preview").is_visible()
    assert page.locator(".keys").count() == 0
