"""Issue 12, finding 11: remove literal secrets stored in judge parameters before they were refused.

New judges cannot hold a literal key (``judges.endpoints``: only ``api_key_env``, the name of an
allowed environment variable). Rows written earlier may: this removes, at any depth, every
parameter whose name names a secret (``api_key``, ``key``, ``token``, ``Authorization``,
``bearer``...; ``api_key_env`` kept) from ``JudgeConfig.params`` and from the judge rater's
``Rater.parameters``, and records what was removed as ``secrets_removed`` (dotted names, never
values) in the same JSON, so a researcher sees why a judge lost its key. Irreversible on purpose:
going back leaves the rows as they are now.

The test for a secret name is copied here (not imported) so that this migration keeps doing
what it did when the app's code changes."""

from __future__ import annotations

import re
from typing import Any

from django.db import migrations

REMOVED_KEY = "secrets_removed"
KEY_ENV_PARAM = "api_key_env"
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


def is_secret_name(name: str) -> bool:
    if name in (KEY_ENV_PARAM, REMOVED_KEY):
        return False
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    words = [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]
    return any(w in SECRET_WORDS for w in words) or "apikey" in "".join(words)


def scrub(value: Any, removed: list[str], prefix: str = "") -> Any:
    """``value`` without secret-named entries, at any depth; their dotted names go to ``removed``."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            name = f"{prefix}{k}"
            if is_secret_name(str(k)):
                removed.append(name)
            else:
                out[k] = scrub(v, removed, name + ".")
        return out
    if isinstance(value, list):
        return [scrub(v, removed, f"{prefix}{n}.") for n, v in enumerate(value)]
    return value


def scrubbed(params: Any) -> Any | None:
    """The scrubbed parameters, or None when there was nothing to remove."""
    if not isinstance(params, dict):
        return None
    removed: list[str] = []
    clean = scrub(params, removed)
    if not removed:
        return None
    clean[REMOVED_KEY] = sorted({*params.get(REMOVED_KEY, []), *removed})
    return clean


def scrub_literal_keys(apps, schema_editor) -> None:
    JudgeConfig = apps.get_model("judges", "JudgeConfig")
    Rater = apps.get_model("annotation", "Rater")
    for config in JudgeConfig.objects.only("id", "params").iterator():
        clean = scrubbed(config.params)
        if clean is not None:
            JudgeConfig.objects.filter(pk=config.pk).update(params=clean)
    for rater in Rater.objects.filter(kind="model").only("id", "parameters").iterator():
        clean = scrubbed(rater.parameters)
        if clean is not None:
            Rater.objects.filter(pk=rater.pk).update(parameters=clean)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0002_item_strata_indexes_per_project"),
        ("judges", "0004_judgerun_lease"),
    ]

    operations = [migrations.RunPython(scrub_literal_keys, migrations.RunPython.noop, elidable=False)]
