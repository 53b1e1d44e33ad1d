"""Snapshot what the platform answers on the demo data, to compare two trees byte for byte.

    cd TREE && python /path/to/scripts/demo_snapshot.py OUT_DIR

In a fresh SQLite database under OUT_DIR it migrates, seeds the demo (``seed_demo``), then, as
the demo researcher, GETs every API operation of the published schema whose only parameters are
a project id (every demo project) or nothing, the validation report in every format, starts an
export of every kind and format (run inline: ``CELERY_TASK_ALWAYS_EAGER``) and downloads each
file, and writes each answer to OUT_DIR/answers/. Ids, timestamps and the other values that
differ from run to run are replaced by placeholders, so that two trees that behave alike give
the same files: `diff -r A/answers B/answers`. Only HTTP and management commands are used, so the
script runs unchanged on an older commit (refactors that move modules do not touch it).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

OUT = Path(sys.argv[1]).resolve()
# the tree to snapshot: the current directory (so one copy of this script serves an old checkout)
sys.path.insert(0, os.getcwd())
OUT.mkdir(parents=True, exist_ok=True)
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{OUT / 'db.sqlite3'}",
        "HV_VAR_DIR": str(OUT / "var"),
        "MEDIA_ROOT": str(OUT / "media"),
        "HV_DEMO": "1",
        "DEBUG": "true",
        "CELERY_TASK_ALWAYS_EAGER": "true",
    }
)

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

setup_test_environment()  # the test client's ALLOWED_HOSTS ("testserver")
call_command("migrate", verbosity=0)
with open(os.devnull, "w") as quiet:
    call_command("seed_demo", stdout=quiet)

from django.contrib.auth import get_user_model  # noqa: E402

#: values that differ between two runs of the same tree: times, hashes of random salts, tokens
VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"\b\d{4}-\d\d-\d\d\b"), "<date>"),
    (re.compile(r"(\"(duration_ms|elapsed_s|seconds|took_ms|wall_s)\": )[0-9.]+"), r"\1<n>"),
    (re.compile(r"/tmp/[^\s\"',]+"), "<tmp>"),
    (re.compile(str(OUT)), "<out>"),
]


def normal(body: bytes) -> bytes:
    try:
        text = body.decode()
    except UnicodeDecodeError:
        return hashlib.sha256(body).hexdigest().encode()
    for pattern, repl in VOLATILE:
        text = pattern.sub(repl, text)
    return text.encode()


def main() -> None:
    researcher = get_user_model().objects.get(username="researcher")
    client = Client()
    client.force_login(researcher)
    answers = OUT / "answers"
    answers.mkdir(exist_ok=True)
    projects = sorted(p["id"] for p in client.get("/api/projects/").json()["results"])
    schema = client.get("/api/schema/?format=json").json()
    paths = []
    for path, ops in sorted(schema["paths"].items()):
        if "get" not in ops:
            continue
        params = set(re.findall(r"{(\w+)}", path))
        if not params:
            paths.append(path)
        elif params in ({"id"}, {"project_id"}, {"pk"}) and path.startswith("/api/projects/"):
            paths += [re.sub(r"{\w+}", str(p), path) for p in projects]
    for p in projects:
        for fmt in ("json", "csv", "markdown", "latex"):
            paths.append(f"/api/projects/{p}/validation-report/?format={fmt}")
    for url in paths:
        r = client.get(url)
        name = re.sub(r"[^A-Za-z0-9]+", "_", url).strip("_")
        (answers / f"{name}.txt").write_bytes(f"{r.status_code}\n".encode() + normal(r.content))
    for p in projects:
        for content, formats in (("items", ("jsonl", "csv")), ("annotations", ("jsonl", "csv"))):
            for fmt in formats:
                r = client.post(f"/api/projects/{p}/exports/", {"content": content, "format": fmt})
                name = f"export_{p}_{content}_{fmt}"
                if r.status_code >= 300:
                    (answers / f"{name}.txt").write_bytes(f"{r.status_code}\n".encode() + normal(r.content))
                    continue
                export = r.json()
                detail = client.get(f"/api/exports/{export['id']}/").json()
                body = client.get(f"/exports/{export['id']}/download/")
                content_bytes = b"".join(body.streaming_content) if body.streaming else body.content
                (answers / f"{name}.txt").write_bytes(
                    f"{body.status_code} {detail.get('status')}\n".encode() + normal(content_bytes)
                )
    print(f"{len(list(answers.iterdir()))} answers in {answers}")


main()
