"""An annotator who reads Chinese, in headless Chromium: picks 简体中文 with the switcher on the
login page, logs in, and annotates a BLEnD-Vis template item whose rubric is shown in its Chinese
translation; the keyboard's messages (annotate.js) come in Chinese too, and the answer is stored
with the wording it was given under."""

from __future__ import annotations

import re

import pytest

from annotation import importing, projects
from annotation.models import Annotation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def annotator(settings, tmp_path):
    from django.contrib.auth import get_user_model

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    users = get_user_model().objects
    owner = users.create_user("owner", password="x")
    annotator = users.create_user("li", password="pw-li")
    project = projects.create_project(name="Templates", preset_key="blendvis.template", created_by=owner, k_per_item=1)
    projects.add_member(project=project, user=annotator, role="annotator")
    records = '{"id": "t1", "original_template": "What is eaten in {country}?", "rephrased_template": "Where is {answer} eaten?"}'
    assert importing.import_items(project=project, data=records, data_format="jsonl").ok
    return annotator


def test_an_annotator_works_in_chinese(annotator, page, live_server):
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/login/")
    assert page.inner_text("h1") == "Log in"
    with page.expect_navigation():
        page.click("form.languages button[value=zh-hans]")
    assert page.inner_text("h1") == "登录" and page.get_attribute("html", "lang") == "zh-hans"
    page.fill("input[name=username]", "li")
    page.fill("input[name=password]", "pw-li")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert "我的队列" in page.content()
    with page.expect_navigation():
        page.click("a.button.primary")  # 开始
    assert re.search(r"/a/\d+/$", page.url), page.url
    assert "改写后的问题是否准确地反转了原始问题，同时保持清晰？" in page.inner_text(".rubric")
    assert "Where is {answer} eaten?" in page.inner_text(".stimulus")  # the item itself is as imported
    # Enter with the verdict missing: annotate.js says so in the page's language
    page.keyboard.press("Enter")
    assert page.inner_text(".client-error") == "需要回答"
    page.keyboard.press("?")
    assert "BLEnD-Vis 改写模板验证" in page.inner_text("#instructions")
    page.keyboard.press("?")
    page.keyboard.press("1")  # Good
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "全部完成" in page.inner_text("h1")
    stored = Annotation.objects.get(rater__user=annotator)
    assert stored.answers["verdict"] == "Good" and stored.locale == "zh-hans"
    assert errors == []
