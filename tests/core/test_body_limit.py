"""Issue 23, finding 3: a request body over ``HV_MAX_BODY_BYTES`` is refused with 413 before it
is read, on every route, signed in or not, whether it comes with a Content-Length or chunked
(``core/bodylimit.py``, the first middleware)."""

from __future__ import annotations

import io

import pytest
from django.conf import settings
from django.test import Client, override_settings

LIMIT = 4096


class Unread(io.RawIOBase):
    """A request body that must not be read."""

    def __init__(self) -> None:
        self.reads = 0

    def readable(self) -> bool:
        return True

    def read(self, size=-1):
        self.reads += 1
        raise AssertionError("the body was read")

    readline = read


class Counting(io.BytesIO):
    """A chunked body (no Content-Length): counts what is read of it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, size=-1):
        data = super().read(size)
        self.taken += len(data)
        return data


def test_the_limit_is_the_first_middleware():
    assert settings.MIDDLEWARE[0] == "core.bodylimit.BodyLimitMiddleware"
    assert settings.HV_MAX_BODY_BYTES >= settings.HV_MAX_UPLOAD_BYTES


@pytest.mark.django_db
@override_settings(HV_MAX_BODY_BYTES=LIMIT)
@pytest.mark.parametrize(
    "path", ["/login/", "/admin/login/", "/api/projects/", "/api/projects/1/items/import/", "/no-such-page/"]
)
def test_a_declared_length_over_the_limit_is_refused_unread(path):
    body = Unread()
    r = Client().post(
        path,
        data=b"",
        content_type="application/x-www-form-urlencoded",
        CONTENT_LENGTH=str(300 * 2**20),
        **{"wsgi.input": body},
    )
    assert r.status_code == 413 and body.reads == 0
    assert r["Connection"] == "close"


@pytest.mark.django_db
@override_settings(HV_MAX_BODY_BYTES=LIMIT)
def test_signed_in_requests_are_capped_too(django_user_model):
    user = django_user_model.objects.create_user("bob", password="a-long-enough-passphrase-9")
    c = Client()
    c.force_login(user)
    body = Unread()
    r = c.post(
        "/api/projects/",
        data=b"",
        content_type="application/json",
        CONTENT_LENGTH=str(LIMIT + 1),
        **{"wsgi.input": body},
    )
    assert r.status_code == 413 and body.reads == 0


@pytest.mark.django_db
@override_settings(HV_MAX_BODY_BYTES=LIMIT)
def test_a_chunked_body_over_the_limit_is_refused_after_the_limit():
    body = Counting(b"x" * (50 * LIMIT))
    r = Client().post(
        "/login/",
        data=b"",
        content_type="application/x-www-form-urlencoded",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": body},
    )
    assert r.status_code == 413
    assert body.taken <= LIMIT + 1  # never the rest


@pytest.mark.django_db
@override_settings(HV_MAX_BODY_BYTES=LIMIT)
def test_bodies_within_the_limit_go_through(django_user_model):
    django_user_model.objects.create_user("carol", password="a-long-enough-passphrase-9")
    form = b"username=carol&password=a-long-enough-passphrase-9"
    r = Client().post(
        "/login/",
        data=b"",
        content_type="application/x-www-form-urlencoded",
        CONTENT_LENGTH="",
        CONTENT_TYPE="application/x-www-form-urlencoded",  # the factory sets it only for a body it encodes
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": io.BytesIO(form)},
    )
    assert r.status_code == 302  # a chunked login within the limit is read as a form
    r = Client().post("/login/", {"username": "carol", "password": "wrong-passphrase-0"})
    assert r.status_code == 200  # an ordinary form, refused for its password, not its size


@pytest.mark.django_db
@override_settings(HV_MAX_BODY_BYTES=LIMIT)
def test_a_bad_content_length_is_a_400():
    r = Client().post("/login/", data=b"", content_type="text/plain", CONTENT_LENGTH="lots")
    assert r.status_code == 400
