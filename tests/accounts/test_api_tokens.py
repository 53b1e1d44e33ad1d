"""Personal API tokens (issue 14, point 6): made on the Tokens page and shown once, stored as a
SHA-256 only, accepted as ``Token`` or ``Bearer`` by every API view, refused with 401 once
revoked, never someone else's to revoke, and throttled per address when guessed."""

from __future__ import annotations

import hashlib
import re

import pytest
from django.test import Client, override_settings

from accounts import services
from accounts.models import ApiToken
from tests.annotation.factories import make_user

pytestmark = pytest.mark.django_db


def make_token(client: Client, name: str = "export script") -> str:
    r = client.post("/account/tokens/", {"name": name})
    assert r.status_code == 302 and r["Location"] == "/account/tokens/"  # POST, redirect, GET (issue 25)
    r = client.get("/account/tokens/")
    assert r.status_code == 200 and r["Cache-Control"] == "no-store"
    m = re.search(r'<code class="token">(hv_[A-Za-z0-9_-]+)</code>', r.content.decode())
    assert m, "the new token is shown once"
    return m.group(1)


def test_token_made_on_the_page_works_for_the_api_and_is_stored_hashed():
    owner = make_user("tok-owner", researcher=True)
    c = Client()
    c.force_login(owner)
    key = make_token(c)
    row = ApiToken.objects.get(user=owner)
    assert row.key_hash == hashlib.sha256(key.encode()).hexdigest() and key not in str(row.__dict__)
    assert row.prefix == key[:10] and row.last_used_at is None
    # the page never shows it again
    assert key not in c.get("/account/tokens/").content.decode()
    for scheme in ("Token", "Bearer"):
        r = Client().get("/api/projects/", HTTP_AUTHORIZATION=f"{scheme} {key}")
        assert r.status_code == 200, (scheme, r.content)
    row.refresh_from_db()
    assert row.last_used_at is not None
    # a wrong or malformed token is a 401, not an anonymous request
    assert Client().get("/api/projects/", HTTP_AUTHORIZATION="Token hv_wrong").status_code == 401
    assert Client().get("/api/projects/", HTTP_AUTHORIZATION="Token a b").status_code == 401


def test_revoked_tokens_stop_working_and_only_the_owner_revokes():
    owner, other = make_user("tok-a", researcher=True), make_user("tok-b", researcher=True)
    c = Client()
    c.force_login(owner)
    key = make_token(c)
    token = ApiToken.objects.get(user=owner)
    intruder = Client()
    intruder.force_login(other)
    intruder.post(f"/account/tokens/{token.id}/revoke/")
    token.refresh_from_db()
    assert token.active  # someone else's token: not found, nothing changed
    assert Client().get("/api/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    assert c.post(f"/account/tokens/{token.id}/revoke/").status_code == 302
    token.refresh_from_db()
    assert not token.active
    assert Client().get("/api/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401
    # an inactive user's token is refused too
    key2 = make_token(c, "second")
    owner.is_active = False
    owner.save()
    assert Client().get("/api/projects/", HTTP_AUTHORIZATION=f"Token {key2}").status_code == 401


def test_token_page_needs_a_login_and_refuses_bad_input():
    assert Client().get("/account/tokens/").status_code == 302  # to the login page
    user = make_user("tok-c")
    c = Client()
    c.force_login(user)
    c.post("/account/tokens/", {"name": "   "})
    assert not ApiToken.objects.exists()
    with pytest.raises(Exception, match="name"):
        services.create_token(user=user, name="")


@override_settings(HV_LOGIN_FAILURES_PER_IP=3)
def test_guessing_tokens_is_throttled_per_address():
    owner = make_user("tok-d", researcher=True)
    c = Client()
    c.force_login(owner)
    key = make_token(c)
    guesser = Client(REMOTE_ADDR="10.9.9.9")
    for _ in range(3):
        assert guesser.get("/api/projects/", HTTP_AUTHORIZATION="Token hv_guess").status_code == 401
    # the address used up its failures: further wrong tokens are refused with 429 ...
    assert guesser.get("/api/projects/", HTTP_AUTHORIZATION="Token hv_guess").status_code == 429
    # ... but a valid token from it still works (issue 23, finding 5: a lab behind one NAT address)
    assert guesser.get("/api/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    # another address with the right token is not affected
    assert Client(REMOTE_ADDR="10.9.9.10").get("/api/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
