"""Issue 37, lows: the HTTPS deployment documented in docs/deployment.md ("HTTPS and secrets")
gives the ``check --deploy`` warnings the page says (W021 until HSTS preload is chosen, then
none), and its language cookie is as secure as its session cookie. The settings are those
``config/settings.py`` computes from the documented environment, not values written here."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from django.core import checks
from django.test import Client, override_settings
from django.urls import reverse

SETTINGS = Path(__file__).resolve().parents[2] / "config" / "settings.py"

HTTPS_ENV = {
    "SECRET_KEY": "k" * 20 + "-Zq8vXw2LmT5rYp9sNb4HcJ6dFg3KeUa7",
    "HV_CROWD_PID_KEY": "another-long-random-key-for-participant-ids-0123456789",
    "ALLOWED_HOSTS": "hv.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://hv.example.org",
    "HV_SECURE_HSTS_SECONDS": "31536000",
    "HV_SECURE_SSL_REDIRECT": "1",
    "HV_SECURE_COOKIES": "1",
    "HV_TRUSTED_PROXIES": "10.0.0.1",
}
KEYS = [
    "SECRET_KEY",
    "HV_CROWD_PID_KEY",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "LANGUAGE_COOKIE_SECURE",
    "LANGUAGE_COOKIE_SAMESITE",
    "LANGUAGE_COOKIE_HTTPONLY",
    "SECURE_PROXY_SSL_HEADER",
    "DEBUG",
]


def deployed(monkeypatch, **extra) -> dict:
    for name, value in {**HTTPS_ENV, **extra}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("DEBUG", raising=False)
    computed = runpy.run_path(str(SETTINGS))
    return {k: computed[k] for k in KEYS}


def deploy_warnings(values: dict) -> list[str]:
    with override_settings(**values):
        found = checks.run_checks(include_deployment_checks=True, tags=[checks.Tags.security])
    return sorted(m.id for m in found if m.level >= checks.WARNING)


def test_the_documented_https_settings_warn_only_w021_until_preload_is_chosen(monkeypatch):
    assert deploy_warnings(deployed(monkeypatch)) == ["security.W021"]
    assert deploy_warnings(deployed(monkeypatch, HV_SECURE_HSTS_PRELOAD="1")) == []


@pytest.mark.django_db
def test_the_language_cookie_follows_the_session_cookie(monkeypatch):
    values = deployed(monkeypatch)
    assert values["LANGUAGE_COOKIE_SECURE"] is True and values["SESSION_COOKIE_SECURE"] is True
    assert values["LANGUAGE_COOKIE_SAMESITE"] == "Lax" and values["LANGUAGE_COOKIE_HTTPONLY"] is True
    with override_settings(**{k: values[k] for k in KEYS if k.startswith("LANGUAGE_COOKIE")}):
        r = Client().post(reverse("set_language"), {"language": "de", "next": "/"}, secure=True)
    cookie = r.cookies["django_language"]
    assert cookie.value == "de" and cookie["secure"] and cookie["httponly"] and cookie["samesite"] == "Lax"
