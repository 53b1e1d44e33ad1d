"""Swagger UI is served from this site (issue 14, point 6): drf-spectacular-sidecar's static
files, no CDN. Every script, style and image the docs page and its initialiser load is a path on
this site that the static files finders can serve."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.test import Client

from tests.annotation.factories import make_user

pytestmark = pytest.mark.django_db

URL_ATTR = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")
ABSOLUTE = re.compile(r"""(?:https?:)?//[A-Za-z0-9.-]+""")


@pytest.fixture
def client(db):
    c = Client()
    c.force_login(make_user("reader"))
    return c


def test_the_docs_page_loads_nothing_from_another_site(client):
    r = client.get("/api/docs/")
    assert r.status_code == 200
    html = r.content.decode()
    urls = URL_ATTR.findall(html)
    assert urls, "the page loads its scripts and styles"
    foreign = [u for u in urls if ABSOLUTE.match(u)]
    assert not foreign, f"loaded from another site: {foreign}"
    statics = [u.split("?")[0] for u in urls if u.startswith(settings.STATIC_URL)]
    assert any(u.endswith("swagger-ui-bundle.js") for u in statics)
    assert any(u.endswith("swagger-ui.css") for u in statics)
    for url in statics:
        assert finders.find(url.removeprefix(settings.STATIC_URL)), f"{url} is not a static file of this site"


def test_the_initialiser_points_at_this_sites_schema(client):
    page = client.get("/api/docs/").content.decode()
    script = next(u for u in URL_ATTR.findall(page) if "script" in u and not u.startswith(settings.STATIC_URL))
    r = client.get(script.replace("&amp;", "&"))
    assert r.status_code == 200
    js = r.content.decode()
    assert "/api/schema/" in js
    assert not re.search(r"""["'](?:https?:)?//""", js), "the initialiser names another site"
