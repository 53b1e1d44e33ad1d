"""Issue 12 (findings 5, 12, 13, 14): login and API throttling, 401 for bad Basic credentials,
deployment settings from the environment, the refusal of the development key, /healthz,
password validators and the crowd link's confirmation before switching users."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import OperationalError
from django.test import Client, override_settings

from core import security

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "a-long-enough-passphrase-9"


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("alice", password=PASSWORD)


def basic(username: str, password: str) -> dict:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


# ------------------------------------------------------------------------------ finding 5
@pytest.mark.django_db
@override_settings(HV_LOGIN_FAILURES_PER_USER=3, HV_LOGIN_FAILURES_PER_IP=100)
def test_login_form_refuses_after_failed_attempts_per_user(user):
    c = Client()
    for _ in range(3):
        r = c.post("/login/", {"username": "alice", "password": "wrong"})
        assert r.status_code == 200 and b"Wrong username or password" in r.content
    with mock.patch("django.contrib.auth.forms.authenticate") as auth:
        r = c.post("/login/", {"username": "alice", "password": PASSWORD})
    assert r.status_code == 429 and b"Too many failed log-ins" in r.content
    assert not auth.called  # refused before any password hashing
    assert "_auth_user_id" not in c.session
    # another user name from another address is not affected
    r = Client(REMOTE_ADDR="10.0.0.9").post("/login/", {"username": "bob", "password": "x"})
    assert r.status_code == 200


@pytest.mark.django_db
@override_settings(HV_LOGIN_FAILURES_PER_USER=3, HV_LOGIN_FAILURES_PER_IP=100)
def test_admin_login_is_throttled_like_the_site_login(django_user_model):
    django_user_model.objects.create_user("root", password=PASSWORD, is_staff=True, is_superuser=True)
    c = Client()
    for _ in range(3):
        r = c.post("/admin/login/", {"username": "root", "password": "wrong"})
        assert r.status_code == 200 and b"correct username and password" in r.content
    with mock.patch("django.contrib.auth.forms.authenticate") as auth:
        r = c.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert r.status_code == 429 and b"Too many failed log-ins" in r.content and r["Retry-After"]
    assert not auth.called and "_auth_user_id" not in c.session
    # the site's login counts the same failures
    assert c.post("/login/", {"username": "root", "password": PASSWORD}).status_code == 429
    # a fresh name and address still logs in to the admin
    django_user_model.objects.create_user("ops", password=PASSWORD, is_staff=True, is_superuser=True)
    r = Client(REMOTE_ADDR="10.0.0.7").post("/admin/login/?next=/admin/", {"username": "ops", "password": PASSWORD})
    assert r.status_code == 302


@pytest.mark.django_db
def test_staff_cannot_rewrite_answers_in_the_admin(django_user_model):
    """Answers are validated when submitted and kept with their revisions: the admin shows them
    read-only (no add, change or delete)."""
    from django.contrib import admin

    from annotation.admin import AnnotationAdmin
    from annotation.models import Annotation

    root = django_user_model.objects.create_user("root", password=PASSWORD, is_staff=True, is_superuser=True)
    c = Client()
    c.force_login(root)
    model_admin = admin.site._registry[Annotation]
    assert isinstance(model_admin, AnnotationAdmin)
    request = type("R", (), {"user": root})()
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)
    assert c.get("/admin/annotation/annotation/add/").status_code == 403
    assert c.get("/admin/annotation/annotation/").status_code == 200  # still viewable


ATTACKER = "203.0.113.66"


def ip_failures(address: str) -> int:
    return cache.get(f"hv:loginfail:ip:{address}", 0)


def form_login(address: str, username: str, password: str) -> int:
    return Client(REMOTE_ADDR=address).post("/login/", {"username": username, "password": password}).status_code


def basic_login(address: str, username: str, password: str) -> int:
    return Client(REMOTE_ADDR=address).get("/api/projects/", **basic(username, password)).status_code


@pytest.mark.django_db
@pytest.mark.parametrize("login, wrong, ok", [(form_login, 200, 302), (basic_login, 401, 200)])
def test_one_address_cannot_lock_a_user_out(user, django_user_model, login, wrong, ok):
    """Issue 37, M1, the attack with the default limits (10 per user name, 30 per address, 300 s):
    one address sends wrong passwords for alice and the admin far past both limits. A correct
    password from any other address logs in at every step; the attacking address is refused once
    it used up its failures, its correct passwords too, and its refused attempts are not counted."""
    django_user_model.objects.create_user("root", password=PASSWORD, is_staff=True, is_superuser=True)
    assert (settings.HV_LOGIN_FAILURES_PER_USER, settings.HV_LOGIN_FAILURES_PER_IP) == (10, 30)
    victims = iter(f"198.51.100.{n}" for n in range(1, 200))
    for attempt in range(1, 61):
        name = "alice" if attempt % 2 else "root"
        expected = wrong if attempt <= 30 else 429
        assert login(ATTACKER, name, f"guess-{attempt}") == expected, attempt
        if attempt in (10, 20, 21, 30, 31, 45, 60):  # past the user limit, then the address's
            assert login(next(victims), "alice", PASSWORD) == ok, attempt
            assert login(next(victims), "root", PASSWORD) == ok, attempt
    assert ip_failures(ATTACKER) == 30  # the 30 refused attempts were not counted
    with (
        mock.patch("django.contrib.auth.forms.authenticate") as form_auth,
        mock.patch("django.contrib.auth.authenticate") as basic_auth,
    ):
        assert login(ATTACKER, "alice", PASSWORD) == 429  # the attacking address stays blocked
        assert login(ATTACKER, "nobody-yet", "x") == 429
    assert not form_auth.called and not basic_auth.called  # refused before any password check
    assert ip_failures(ATTACKER) == 30


@pytest.mark.django_db
@override_settings(HV_LOGIN_FAILURES_PER_USER=3, HV_LOGIN_FAILURES_PER_IP=100)
def test_a_user_name_past_its_limit_is_delayed_only_where_an_address_failed(user):
    """The per-user limit is a delay for addresses with failures of their own, never a lockout:
    a clean address logs in; one that mistyped waits for its window."""
    for _ in range(3):
        assert form_login(ATTACKER, "alice", "wrong") == 200
    assert form_login("198.51.100.20", "bob", "typo") == 200  # this address now has a failure
    with mock.patch("django.contrib.auth.forms.authenticate") as auth:
        assert form_login("198.51.100.20", "alice", PASSWORD) == 429
        assert basic_login(ATTACKER, "alice", PASSWORD) == 429
    assert not auth.called
    assert basic_login("198.51.100.21", "alice", PASSWORD) == 200  # clean addresses log in
    assert form_login("198.51.100.22", "alice", PASSWORD) == 302


@pytest.mark.django_db
@override_settings(HV_LOGIN_FAILURES_PER_USER=100, HV_LOGIN_FAILURES_PER_IP=3)
def test_a_blocked_address_is_refused_for_every_user_name_and_others_are_not(user):
    """An address that used up its failures gets 429 for every password attempt, right or wrong
    (a blocked address whose passwords were still checked could go on guessing uncounted)."""
    for name in ("u1", "u2", "u3"):
        assert basic_login(ATTACKER, name, "wrong") == 401
    assert basic_login(ATTACKER, "u4", "wrong") == 429
    assert form_login(ATTACKER, "alice", PASSWORD) == 429
    assert basic_login(ATTACKER, "alice", PASSWORD) == 429
    wrong_token = Client(REMOTE_ADDR=ATTACKER).get("/api/projects/", HTTP_AUTHORIZATION="Token hv_guess")
    assert wrong_token.status_code == 429
    assert ip_failures(ATTACKER) == 3  # none of the refused attempts counted
    assert basic_login("10.1.1.1", "alice", PASSWORD) == 200
    assert form_login("10.1.1.1", "alice", PASSWORD) == 302


@pytest.mark.django_db
@override_settings(HV_LOGIN_FAILURES_PER_USER=3, HV_LOGIN_FAILURES_PER_IP=100)
def test_a_non_staff_password_at_the_admin_login_is_no_failed_login(user):
    """Issue 23, finding 5: alice (no staff) trying her correct password at /admin/login/ is
    refused there, but it is not a failed log-in: /login/ still lets her in."""
    c = Client()
    for _ in range(5):
        r = c.post("/admin/login/", {"username": "alice", "password": PASSWORD})
        assert r.status_code == 200 and "_auth_user_id" not in c.session
    assert c.post("/login/", {"username": "alice", "password": PASSWORD}).status_code == 302
    # a wrong password at the admin's login still counts
    for _ in range(3):
        Client().post("/admin/login/", {"username": "alice", "password": "wrong"})
    assert Client().post("/login/", {"username": "alice", "password": PASSWORD}).status_code == 429


@pytest.mark.django_db
def test_wrong_basic_credentials_get_401_with_a_challenge(user):
    r = Client().get("/api/projects/", **basic("alice", "wrong"))
    assert r.status_code == 401
    assert r["WWW-Authenticate"] == 'Basic realm="api"'
    assert Client().get("/api/projects/", **basic("alice", PASSWORD)).status_code == 200
    # a browser without credentials keeps its 403 (no password prompt over a page)
    r = Client().get("/api/projects/")
    assert r.status_code == 403 and "WWW-Authenticate" not in r


@pytest.mark.django_db
@override_settings(HV_LOGIN_FAILURES_PER_USER=2, HV_LOGIN_FAILURES_PER_IP=100)
def test_basic_failures_are_throttled_like_the_login_form(user):
    for _ in range(2):
        assert Client().get("/api/projects/", **basic("alice", "wrong")).status_code == 401
    with mock.patch("django.contrib.auth.authenticate") as auth:
        r = Client().get("/api/projects/", **basic("alice", PASSWORD))
    assert r.status_code == 429 and "Retry-After" in r
    assert not auth.called
    # the login form shares the count
    assert Client().post("/login/", {"username": "alice", "password": PASSWORD}).status_code == 429


@override_settings(HV_TRUSTED_PROXIES=["10.0.0.0/8"])
def test_client_ip_reads_forwarded_for_only_from_trusted_proxies(rf):
    spoofed = rf.get("/", REMOTE_ADDR="203.0.113.5", HTTP_X_FORWARDED_FOR="1.2.3.4")
    assert security.client_ip(spoofed) == "203.0.113.5"
    proxied = rf.get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7, 10.0.0.3")
    assert security.client_ip(proxied) == "198.51.100.7"


@pytest.mark.django_db
def test_api_rate_per_user(user, monkeypatch):
    monkeypatch.setattr(security.UserRateThrottle, "THROTTLE_RATES", {"user": "3/min", "anon": "3/min"})
    c = Client()
    c.force_login(user)
    codes = [c.get("/api/projects/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


def test_api_rates_come_from_the_environment():
    from django.conf import settings

    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    assert rates["user"] == os.environ.get("HV_API_RATE_USER", "10000/min")
    assert rates["anon"] == os.environ.get("HV_API_RATE_ANON", "600/min")


# ----------------------------------------------------------------------------- finding 12
def _django(code: str, **env: str) -> subprocess.CompletedProcess:
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("HV_", "SECRET_KEY", "DEBUG", "DJANGO_ALLOW_ASYNC"))
    }
    base.update({"DJANGO_SETTINGS_MODULE": "config.settings", "HV_VAR_DIR": os.environ.get("HV_VAR_DIR", "")})
    base = {k: v for k, v in base.items() if v}
    base.update(env)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120)


SETUP = "import django; django.setup(); print('started')"


def test_refuses_to_start_with_the_development_key_when_debug_is_off():
    r = _django(SETUP)
    assert r.returncode != 0 and "REFUSING TO START" in r.stderr
    assert "started" in _django(SETUP, HV_DEMO="1").stdout  # make run's demo
    assert "started" in _django(SETUP, DEBUG="true").stdout
    assert "started" in _django(SETUP, SECRET_KEY="k" * 60).stdout


DEPLOY_ENV = {
    "SECRET_KEY": "Zq8v-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4Y5z6",
    "HV_CROWD_PID_KEY": "another-long-random-value-0123456789abcdef",
    "HV_SECURE_HSTS_SECONDS": "31536000",
    "HV_SECURE_HSTS_PRELOAD": "1",
    "HV_SECURE_SSL_REDIRECT": "1",
    "HV_SECURE_COOKIES": "1",
    "HV_TRUSTED_PROXIES": "10.0.0.0/8",
    "ALLOWED_HOSTS": "hv.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://hv.example.org",
}


def _check_deploy(**env):
    code = "import sys; from django.core.management import execute_from_command_line; " + (
        "execute_from_command_line(['manage.py', 'check', '--deploy', '--fail-level', 'WARNING'])"
    )
    return _django(code, **env)


def check_ids(output: str) -> set[str]:
    return set(re.findall(r"\(([a-z_]+\.[WE]\d+)\)", output))


# drf-spectacular's own schema warnings about some views (not deployment settings) are
# reported by `check --deploy` too; they are the API schema's business, not this test's.
SCHEMA_CHECKS = {"drf_spectacular.W001", "drf_spectacular.W002"}


def test_check_deploy_is_clean_when_the_deployment_settings_are_set():
    r = _check_deploy(**DEPLOY_ENV)
    assert check_ids(r.stdout + r.stderr) <= SCHEMA_CHECKS, r.stdout + r.stderr
    assert "could not resolve authenticator" not in r.stderr
    r = _django(
        "import django; django.setup(); from django.core.management import call_command; "
        "call_command('check', deploy=True, tags=['security'], fail_level='WARNING'); print('clean')",
        **DEPLOY_ENV,
    )
    assert r.returncode == 0 and "clean" in r.stdout, r.stdout + r.stderr


def test_check_deploy_warns_without_them_and_about_the_crowd_key():
    env = {k: v for k, v in DEPLOY_ENV.items() if k != "HV_CROWD_PID_KEY"}
    r = _check_deploy(**env)
    assert r.returncode != 0 and "studies.W001" in r.stderr
    r = _check_deploy(SECRET_KEY=DEPLOY_ENV["SECRET_KEY"], HV_CROWD_PID_KEY="x" * 40)
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in r.stderr


def test_crowd_hash_keeps_secret_key_fallback_for_existing_participants(settings):
    from studies import crowd

    settings.HV_CROWD_PID_KEY = ""
    old = crowd.pid_hash("abc")
    settings.HV_CROWD_PID_KEY = settings.SECRET_KEY  # the documented migration before rotating
    assert crowd.pid_hash("abc") == old


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy():
    r = Client().get("/login/")
    csp = r["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-eval" not in csp


@pytest.mark.django_db
def test_swagger_ui_is_served_locally_without_a_cdn(user):
    c = Client()
    c.force_login(user)
    r = c.get("/api/docs/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "cdn.jsdelivr" not in html and "@latest" not in html
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "<script>" not in html  # the initialiser is its own script (CSP: script-src 'self')
    assert c.get("/api/docs/?script=").status_code == 200


# ----------------------------------------------------------------------------------- /healthz
@pytest.mark.django_db
def test_healthz_without_authentication():
    r = Client().get("/healthz")
    assert r.status_code == 200
    assert r.json() == {"database": "ok", "broker": "filesystem"}


@pytest.mark.django_db
def test_healthz_503_when_the_database_is_unreachable():
    broken = mock.Mock()
    broken.cursor.side_effect = OperationalError("connection refused")
    with mock.patch("config.health.connection", broken):
        r = Client().get("/healthz")
    assert r.status_code == 503 and r.json()["database"].startswith("error")


@override_settings(HV_SECURE_SSL_REDIRECT=True, SECURE_SSL_REDIRECT=True)
@pytest.mark.django_db
def test_healthz_is_not_redirected_to_https():
    assert Client().get("/healthz").status_code == 200
    assert Client().get("/login/").status_code == 301


# ----------------------------------------------------------------------------- finding 13
@pytest.mark.parametrize("weak", ["password", "12345678901", "qwertyuiop"])
def test_standard_password_validators(weak):
    with pytest.raises(ValidationError):
        validate_password(weak)
    validate_password(PASSWORD)


def test_make_run_seeds_demo_accounts_only_in_demo_mode():
    text = (ROOT / "scripts" / "run").read_text()
    assert 'if [[ "$HV_DEMO" == 1 ]]; then' in text
    assert text.index('if [[ "$HV_DEMO" == 1 ]]') < text.index("manage.py seed_demo")


# ------------------------------------------------------------------------------ install
def test_database_url_query_options_reach_the_connection():
    """``DATABASE_URL`` query strings (``?sslmode=require``) become connection options, and
    quoted credentials are unquoted (dj-database-url), not dropped as before."""
    from config.settings import database_from_url

    db = database_from_url("postgres://hv:p%40ss%2Fword@db.example:5433/hv?sslmode=require&connect_timeout=5")
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["USER"], db["PASSWORD"], db["HOST"], db["PORT"], db["NAME"]) == (
        "hv",
        "p@ss/word",
        "db.example",
        5433,
        "hv",
    )
    assert db["OPTIONS"]["sslmode"] == "require" and str(db["OPTIONS"]["connect_timeout"]) == "5"
    lite = database_from_url("sqlite:////tmp/x.sqlite3")
    assert lite["NAME"] == "/tmp/x.sqlite3" and lite["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    with pytest.raises(ValueError, match="not supported"):
        database_from_url("mysql://u@h/db")


def test_runtime_requirements_install_without_torch():
    """The web and worker set has no torch; model judges are the judges extra, GPU workers a
    further one; every requirements file pins exact versions."""
    req = (ROOT / "requirements.txt").read_text()
    assert "torch" not in {line.split("==")[0].strip().lower() for line in req.splitlines()}
    assert "sqlalchemy" not in req.lower()
    judges = (ROOT / "requirements-judges.txt").read_text()
    assert "-r requirements.txt" in judges and "torch==" in judges
    assert "-r requirements-judges.txt" in (ROOT / "requirements-gpu.txt").read_text()
    assert "-r requirements-judges.txt" in (ROOT / "requirements-dev.txt").read_text()
    for name in ("requirements.txt", "requirements-judges.txt", "requirements-gpu.txt", "requirements-dev.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line and not line.startswith("-"):
                assert "==" in line, (name, line)
    assert "requirements.txt" in (ROOT / "Dockerfile").read_text()
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def _pins(name: str) -> dict[str, str]:
    """package -> pinned version over a requirements file and every file it includes with -r."""
    import re

    pins: dict[str, str] = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            pins.update(_pins(line[3:].strip()))
        elif "==" in line:
            package, version = line.split("==")
            pins[re.sub(r"\[.*\]", "", package).lower().replace("_", "-")] = version.strip()
    return pins


@pytest.mark.parametrize(
    "requirements,lock,torch_build",
    [
        ("requirements.txt", "requirements.lock", None),
        ("requirements-judges.txt", "requirements-judges.lock", "+cpu"),
        ("requirements-dev.txt", "requirements-dev.lock", "+cpu"),
        ("requirements-gpu.txt", "requirements-gpu.lock", ""),
    ],
)
def test_each_lock_matches_its_pins_and_hashes_every_package(requirements, lock, torch_build):
    """Each set's lock (scripts/lock, pip-tools) holds that set's packages at their pinned
    versions, each with at least one SHA-256, and names no machine-local index. The CPU sets lock
    torch's +cpu build (found on the PyTorch CPU index the lock names); the GPU set PyPI's CUDA
    build, whose NVIDIA libraries are the only packages it adds to the pins."""
    import re

    text = (ROOT / lock).read_text()
    entries = re.findall(
        r"^([A-Za-z0-9_.\[\]-]+)==(\S+) \\\n((?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", text, re.M
    )
    locked = {re.sub(r"\[.*\]", "", name).lower().replace("_", "-"): version for name, version, _ in entries}
    assert len(entries) == len(re.findall(r"^[A-Za-z0-9_.\[\]-]+==", text, re.M))  # every entry has hashes
    pins = _pins(requirements)
    if torch_build is not None:
        assert locked.pop("torch") == pins.pop("torch") + torch_build
    if torch_build == "":
        extra = {p for p in locked if p not in pins}
        assert extra and all(p.startswith(("nvidia-", "cuda-", "triton")) for p in extra), extra
        locked = {p: v for p, v in locked.items() if p in pins}
    assert locked == pins
    assert "file://" not in text and "/opt/" not in text and "--find-links" not in text
    if torch_build == "+cpu":
        assert "\n--extra-index-url https://download.pytorch.org/whl/cpu\n" in text
    docker = (ROOT / "Dockerfile").read_text()
    assert "requirements*.lock" in docker and "--require-hashes" in docker


# ------------------------------------------------------------------ the session check (issue 32)
def _session_request(rf, user, **session_values):
    client = Client()
    client.force_login(user)
    request = rf.get("/")
    request.session = client.session
    for key, value in session_values.items():
        request.session[key] = value
    return request


@pytest.mark.django_db
def test_verified_session_holds_while_django_would_accept_the_session(rf, user):
    """The lean path's session check (``verified_session``) accepts what Django's ``get_user``
    accepts and names what the lean statements must still find: the user active, with the
    password the session hash was made from."""
    request = _session_request(rf, user)
    session = security.verified_session(request)
    assert session is not None and session.uid == user.pk
    assert session.user_holds() == {"is_active": True, "password": user.password}
    # a changed password: the verified session is remembered (the statements stop matching),
    # and once forgotten it no longer verifies, as Django logs such a session out
    user.set_password("another-long-passphrase-7")
    user.save()
    assert security.verified_session(request) == session
    security.forget_session(session)
    assert security.verified_session(request) is None


@pytest.mark.django_db
def test_verified_session_refuses_what_the_ordinary_path_decides(rf, user):
    inactive = _session_request(rf, user)
    type(user).objects.filter(pk=user.pk).update(is_active=False)
    assert security.verified_session(inactive) is None
    other_backend = _session_request(rf, user, _auth_user_backend="accounts.authentication.Other")
    assert security.verified_session(other_backend) is None
    rf_request = rf.get("/")
    assert security.verified_session(rf_request) is None  # no session at all
