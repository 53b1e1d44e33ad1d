"""``{% fragment %}`` (``annotation/templatetags/fragments.py``): parts of the annotate page
rendered once per distinct input. A fragment is reused only for equal inputs in the same
language, and the page is the same byte for byte whether its parts came from the store or not:
each item's own prompt (ValueGround's Q1 and Q2 name the item's options), the answers of an
edit, a refused submit's errors, the annotator's language."""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template
from django.test import Client
from django.utils import translation

from annotation import importing
from annotation.models import Assignment
from annotation.templatetags import fragments

from .factories import jsonl, make_project, valueground_records

pytestmark = pytest.mark.django_db


class Counted:
    """A value that counts how often the template renders it."""

    def __init__(self) -> None:
        self.renders = 0

    def __str__(self) -> str:
        self.renders += 1
        return f"render {self.renders}"


def test_a_fragment_is_rendered_once_per_input_and_language():
    fragments.clear()
    page = Template(
        '{% load fragments i18n %}{% fragment "t" x %}{{ x }} {{ counted }} {% translate "Submit" %}{% endfragment %}'
    )
    counted = Counted()
    assert page.render(Context({"x": 1, "counted": counted})) == "1 render 1 Submit"
    assert page.render(Context({"x": 1, "counted": counted})) == "1 render 1 Submit"  # reused
    assert (
        page.render(Context({"x": [2, {"a": None}], "counted": counted}))
        == "[2, {&#x27;a&#x27;: None}] render 2 Submit"
    )
    with translation.override("de"):
        assert page.render(Context({"x": 1, "counted": counted})) == "1 render 3 Absenden"
    assert counted.renders == 3
    other = Template('{% load fragments %}{% fragment "u" x %}{{ counted }}{% endfragment %}')
    assert other.render(Context({"x": 1, "counted": counted})) == "render 4"  # another name, another key


def test_the_store_keeps_the_most_recent_fragments_only(monkeypatch):
    fragments.clear()
    monkeypatch.setattr(fragments, "MAX_FRAGMENTS", 2)
    page = Template('{% load fragments %}{% fragment "t" x %}{{ counted }}{% endfragment %}')
    counted = Counted()
    for x in (1, 2, 1, 3, 2):  # 2 falls out when 3 comes in, after 1 was used again
        page.render(Context({"x": x, "counted": counted}))
    assert counted.renders == 4


def test_a_fragment_needs_a_name():
    from django.template import TemplateSyntaxError

    with pytest.raises(TemplateSyntaxError, match="needs a name"):
        Template("{% load fragments %}{% fragment %}x{% endfragment %}")


def annotate_page(client: Client, assignment_id: int, fresh: bool) -> str:
    if fresh:
        fragments.clear()
    html = client.get(f"/a/{assignment_id}/").content.decode()
    # the parts that change from request to request whatever the fragments do
    return re.sub(r'(csrfmiddlewaretoken" value="|X-CSRFToken": ")[^"]+', r"\1-", html)


def test_the_annotate_page_is_the_same_with_stored_fragments(researcher, annotators, tmp_path):
    annotator = annotators[0]
    project = make_project("valueground.pair_quality", owner=researcher, annotators=[annotator], k=1)
    records = valueground_records(tmp_path, n=2)
    records[1] |= {"option_a": "Rather important", "option_b": "Hardly important"}
    assert importing.import_items(project=project, data=jsonl(records), data_format="jsonl", images=tmp_path).ok
    first, second = Assignment.objects.filter(rater__user=annotator).order_by("item__external_id")
    client = Client()
    client.force_login(annotator)

    fragments.clear()
    one, two = annotate_page(client, first.id, fresh=False), annotate_page(client, second.id, fresh=False)
    assert "Option A: Very" in one and "Option A: Rather important" in two  # each item's own prompt
    assert "Rather important" not in one
    assert annotate_page(client, first.id, fresh=False) == one == annotate_page(client, first.id, fresh=True)
    assert annotate_page(client, second.id, fresh=False) == two == annotate_page(client, second.id, fresh=True)

    # a refused submit shows its error in the question; the next visit does not
    refused = client.post(f"/a/{first.id}/", {"q1": "2", "mode": "submit"}).content.decode()
    assert refused.count('class="question has-error"') >= 1
    assert 'class="question has-error"' not in annotate_page(client, first.id, fresh=False)

    # an edit shows the stored answers ticked, from a fragment of its own
    response = client.post(f"/a/{first.id}/", {"q1": "2", "q2": "1", "q3": "0", "q4": "1", "mode": "submit"})
    assert response.status_code == 302
    edit = annotate_page(client, first.id, fresh=False)
    assert re.search(r'name="q2" value="1"[^>]*checked', edit) and edit == annotate_page(client, first.id, fresh=True)
    assert not re.search(r'name="q2" value="1"[^>]*checked', annotate_page(client, second.id, fresh=False))

    # another language: other fragments, the same page as rendered afresh
    client.cookies["django_language"] = "de"
    german = annotate_page(client, second.id, fresh=False)
    assert 'lang="de"' in german and german == annotate_page(client, second.id, fresh=True) != two


@pytest.fixture
def seeded_demo(shared_demo, db):
    """The demo of every preset, seeded once for the demo classes (tests/conftest.py, shared_demo)."""
    return shared_demo


class TestEveryPresetOnTheDemo:
    def test_every_presets_pages_are_the_same_from_stored_fragments(self, seeded_demo):
        """Every demo page of every preset, rendered once with the fragments of all the others
        already stored, equals the page rendered with an empty store: no fragment can come back
        for another input (a value its block reads but its key lacks would show here). The pages:
        each assignment of annotator1 (new, and edits of the demo answers), and a refused submit of
        each (the errors shown in the questions)."""
        from benchmarks.registry import PRESETS

        client = Client()
        assert client.login(username="annotator1", password="annotator1")
        assignments = list(Assignment.objects.filter(rater__user__username="annotator1").order_by("id"))
        presets = {a.project.preset_key for a in assignments}
        assert presets == set(PRESETS)
        assert any(a.status == Assignment.Status.SUBMITTED for a in assignments)  # edit pages too

        def pages(fresh: bool) -> dict[tuple[int, str], str]:
            out = {}
            for a in assignments:
                out[(a.id, "get")] = annotate_page(client, a.id, fresh)
                if fresh:
                    fragments.clear()
                # every answer invalid: refused whatever the rubric (an empty checklist is an answer)
                invalid = {q.id: "§" for q in a.project.rubric_version.parsed().questions}
                refused = client.post(
                    f"/a/{a.id}/", {**invalid, "mode": "edit" if a.status == "submitted" else "submit"}
                )
                assert refused.status_code == 400, (a.project.preset_key, refused.status_code)
                out[(a.id, "refused")] = re.sub(
                    r'(csrfmiddlewaretoken" value="|X-CSRFToken": ")[^"]+', r"\1-", refused.content.decode()
                )
            return out

        fragments.clear()
        stored = pages(fresh=False)
        fresh = pages(fresh=True)
        assert stored.keys() == fresh.keys()
        differ = [key for key in stored if stored[key] != fresh[key]]
        assert not differ, differ[:5]
        assert sum("has-error" in html for html in fresh.values()) >= len(presets)  # the refusals show errors
