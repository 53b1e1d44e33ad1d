"""Which endpoints and keys a judge may use: configured by the deployment, never by the judge.

A researcher configures a judge's parameters; the worker then sends requests, with an API key,
to the endpoint those parameters name. So both are allow-listed by whoever runs the platform
(issue 12, findings 1, 2 and 11):

- **keys** (``params.api_key_env``): the name of an environment variable holding the key, one
  of ``settings.HV_JUDGE_API_KEYS`` (``HV_JUDGE_API_KEYS``: names, or prefixes ending in ``*``;
  default ``HV_JUDGE_API_KEY`` and ``HV_JUDGE_KEY_*``). Only ``os.environ`` is read, never a
  Django setting, and the platform's own secrets are refused even when listed. Each key is
  **bound to the endpoints it may be sent to** (issue 23, finding 6): ``NAME@endpoint`` entries
  (``HV_JUDGE_KEY_LAB@gpu-box:8000``; repeat the name for more endpoints), in the endpoint
  syntax below, or ``PREFIX*@endpoint`` for every key of a prefix. A key goes only to the
  host:port pairs it is bound to, whatever the path (issue 37, M7): a bound key never goes to
  the default endpoint ``HV_JUDGE_API_BASE`` unless bound there too. A name listed by itself
  (exactly, without ``@``) goes only to the default endpoint (same scheme, host and port), and
  so does ``HV_JUDGE_API_KEY`` when no entry binds it; a key matched only by a prefix without
  ``@`` is allowed as a name but bound nowhere, so it is sent nowhere. A judge naming a key not
  bound to its endpoint is refused when created and by the worker; the default key
  ``HV_JUDGE_API_KEY``, when the judge names none, is simply not sent to an endpoint it is not
  bound to.
- **endpoints** (``params.base_url``): ``http(s)`` URLs whose host *and port* are in
  ``settings.HV_JUDGE_ALLOWED_HOSTS``: ``host:port``; ``host`` alone means the scheme's default
  port (80 for http, 443 for https); ``host:*`` any port (not advised); ``.example.com`` (with
  an optional ``:port``) its subdomains; ``*`` any host and port (not advised). Default
  ``127.0.0.1:8000,localhost:8000,[::1]:8000`` (a vLLM on this machine), plus the admin's
  default endpoint ``HV_JUDGE_API_BASE``. No credentials in the URL. A refusal names the
  allow-list, never what a connection found; the worker's connection errors say only that the
  endpoint could not be reached (no open / closed port oracle).
- **no invisible characters**: control characters, line and paragraph separators and format
  characters (bidi overrides such as U+202E, zero-width spaces) are refused in an endpoint URL,
  a key name and a key: a URL shown with a bidi override reads as another host (issue 37).
- **no literal secrets** in a judge's parameters: any key naming a key, token, secret, password
  or authorization (but ``api_key_env``) is refused, and :func:`public_params` hides such
  values already stored wherever parameters are shown or exported.

Checked when a judge is created (``configuration.create_judge_config``) and again by the worker
(``backends.openai_chat``), so a row written before these checks cannot run either. Pure: raises
``ValueError``, which the service turns into a ``DomainError``."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from django.conf import settings

DEFAULT_KEY_ENV = "HV_JUDGE_API_KEY"
DEFAULT_KEY_NAMES = (DEFAULT_KEY_ENV, "HV_JUDGE_KEY_*")
DEFAULT_HOSTS = ("127.0.0.1:8000", "localhost:8000", "[::1]:8000")
ANY_PORT = -1
# never a judge's key, whatever the allow-list says: the platform's own secrets
NEVER_KEYS = frozenset(
    {"SECRET_KEY", "DATABASE_URL", "HV_CROWD_PID_KEY", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "HV_CACHE_URL"}
)
SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "authorization",
        "auth",
        "bearer",
        "credential",
        "credentials",
    }
)
KEY_ENV_PARAM = "api_key_env"
REDACTED = "(hidden)"


# ------------------------------------------------------------------------------ control characters
#: Unicode categories refused in a URL, a key name or a key (a header value): control characters
#: (line breaks, tab, NUL, DEL...), the line / paragraph separators, and format characters (Cf:
#: the bidi overrides and isolates U+202A-U+202E, U+2066-U+2069, zero-width spaces, the BOM),
#: which make a URL read as another host on a page (issue 37)
CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def has_control(text: str) -> bool:
    return any(unicodedata.category(ch) in CONTROL_CATEGORIES for ch in text)


def check_no_control(what: str, text: str) -> str:
    """``text`` when it holds no control character (issue 23, finding 2): a URL parser strips a
    line break the HTTP client then refuses, mid-run; refused here, when the judge is created.
    Nor a format character: a bidi override shows the URL as another one (issue 37)."""
    if has_control(text):
        raise ValueError(
            f"{what} must not hold control characters (line breaks, tabs, NUL) or invisible characters "
            "(bidi overrides, zero-width spaces)"
        )
    return text


# ------------------------------------------------------------------------------ literal secrets
def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def is_secret_name(name: str) -> bool:
    """A parameter name that names a secret (``api_key``, ``access_token``, ``apiKey``,
    ``Authorization``...), ``api_key_env`` (the name of an environment variable) excepted;
    ``max_tokens`` is no secret."""
    if name == KEY_ENV_PARAM:
        return False
    words = _words(name)
    return any(w in SECRET_WORDS for w in words) or "apikey" in "".join(words)


def secret_params(params: Any, prefix: str = "") -> list[str]:
    """The (dotted) names of parameters holding a literal secret, at any depth."""
    found: list[str] = []
    if isinstance(params, Mapping):
        for k, v in params.items():
            name = f"{prefix}{k}"
            if is_secret_name(str(k)):
                found.append(name)
            else:
                found += secret_params(v, name + ".")
    elif isinstance(params, list):
        for n, v in enumerate(params):
            found += secret_params(v, f"{prefix}{n}.")
    return found


def public_params(params: Any) -> Any:
    """``params`` with every secret-named value hidden: what pages, the API and exports show
    (rows stored before literal keys were refused included)."""
    if isinstance(params, Mapping):
        return {k: REDACTED if is_secret_name(str(k)) else public_params(v) for k, v in params.items()}
    if isinstance(params, list):
        return [public_params(v) for v in params]
    return params


# ------------------------------------------------------------------------------ keys
def _list_setting(name: str, default: tuple[str, ...]) -> list[str]:
    value = getattr(settings, name, None)
    if value is None:
        return list(default)
    if isinstance(value, str):
        value = value.split(",")
    return [str(v).strip() for v in value if str(v).strip()]


def _key_entries() -> list[tuple[str, str | None]]:
    """(name or prefix*, endpoint entry or None) of each ``HV_JUDGE_API_KEYS`` entry."""
    out = []
    for entry in _list_setting("HV_JUDGE_API_KEYS", DEFAULT_KEY_NAMES):
        name, at, endpoint = entry.partition("@")
        out.append((name.strip(), endpoint.strip().lower() if at else None))
    return out


def allowed_key_names() -> list[str]:
    return list(dict.fromkeys(name for name, _ in _key_entries()))


def _name_matches(pattern: str, name: str) -> bool:
    return name == pattern or (pattern.endswith("*") and len(name) >= len(pattern) and name.startswith(pattern[:-1]))


def key_endpoints(name: str) -> list[str]:
    """The endpoint entries the key ``name`` is bound to (``NAME@endpoint``)."""
    return [e for pattern, e in _key_entries() if e and _name_matches(pattern, name)]


def goes_to_default(name: str) -> bool:
    """Whether the key ``name`` may go to the default endpoint ``HV_JUDGE_API_BASE``: listed by
    its exact name without ``@``, or the default key ``HV_JUDGE_API_KEY`` that no entry binds.
    A prefix without ``@`` binds nothing (issue 37, M7): it allows names, not destinations."""
    entries = _key_entries()
    if any(endpoint is None and pattern == name for pattern, endpoint in entries):
        return True
    return name == DEFAULT_KEY_ENV and not key_endpoints(name)


def key_bound_to(name: str, url: str) -> bool:
    """Whether the key ``name`` may be sent to ``url``: to the host:port pairs it is bound to
    (``NAME@host:port``), whatever the path; to the default endpoint (its scheme, host and port)
    only when :func:`goes_to_default`. A bound key goes only to its host:port (issue 37, M7)."""
    host, port, scheme = _host_port(url)
    if any(_entry_matches(e, host, port, scheme) for e in key_endpoints(name)):
        return True
    default = default_base_url()
    return bool(default) and _host_port(default) == (host, port, scheme) and goes_to_default(name)


def _bindings_text(name: str) -> str:
    where = key_endpoints(name) + (["the default endpoint (HV_JUDGE_API_BASE)"] if goes_to_default(name) else [])
    return ", ".join(where) or "no endpoint (a prefix without @ binds none)"


def check_key_for_endpoint(name: str, url: str) -> None:
    if not key_bound_to(name, url):
        raise ValueError(
            f"params.api_key_env {name!r} may not be sent to this endpoint: the administrator binds each key "
            f"to its endpoints in HV_JUDGE_API_KEYS (NAME@host:port); {name} is bound to {_bindings_text(name)}"
        )


def check_key_name(name: str) -> str:
    """``name`` when a judge may use the environment variable of that name as its key."""
    check_no_control("params.api_key_env", name)
    allowed = allowed_key_names()
    listed = any(_name_matches(a, name) for a in allowed)
    ok = name == DEFAULT_KEY_ENV or (name not in NEVER_KEYS and listed)
    if not ok:
        raise ValueError(
            f"params.api_key_env {name!r} is not allowed: a judge's key is an environment variable the "
            f"administrator allows in HV_JUDGE_API_KEYS ({', '.join(allowed) or 'none'})"
        )
    return name


def api_key(params: Mapping[str, Any], base_url: str | None = None) -> str:
    """The judge's API key: the allowed environment variable ``params.api_key_env`` names
    (default ``HV_JUDGE_API_KEY``), read from ``os.environ`` only; "" when unset. Given the
    endpoint ``base_url``: a key the judge names must be bound to it (else ValueError); the
    default key, when the judge names none, is "" (not sent) where it is not bound."""
    explicit = params.get(KEY_ENV_PARAM)
    name = check_key_name(str(explicit or DEFAULT_KEY_ENV))
    if base_url is not None and not key_bound_to(name, base_url):
        if explicit:
            check_key_for_endpoint(name, base_url)
        return ""
    # the key goes into a header: one with a line break is the deployment's mistake, never sent
    return check_no_control(f"the key in {name}", os.environ.get(name, ""))


# ------------------------------------------------------------------------------ endpoints
def default_base_url() -> str:
    return str(getattr(settings, "HV_JUDGE_API_BASE", "") or os.environ.get("HV_JUDGE_API_BASE", ""))


def allowed_hosts() -> list[str]:
    return [h.lower() for h in _list_setting("HV_JUDGE_ALLOWED_HOSTS", DEFAULT_HOSTS)]


def _host_port(url: str) -> tuple[str, int, str]:
    """(host, port, scheme) of an endpoint URL; ValueError for anything but a plain http(s) URL."""
    check_no_control("params.base_url", url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValueError(f"params.base_url {url!r} is not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("params.base_url must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError("params.base_url must not hold credentials (the key comes from params.api_key_env)")
    if any(is_secret_name(k) for k, _ in parse_qsl(parts.query, keep_blank_values=True)):
        raise ValueError("params.base_url must not hold a key in its query (the key comes from params.api_key_env)")
    return parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80), parts.scheme


def _entry(entry: str) -> tuple[str, int | None]:
    """(host, port) of an allow-list entry: ``host``, ``host:port``, ``host:*``, ``[v6]``,
    ``[v6]:port`` or a bare IPv6 address; the port None when the entry names none (the URL's
    scheme's default port then), :data:`ANY_PORT` for ``*``."""
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        host, port = entry.split(":")
    else:
        host, port = entry, ""
    if port == "*":
        return host, ANY_PORT
    return host, int(port) if port.isdigit() else None


def _entry_matches(entry: str, host: str, port: int, scheme: str) -> bool:
    if entry == "*":
        return True
    e_host, e_port = _entry(entry)
    if e_port is None:  # no port named: the scheme's default port only
        e_port = 443 if scheme == "https" else 80
    if e_port != ANY_PORT and e_port != port:
        return False
    if e_host.startswith("*."):
        e_host = e_host[1:]
    if e_host.startswith("."):
        return host.endswith(e_host)
    return host == e_host


def check_base_url(url: str) -> str:
    """``url`` when the worker may send a judge's requests there: the administrator's default
    endpoint (``HV_JUDGE_API_BASE``), or a host allowed by ``HV_JUDGE_ALLOWED_HOSTS``."""
    host, port, scheme = _host_port(url)
    default = default_base_url()
    if default and _host_port(default)[:2] == (host, port):
        return url
    allowed = allowed_hosts()
    if not any(_entry_matches(e, host, port, scheme) for e in allowed):
        raise ValueError(
            f"params.base_url host {host}:{port} is not allowed: judge endpoints are the host:port pairs the "
            f"administrator allows in HV_JUDGE_ALLOWED_HOSTS ({', '.join(allowed) or 'none'})"
            + (" or HV_JUDGE_API_BASE" if default else "")
        )
    return url


def check_params(backend: str, params: Mapping[str, Any]) -> None:
    """Everything a judge's parameters may not hold, checked when the judge is created: literal
    secrets (any backend); for the OpenAI-compatible backend a key name or endpoint the
    administrator does not allow."""
    secrets_ = secret_params(params)
    if secrets_:
        raise ValueError(
            f"judge parameters must not hold keys, tokens or passwords ({', '.join(secrets_)}): put the key in "
            f"an environment variable the administrator allows and name it in params.api_key_env"
        )
    if backend == "openai_chat":
        if KEY_ENV_PARAM in params:
            if not isinstance(params[KEY_ENV_PARAM], str):
                raise ValueError("params.api_key_env is the name of an environment variable")
            check_key_name(params[KEY_ENV_PARAM])
        if params.get("base_url"):
            if not isinstance(params["base_url"], str):
                raise ValueError("params.base_url is a URL")
            check_base_url(params["base_url"])
        url = params.get("base_url") or default_base_url()
        if params.get(KEY_ENV_PARAM) and url:  # a key the judge names goes only where it is bound
            check_key_for_endpoint(params[KEY_ENV_PARAM], url)


__all__ = [
    "allowed_hosts",
    "allowed_key_names",
    "api_key",
    "check_base_url",
    "check_key_for_endpoint",
    "check_key_name",
    "check_no_control",
    "check_params",
    "default_base_url",
    "goes_to_default",
    "is_secret_name",
    "key_bound_to",
    "key_endpoints",
    "public_params",
    "secret_params",
]
