"""Request security below every app: the client's address behind trusted proxies, failed-login
throttling (the login form and HTTP Basic share it), the API's authentication classes and the
Content-Security-Policy header.

Failed log-ins are counted in the Django cache (``CACHES["default"]``; set ``HV_CACHE_URL`` to
share the counts between processes), per client address and per user name, in fixed windows of
``HV_LOGIN_WINDOW_SECONDS`` that start at the first failure. The rule (issue 37, M1: nobody can
keep another person out of their account; docs/security.md says the same):

- once an **address** has used up its failures (``HV_LOGIN_FAILURES_PER_IP``), every password
  attempt from it is refused (429) before the password is checked, until its window ends. A
  refused attempt is not counted anywhere: it neither extends the block nor adds to any user
  name's count. (Checking passwords from a blocked address, as issue 23 did for labs behind one
  NAT address, would let it go on guessing with nothing counted.)
- once a **user name** has used up its failures (``HV_LOGIN_FAILURES_PER_USER``, from any
  addresses), its attempts are refused before the password is checked only from addresses that
  have failed log-ins of their own in their window: a correct password from a clean address
  always logs in. That is a delay for whoever shares an address with failures, never a lockout,
  and each fresh address an attacker brings gets one more guess at most.
- only a wrong password is a failure: a correct password refused for another reason (a
  non-staff user at ``/admin/login/``, which only staff may use) is not counted.
- a valid API token is accepted from any address (it cannot be guessed); a wrong one counts as a
  failure of its address, and from a blocked address is answered 429 without being counted.

A successful log-in clears the user name's count."""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.utils.crypto import constant_time_compare
from drf_spectacular.authentication import BasicScheme, SessionScheme
from rest_framework import authentication, exceptions, throttling

REALM = "api"


# ----------------------------------------------------------------------------- client address
def _trusted(addr: str) -> bool:
    try:
        ip = ipaddress.ip_address(addr.strip())
    except ValueError:
        return False
    for net in getattr(settings, "HV_TRUSTED_PROXIES", ()):
        try:
            if ip in ipaddress.ip_network(net, strict=False):
                return True
        except ValueError:
            continue
    return False


def client_ip(request) -> str:
    """REMOTE_ADDR, or behind proxies of ``HV_TRUSTED_PROXIES`` the right-most address of
    X-Forwarded-For that is not one of them (what the nearest trusted proxy saw)."""
    meta = getattr(request, "META", {})
    remote = meta.get("REMOTE_ADDR", "") or ""
    if not _trusted(remote):
        return remote
    hops = [h.strip() for h in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop):
            return hop
    return hops[0] if hops else remote


# ---------------------------------------------------------------------------- login throttling
def _keys(request, username: str) -> list[tuple[str, int]]:
    user_digest = hashlib.sha256((username or "").strip().lower().encode()).hexdigest()[:32]
    return [
        (f"hv:loginfail:ip:{client_ip(request)}", settings.HV_LOGIN_FAILURES_PER_IP),
        (f"hv:loginfail:user:{user_digest}", settings.HV_LOGIN_FAILURES_PER_USER),
    ]


def login_blocked(request, username: str) -> bool:
    """Whether this attempt is refused before the password is checked (the rule in the module's
    docstring): its address used up its failures, or the user name did and the address has
    failures of its own. One cache read, which also remembers the counts for
    :func:`address_blocked` and for :func:`login_succeeded`."""
    (ip_key, ip_limit), (user_key, user_limit) = _keys(request, username)
    counts = cache.get_many([ip_key, user_key])
    ip_failures = request._hv_login_ip_failures = counts.get(ip_key, 0)
    user_failures = request._hv_login_user_failures = counts.get(user_key, 0)
    if ip_limit and ip_failures >= ip_limit:
        return True
    return bool(user_limit and user_failures >= user_limit and ip_failures > 0)


def address_blocked(request) -> bool:
    """Whether this address has used up its failed attempts."""
    key, limit = _keys(request, "")[0]
    seen = getattr(request, "_hv_login_ip_failures", None)
    count = cache.get(key, 0) if seen is None else seen
    return bool(limit and count >= limit)


def _count_failure(key: str) -> None:
    # the window starts at the first failure and is never extended (add sets the expiry; incr
    # keeps it), so a block always ends HV_LOGIN_WINDOW_SECONDS after it began
    if not cache.add(key, 1, settings.HV_LOGIN_WINDOW_SECONDS):
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, settings.HV_LOGIN_WINDOW_SECONDS)


def login_failed(request, username: str) -> None:
    """Count a wrong password, for its address and its user name (only attempts that were
    checked get here: :func:`login_blocked` refused the others uncounted)."""
    for key, _ in _keys(request, username):
        _count_failure(key)


def login_succeeded(request, username: str) -> None:
    if getattr(request, "_hv_login_user_failures", 1):
        cache.delete(_keys(request, username)[1][0])


THROTTLED_MESSAGE = "Too many failed log-ins. Please wait a few minutes and try again."

#: the ``Authorization`` schemes of a personal API token (``accounts.authentication``)
TOKEN_KEYWORDS = ("token", "bearer")


def token_blocked(request) -> bool:
    """Whether this address has used up its failed attempts (a token names no user, so only the
    address's count applies). Asked only for a wrong token: a valid one is always accepted."""
    return address_blocked(request)


def token_failed(request) -> None:
    """Count a wrong token like a failed log-in from its address, so tokens cannot be guessed at
    speed; not once the address is blocked (its refused attempts are not counted)."""
    if not address_blocked(request):
        _count_failure(_keys(request, "")[0][0])


class _Throttled:
    """Failed-login throttling for an authentication form (the site's and the admin's)."""

    error_messages = {**AuthenticationForm.error_messages, "throttled": THROTTLED_MESSAGE}

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        if self.request is not None and login_blocked(self.request, username):
            self.throttled = True
            raise ValidationError(self.error_messages["throttled"], code="throttled")
        try:
            cleaned = super().clean()
        except ValidationError:
            # a correct password refused for another reason (a non-staff user at the admin's
            # login) is no failed log-in: only a wrong one (no user authenticated) counts
            if self.request is not None and getattr(self, "user_cache", None) is None:
                login_failed(self.request, username)
            raise
        if self.request is not None:
            login_succeeded(self.request, username)
        return cleaned


class ThrottledAuthenticationForm(_Throttled, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(_Throttled, AdminAuthenticationForm):
    error_messages = {**AdminAuthenticationForm.error_messages, "throttled": THROTTLED_MESSAGE}


def admin_login(request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
    """The admin's login page with the same throttling (429 while refused): the admin login is
    as much a password-guessing target as the site's."""
    from django.contrib import admin

    admin.site.login_form = ThrottledAdminAuthenticationForm
    response = admin.site.login(request, extra_context)
    form = (getattr(response, "context_data", None) or {}).get("form")
    if getattr(form, "throttled", False):
        response.status_code = 429
        response["Retry-After"] = str(settings.HV_LOGIN_WINDOW_SECONDS)
    return response


class LoginView(auth_views.LoginView):
    """Django's login page with failed-login throttling (429 while refused)."""

    form_class = ThrottledAuthenticationForm

    def form_invalid(self, form) -> HttpResponse:
        throttled = getattr(form, "throttled", False)
        response = self.render_to_response(self.get_context_data(form=form, throttled=throttled))
        if throttled:
            response.status_code = 429
            response["Retry-After"] = str(settings.HV_LOGIN_WINDOW_SECONDS)
        return response


# ------------------------------------------------------------------------ API authentication
class BasicAuthentication(authentication.BasicAuthentication):
    """HTTP Basic with the login form's throttling: wrong credentials are counted alike; an
    attempt the rule refuses is answered 429 without checking the password."""

    www_authenticate_realm = REALM

    def authenticate_credentials(self, userid, password, request=None):
        if request is not None and login_blocked(request, userid):
            raise exceptions.Throttled(wait=settings.HV_LOGIN_WINDOW_SECONDS, detail=THROTTLED_MESSAGE)
        try:
            result = super().authenticate_credentials(userid, password, request)
        except exceptions.AuthenticationFailed:
            if request is not None:
                login_failed(request, userid)
            raise
        if request is not None:
            login_succeeded(request, userid)
        return result


class SessionAuthentication(authentication.SessionAuthentication):
    """DRF's session authentication. DRF takes the WWW-Authenticate header from the first
    class and answers 403 when it has none: a request that came with Basic credentials gets
    the Basic challenge and one that came with a token the Token challenge, so wrong credentials
    are a 401; a browser without them keeps its 403 (no password prompt popping up over a page)."""

    def authenticate_header(self, request):
        scheme = request.META.get("HTTP_AUTHORIZATION", "").split(" ", 1)[0].lower()
        if scheme == "basic":
            return f'Basic realm="{REALM}"'
        if scheme in TOKEN_KEYWORDS:
            return "Token"
        return None


# ------------------------------------------------------------------------- the session check
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"

#: (user id, session hash) -> the password hash that produced it, per process: the session was
#: verified once; afterwards the lean statements match only while the password is unchanged.
_VERIFIED: dict[tuple[int, str], str] = {}
_VERIFIED_MAX = 50_000


@dataclass(frozen=True)
class VerifiedSession:
    """A browser session of a user logged in through the model backend, whose session hash was
    verified against ``password`` (the user's password hash then): the session holds exactly
    while the user is still as :meth:`user_holds` says, since Django's session hash is an HMAC of
    the password. Used instead of ``request.user`` where a request must not cost a query for the
    user: the lean annotate path (``annotate.hot_api``) and the annotate page
    (``annotate.views.annotate``) put :meth:`user_holds` into the one statement that reads the
    assignment (``annotation.hotpath``)."""

    uid: int
    digest: str
    password: str

    def user_holds(self) -> dict[str, Any]:
        """The user's fields (by name) that must still have these values for the session to
        hold, as ``django.contrib.auth.get_user`` requires: active (``ModelBackend.get_user``),
        with the password the session hash was made from."""
        return {"is_active": True, "password": self.password}


def verified_session(request: Any) -> VerifiedSession | None:
    """The request's session as Django's ``auth.get_user`` would accept it, for a session of
    the model backend: its user id and hash read from the session alone, then verified once per
    process (active user, HMAC of the password under the current ``SECRET_KEY``; one query the
    first time). None for anything else: no session, another backend, a session that does not
    verify (the ordinary path, ``request.user``, then logs it out, or accepts a fallback key and
    rotates the session)."""
    session = getattr(request, "session", None)
    if session is None:
        return None
    try:
        uid, backend, digest = session[SESSION_KEY], session[BACKEND_SESSION_KEY], session[HASH_SESSION_KEY]
    except KeyError:
        return None
    if backend != MODEL_BACKEND or backend not in settings.AUTHENTICATION_BACKENDS or not digest:
        return None
    try:
        uid = int(uid)
    except (TypeError, ValueError):
        return None
    found = _VERIFIED.get((uid, digest))
    if found is not None:
        return VerifiedSession(uid, digest, found)
    User = get_user_model()
    names = list(VerifiedSession(uid, digest, "").user_holds())
    row = User._default_manager.filter(pk=uid).values(*names).first()
    if row is None:
        return None
    verified = VerifiedSession(uid, digest, row["password"])
    if row != verified.user_holds():
        return None  # an inactive user: Django's ModelBackend does not return it
    if not constant_time_compare(digest, User(pk=uid, password=row["password"]).get_session_auth_hash()):
        return None
    if len(_VERIFIED) >= _VERIFIED_MAX:
        _VERIFIED.clear()
    _VERIFIED[(uid, digest)] = verified.password
    return verified


def forget_session(session: VerifiedSession) -> None:
    """A statement stopped matching this session (password changed, user deactivated, or the
    assignment is not theirs): verify it again next time."""
    _VERIFIED.pop((session.uid, session.digest), None)


class SessionSchemeExtension(SessionScheme):
    """The OpenAPI security scheme of :class:`SessionAuthentication` (drf-spectacular)."""

    target_class = "core.security.SessionAuthentication"


class BasicSchemeExtension(BasicScheme):
    """The OpenAPI security scheme of :class:`BasicAuthentication` (drf-spectacular)."""

    target_class = "core.security.BasicAuthentication"


#: set on a request whose API rates were already counted (the lean annotate path counts them,
#: then hands an unusual request to the DRF view, which must not count it twice)
THROTTLE_COUNTED = "hv_throttle_counted"


class AnonRateThrottle(throttling.AnonRateThrottle):
    """DRF's anonymous rate (``HV_API_RATE_ANON``), per address as :func:`client_ip` sees it
    (DRF's own reading of X-Forwarded-For trusts any client)."""

    def get_ident(self, request):
        return client_ip(request)

    def allow_request(self, request, view):
        return getattr(request, THROTTLE_COUNTED, False) or super().allow_request(request, view)


class UserRateThrottle(throttling.UserRateThrottle):
    """DRF's per-user rate (``HV_API_RATE_USER``)."""

    def get_ident(self, request):
        return client_ip(request)

    def allow_request(self, request, view):
        return getattr(request, THROTTLE_COUNTED, False) or super().allow_request(request, view)


# -------------------------------------------------------------------- Content-Security-Policy
class ContentSecurityPolicyMiddleware:
    """Adds ``settings.HV_CSP`` as the Content-Security-Policy header (empty: none)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = getattr(settings, "HV_CSP", "")
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response
