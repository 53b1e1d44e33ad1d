"""The page header offers the API and the tokens page to researchers, not to someone who only
annotates (issue 35: two links they never need, crowding a phone's header)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.annotation.factories import make_project, make_user

pytestmark = pytest.mark.django_db

API_LINKS = ('href="/account/tokens/"', ">API</a>")


def header_of(user, url: str = "/") -> str:
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_an_annotator_sees_no_api_or_tokens_link_and_a_researcher_does():
    researcher = make_user("res", researcher=True)
    annotator = make_user("ann")
    project = make_project("cqbench.turing", owner=researcher, annotators=[annotator])
    for url in ("/", f"/projects/{project.id}/queue/"):
        html = header_of(annotator, url)
        assert not any(link in html for link in API_LINKS), url
    html = header_of(researcher)
    assert all(link in html for link in API_LINKS)
    admin = make_user("admin", superuser=True)
    assert all(link in header_of(admin) for link in API_LINKS)


def test_the_tokens_page_still_answers_an_annotator_who_types_its_address():
    """Hiding the link changes no permission: the page is the user's own (their tokens only)."""
    annotator = make_user("ann")
    client = Client()
    client.force_login(annotator)
    assert client.get("/account/tokens/").status_code == 200
    client.logout()
    assert client.get("/account/tokens/").status_code == 302  # anonymous: to the login page
