"""The UI speaks the annotator's language (issue 14): every annotator page in English, Simplified
Chinese and German; the switcher, kept in the account's preferences (not the rater's profile,
issue 25); the rubric's own translation on
the annotate page; and the wording an answer was given under, stored with it by the form and the
API alike."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from accounts import services as account_services
from accounts.models import Preference
from annotation import importing, projects
from annotation.models import Annotation, Assignment, Rater
from benchmarks.registry import get_preset
from tests.annotation.factories import jsonl, make_project, valueground_records

pytestmark = pytest.mark.django_db

LANGUAGES = ("en", "zh-hans", "de")


def client(user=None, language: str | None = None) -> Client:
    c = Client()
    if language:
        c.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    if user is not None:
        c.force_login(user)
    return c


@pytest.fixture
def valueground(researcher, annotators, tmp_path):
    project = make_project("valueground.pair_quality", owner=researcher, annotators=annotators, k=2)
    report = importing.import_items(
        project=project, data=jsonl(valueground_records(tmp_path, n=2)), data_format="jsonl", images=tmp_path
    )
    assert report.ok, report.errors
    return project


def first_assignment(project, user) -> Assignment:
    return Assignment.objects.filter(project=project, rater__user=user).order_by("position", "id").first()


# What each page says, per language (a few strings each; the catalogs' completeness is checked
# in tests/test_locale_catalogs.py).
PAGES = {
    "login": {
        "en": ["Log in", "Username", "Password"],
        "zh-hans": ["登录", "用户名", "密码"],
        "de": ["Anmelden", "Benutzername", "Passwort"],
    },
    "home": {
        "en": ["My queue", "Progress (done / assigned)", "Start", "Log out"],
        "zh-hans": ["我的队列", "进度（已完成 / 已分配）", "开始", "退出登录"],
        "de": ["Meine Warteschlange", "Fortschritt (erledigt / zugewiesen)", "Starten", "Abmelden"],
    },
    "queue": {
        "en": ["my queue", "Next item", "Assigned", "0 / 2 done"],
        "zh-hans": ["我的队列", "下一个条目", "已分配", "已完成 0 / 2"],
        "de": ["meine Warteschlange", "Nächstes Item", "Zugewiesen", "0 / 2 erledigt"],
    },
    "annotate": {
        "en": ["Submit", "Skip this item", "Keyboard", "(optional)", "Submit with nothing ticked?"],
        "zh-hans": ["提交", "跳过这个条目", "键盘", "（选填）", "不勾选任何项就提交吗？"],
        "de": ["Absenden", "Dieses Item überspringen", "Tastatur", "(optional)", "Ohne Häkchen absenden?"],
    },
    "done": {
        "en": ["All done in", "You have submitted 0 of 0 items. Thank you.", "Review my answers"],
        "zh-hans": ["已全部完成", "你已提交 0 个条目中的 0 个。谢谢。", "查看我的答案"],
        "de": ["Alles erledigt in", "Sie haben 0 von 0 Items abgesendet. Vielen Dank.", "Meine Antworten ansehen"],
    },
    "tokens": {
        "en": ["API tokens", "Make a token", "No tokens yet."],
        "zh-hans": ["API 令牌", "创建令牌", "还没有令牌。"],
        "de": ["API-Tokens", "Token erstellen", "Noch keine Tokens."],
    },
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_language_renders_the_annotator_pages_translated(language, valueground, annotators, researcher):
    ann = annotators[0]
    a = first_assignment(valueground, ann)
    empty = make_project("blendvis.template", owner=researcher, annotators=[ann], name="Empty")
    urls = {
        "login": (None, "/login/"),
        "home": (ann, "/"),
        "queue": (ann, f"/projects/{valueground.id}/queue/"),
        "annotate": (ann, f"/a/{a.id}/"),
        "done": (ann, f"/projects/{empty.id}/next/"),
        "tokens": (ann, "/account/tokens/"),
    }
    for page, (user, url) in urls.items():
        r = client(user, language).get(url)
        assert r.status_code == 200, (page, r.status_code)
        html = r.content.decode()
        assert f'<html lang="{language}">' in html, page
        for text in PAGES[page][language]:
            assert text in html, (page, language, text)
        assert r["Content-Language"] == language


def test_the_browser_language_is_used_when_nothing_was_chosen(annotators):
    for accept, language, text in [
        ("zh-CN,zh;q=0.9", "zh-hans", "退出登录"),
        ("de-DE,de;q=0.9,en;q=0.5", "de", "Abmelden"),
        ("fr-FR", "en", "Log out"),
    ]:
        html = client(annotators[0]).get("/", HTTP_ACCEPT_LANGUAGE=accept).content.decode()
        assert f'<html lang="{language}">' in html and text in html, accept


def test_the_switcher_sets_the_language_and_keeps_it_in_the_preferences(valueground, annotators):
    ann = annotators[0]
    c = client(ann)
    page = c.get("/").content.decode()
    assert 'name="language" value="zh-hans"' in page and 'name="language" value="de"' in page
    r = c.post("/account/language/", {"language": "de", "next": f"/projects/{valueground.id}/queue/"})
    assert r.status_code == 302 and r["Location"] == f"/projects/{valueground.id}/queue/"
    assert r.cookies[settings.LANGUAGE_COOKIE_NAME].value == "de"
    assert "Nächstes Item" in c.get(r["Location"]).content.decode()
    assert account_services.preferred_language(ann) == "de"
    assert Preference.objects.get(user=ann).ui_language == "de"
    # a preference of the account, not a profile attribute rules match on and exports carry
    assert "ui_language" not in projects.rater_for_user(ann).attributes
    # another browser: logging in brings the language back
    other = Client()
    r = other.post("/login/", {"username": ann.username, "password": "pw-" + ann.username})
    assert r.status_code == 302 and r.cookies[settings.LANGUAGE_COOKIE_NAME].value == "de"
    assert "Meine Warteschlange" in other.get("/").content.decode()
    # a language the UI does not have is refused by Django's set_language: nothing changes
    r = c.post("/account/language/", {"language": "fr", "next": "/"})
    assert r.status_code == 302 and settings.LANGUAGE_COOKIE_NAME not in r.cookies
    assert account_services.preferred_language(ann) == "de"
    # choosing again replaces the choice; the profile stays as the researcher set it
    attributes = dict(projects.rater_for_user(ann).attributes)
    c.post("/account/language/", {"language": "zh-hans", "next": "/"})
    assert account_services.preferred_language(ann) == "zh-hans"
    assert Preference.objects.filter(user=ann).count() == 1
    assert projects.rater_for_user(ann).attributes == attributes


def test_anyone_may_switch_and_an_account_keeps_it(researcher):
    r = client().post("/account/language/", {"language": "zh-hans", "next": "/login/"})
    assert r.status_code == 302 and r.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert not Preference.objects.exists()  # nobody logged in: the cookie alone keeps it
    # a researcher who never annotated has no rater profile: the account keeps the choice all the same
    r = client(researcher).post("/account/language/", {"language": "de", "next": "/"})
    assert r.cookies[settings.LANGUAGE_COOKIE_NAME].value == "de"
    assert account_services.preferred_language(researcher) == "de"
    assert not Rater.objects.filter(user=researcher).exists()  # and no profile was made for it
    assert client().get("/account/language/").status_code == 405


# ------------------------------------------------------------------------- the rubric's wording
def test_the_annotate_page_shows_the_rubric_in_the_annotators_language(valueground, annotators):
    a = first_assignment(valueground, annotators[0])
    zh = client(annotators[0], "zh-hans").get(f"/a/{a.id}/").content.decode()
    assert "Q1（与选项 o_a 的语义一致性）" in zh  # the prompt
    assert "图像 B 清楚且完整地符合 o_b。" in zh  # an anchor of Q2
    assert "修改反馈" in zh and "ValueGround 图像对质量" in zh  # a label, the instructions' title
    assert "公式 7：仅当 Q1 + Q2 &gt;= 3" in zh  # the acceptance rule's description
    assert "Very" in zh and "Not at all" in zh  # the item's own text fills the prompt
    assert "调查问题（q）" in zh and 'alt="图像 A"' in zh  # the item's fields under translated labels
    assert "Image B clearly and completely matches o_b." not in zh
    assert '<input type="hidden" name="locale" value="zh-hans">' in zh
    assert "该评分细则译自原始英文措辞，以原文为准。" in zh and "?wording=original" in zh
    de = client(annotators[0], "de").get(f"/a/{a.id}/").content.decode()
    assert "Bild B passt klar und vollständig zu o_b." in de and "Umfragefrage (q)" in de
    assert '<input type="hidden" name="locale" value="de">' in de
    # the paper's wording on request, and in English (no note: it is the UI's language)
    original = client(annotators[0], "zh-hans").get(f"/a/{a.id}/?wording=original").content.decode()
    assert "Image B clearly and completely matches o_b." in original and "提交" in original
    assert '<input type="hidden" name="locale" value="en">' in original and "显示译文" in original
    en = client(annotators[0], "en").get(f"/a/{a.id}/").content.decode()
    assert "Image B clearly and completely matches o_b." in en and 'data-testid="wording-note"' not in en
    assert '<input type="hidden" name="locale" value="en">' in en


def test_a_rubric_without_a_translation_is_shown_in_its_own_wording_with_a_note(researcher, annotators):
    # every preset is translated now; a project still on a rubric version stored before its
    # translations were (or on a rubric without any) shows the paper's wording, with a note
    project = make_project("cqbench.turing", owner=researcher, annotators=annotators[:1], k=1)
    schema = {k: v for k, v in get_preset("cqbench.turing").rubric.items() if k != "translations"}
    project.rubric_version = projects.rubric_version_for(rubric_key="cqbench.turing", schema=schema)
    project.save(update_fields=["rubric_version"])
    importing.import_items(
        project=project,
        data=jsonl([{"id": "t1", "human_utterance": "hi", "model_utterance": "hello"}]),
        data_format="jsonl",
    )
    a = first_assignment(project, annotators[0])
    html = client(annotators[0], "de").get(f"/a/{a.id}/").content.decode()
    assert "ist nicht auf Deutsch übersetzt" in html
    assert "Which utterance is human-written?" in html
    assert '<input type="hidden" name="locale" value="en">' in html
    assert ">Links<" in html and ">Rechts<" in html  # the pair's sides are the form's words


# CULTIVate and CQ-Bench are translated like the others: their annotate pages show the rubric
# in the annotator's language, with the translation's note, and store that wording.
TRANSLATED_PAGES = {
    "cultivate.descriptors": (
        {
            "id": "d1",
            "country": "Japan",
            "activity": "a tea ceremony",
            "descriptors": ["tatami mats", "a kimono"],
        },
        {
            "zh-hans": ["描述项是否正确？", "这个关于Japan的a tea ceremony的描述项正确吗？", "描述项 2", "参考描述项"],
            "de": ["Deskriptor korrekt?", "Ist dieser Deskriptor für a tea ceremony in Japan korrekt?", "Deskriptor 2"],
        },
        "Descriptor correct?",
    ),
    "cqbench.story": (
        {
            "id": "s1",
            "country": "Japan",
            "story": "Haruto: Shall we wait for Grandma?\nMei: Of course.",
            "values": [{"statement": "Respect for elders", "attitude": "agree"}],
            "rewrites": [{"before": "We must respect elders.", "after": "Shall we wait for Grandma?"}],
        },
        {
            "zh-hans": ["B) 每个价值观的一致性", "C) 每个价值观的体现", "显性句改写 1", "最终故事", "陈述"],
            "de": ["B) Konsistenz pro Wert", "C) Widerspiegelung pro Wert", "Umformulierung 1", "Aussage"],
        },
        "B) Consistency per value",
    ),
    "cqbench.turing": (
        {"id": "t1", "human_utterance": "hi", "model_utterance": "hello"},
        {"zh-hans": ["哪条话语是人写的？"], "de": ["Welche Äußerung stammt von einem Menschen?"]},
        "Which utterance is human-written?",
    ),
}


@pytest.mark.parametrize("language", ["zh-hans", "de"])
@pytest.mark.parametrize("key", sorted(TRANSLATED_PAGES))
def test_cultivate_and_cqbench_annotate_pages_show_the_translation(key, language, researcher, annotators):
    record, texts, english = TRANSLATED_PAGES[key]
    project = make_project(key, owner=researcher, annotators=annotators[:1], k=1)
    report = importing.import_items(project=project, data=jsonl([record]), data_format="jsonl")
    assert report.ok, report.errors
    a = first_assignment(project, annotators[0])
    html = client(annotators[0], language).get(f"/a/{a.id}/").content.decode()
    for text in texts[language]:
        assert text in html, (key, language, text)
    assert english not in html
    assert f'<input type="hidden" name="locale" value="{language}">' in html
    assert "?wording=original" in html and "ist nicht auf Deutsch übersetzt" not in html
    original = client(annotators[0], language).get(f"/a/{a.id}/?wording=original").content.decode()
    assert english in original and '<input type="hidden" name="locale" value="en">' in original


# ------------------------------------------------------------------------- the stored wording
def test_the_form_stores_the_wording_it_was_rendered_in(valueground, annotators):
    ann = annotators[0]
    a = first_assignment(valueground, ann)
    c = client(ann, "zh-hans")
    answers = {"q1": "2", "q2": "1", "q3": "2", "q4": "1", "mode": "submit"}
    r = c.post(f"/a/{a.id}/", {**answers, "locale": "zh-hans"})
    assert r.status_code == 302
    assert Annotation.objects.get(assignment=a).locale == "zh-hans"
    # an edit stores the wording of the edit
    r = c.post(f"/a/{a.id}/?wording=original", {**answers, "q1": "1", "mode": "edit", "locale": "en"})
    assert r.status_code == 302
    stored = Annotation.objects.get(assignment=a)
    assert (stored.answers["q1"], stored.locale, stored.revision) == (1, "en", 2)


def test_a_wording_the_rubric_does_not_have_is_refused(valueground, annotators):
    ann = annotators[0]
    a = first_assignment(valueground, ann)
    r = client(ann, "de").post(
        f"/a/{a.id}/", {"q1": "2", "q2": "1", "q3": "2", "q4": "1", "mode": "submit", "locale": "fr"}
    )
    assert r.status_code == 400
    assert "Dieses Bewertungsschema gibt es nicht in fr" in r.content.decode()
    assert not Annotation.objects.filter(assignment=a).exists()


ANSWERS = {"q1": 2, "q2": 1, "q3": 2, "q4": 1}


@pytest.mark.parametrize("lean", [True, False], ids=["lean-path", "drf-view"])
def test_the_api_stores_the_wording_its_client_names(valueground, annotators, settings, lean):
    settings.HV_LEAN_API = lean
    ann = annotators[0]
    a, b = Assignment.objects.filter(project=valueground, rater__user=ann).order_by("position", "id")[:2]
    c = client(ann)
    detail = c.get(f"/api/assignments/{a.id}/").json()
    assert set(detail["rubric"]["translations"]) == {"zh-hans", "de"}  # a client can show them
    r = c.post(
        f"/api/assignments/{a.id}/submit/", {"answers": ANSWERS, "locale": "de"}, content_type="application/json"
    )
    assert r.status_code == 201, r.content
    assert Annotation.objects.get(assignment=a).locale == "de"
    r = c.post(
        f"/api/assignments/{b.id}/submit/", {"answers": ANSWERS, "locale": "ja"}, content_type="application/json"
    )
    assert r.status_code == 400 and "no wording in ja" in r.content.decode()
    r = c.post(f"/api/assignments/{b.id}/submit/", {"answers": ANSWERS, "locale": 7}, content_type="application/json")
    assert r.status_code == 400
    assert not Annotation.objects.filter(assignment=b).exists()
    r = c.post(f"/api/assignments/{b.id}/submit/", {"answers": ANSWERS}, content_type="application/json")
    assert r.status_code == 201 and Annotation.objects.get(assignment=b).locale == ""  # not said: not known
    r = c.put(
        f"/api/assignments/{a.id}/answer/", {"answers": ANSWERS, "locale": "zh-hans"}, content_type="application/json"
    )
    assert r.status_code == 200 and Annotation.objects.get(assignment=a).locale == "zh-hans"


def test_error_messages_reach_the_annotator_in_their_language(valueground, annotators):
    ann = annotators[0]
    a = first_assignment(valueground, ann)
    r = client(ann, "zh-hans").post(f"/a/{a.id}/", {"q1": "2", "mode": "submit", "locale": "zh-hans"})
    html = r.content.decode()
    assert r.status_code == 400 and "有些答案缺失或无效" in html and "需要回答" in html
    r = client(ann, "de").post(f"/a/{a.id}/skip/", {"reason": " "}, follow=True)
    assert "Sagen Sie, warum Sie dieses Item überspringen" in r.content.decode()


@pytest.mark.parametrize("language", ["en", "de", "zh-hans"])
def test_the_switcher_names_each_language_in_its_own_words(annotators, language):
    """Whatever the page's language, a reader finds theirs: "English", "简体中文", "Deutsch"
    (not "Englisch" on a German page)."""
    html = client(annotators[0], language).get("/").content.decode()
    for code, own in (("en", "English"), ("zh-hans", "简体中文"), ("de", "Deutsch")):
        assert f'value="{code}" lang="{code}"' in html
        assert f">{own}</button>" in html
    assert "Englisch" not in html and "英语" not in html
