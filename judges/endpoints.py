"""Which endpoints and keys a judge may use: configured by the deployment, never by the judge.

A researcher configures a judge's parameters; the worker then sends requests, with an API key,
to the endpoint those parameters name. So both are allow-listed by whoever runs the platform
(issue 12, findings 1, 2 and 11):

- **keys** (``params.api_key_env``): the name of an environment variable holding the key, one
  of ``settings.HV_JUDGE_API_KEYS`` (``HV_JUDGE_API_KEYS``: names, or prefixes ending in ``*``;
  default ``HV_JUDGE_API_KEY`` and ``HV_JUDGE_KEY_*``). Only ``os.environ`` is read, never a
  Django setting, and the platform's own secrets are refused even when listed.
- **endpoints** (``params.base_url``): ``http(s)`` URLs whose host (and port) is in
  ``settings.HV_JUDGE_ALLOWED_HOSTS`` (``host`` any port, ``host:port``, ``.example.com`` its
  subdomains, ``*`` any host; default loopback only), or the admin's default endpoint
  ``HV_JUDGE_API_BASE``. No credentials in the URL.
- **no literal secrets** in a judge's parameters: any key naming a key, token, secret, password
  or authorization (but ``api_key_env``) is refused, and :func:`public_params` hides such
  values already stored wherever parameters are shown or exported.

Checked when a judge is created (``services.create_judge_config``) and again by the worker
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
DEFAULT_HOSTS = ("127.0.0.1", "localhost", "::1")
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
#: (line breaks, tab, NUL, DEL...) and the line / paragraph separators
CONTROL_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})


def has_control(text: str) -> bool:
    return any(unicodedata.category(ch) in CONTROL_CATEGORIES for ch in text)


def check_no_control(what: str, text: str) -> str:
    """``text`` when it holds no control character (issue 23, finding 2): a URL parser strips a
    line break the HTTP client then refuses, mid-run; refused here, when the judge is created."""
    if has_control(text):
        raise ValueError(f"{what} must not hold control characters (line breaks, tabs, NUL)")
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


def allowed_key_names() -> list[str]:
    return _list_setting("HV_JUDGE_API_KEYS", DEFAULT_KEY_NAMES)


def check_key_name(name: str) -> str:
    """``name`` when a judge may use the environment variable of that name as its key."""
    check_no_control("params.api_key_env", name)
    allowed = allowed_key_names()
    listed = any(name == a or (a.endswith("*") and len(name) >= len(a) and name.startswith(a[:-1])) for a in allowed)
    ok = name == DEFAULT_KEY_ENV or (name not in NEVER_KEYS and listed)
    if not ok:
        raise ValueError(
            f"params.api_key_env {name!r} is not allowed: a judge's key is an environment variable the "
            f"administrator allows in HV_JUDGE_API_KEYS ({', '.join(allowed) or 'none'})"
        )
    return name


def api_key(params: Mapping[str, Any]) -> str:
    """The judge's API key: the allowed environment variable ``params.api_key_env`` names
    (default ``HV_JUDGE_API_KEY``), read from ``os.environ`` only; "" when unset."""
    name = check_key_name(str(params.get(KEY_ENV_PARAM) or DEFAULT_KEY_ENV))
    # the key goes into a header: one with a line break is the deployment's mistake, never sent
    return check_no_control(f"the key in {name}", os.environ.get(name, ""))


# ------------------------------------------------------------------------------ endpoints
def default_base_url() -> str:
    return str(getattr(settings, "HV_JUDGE_API_BASE", "") or os.environ.get("HV_JUDGE_API_BASE", ""))


def allowed_hosts() -> list[str]:
    return [h.lower() for h in _list_setting("HV_JUDGE_ALLOWED_HOSTS", DEFAULT_HOSTS)]


def _host_port(url: str) -> tuple[str, int | None, str]:
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
    """(host, port or None for any) of an allow-list entry: ``host``, ``host:port``, ``[v6]``,
    ``[v6]:port`` or a bare IPv6 address."""
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        host, port = entry.split(":")
    else:
        host, port = entry, ""
    return host, int(port) if port.isdigit() else None


def _entry_matches(entry: str, host: str, port: int | None) -> bool:
    if entry == "*":
        return True
    e_host, e_port = _entry(entry)
    if e_port is not None and e_port != port:
        return False
    if e_host.startswith("*."):
        e_host = e_host[1:]
    if e_host.startswith("."):
        return host.endswith(e_host)
    return host == e_host


def check_base_url(url: str) -> str:
    """``url`` when the worker may send a judge's requests there: the administrator's default
    endpoint (``HV_JUDGE_API_BASE``), or a host allowed by ``HV_JUDGE_ALLOWED_HOSTS``."""
    host, port, _ = _host_port(url)
    default = default_base_url()
    if default and _host_port(default)[:2] == (host, port):
        return url
    allowed = allowed_hosts()
    if not any(_entry_matches(e, host, port) for e in allowed):
        raise ValueError(
            f"params.base_url host {host}:{port} is not allowed: judge endpoints are the ones the "
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


__all__ = [
    "allowed_hosts",
    "allowed_key_names",
    "api_key",
    "check_base_url",
    "check_key_name",
    "check_no_control",
    "check_params",
    "default_base_url",
    "is_secret_name",
    "public_params",
    "secret_params",
]
