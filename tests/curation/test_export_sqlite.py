"""An export of 50,000 annotations on the embedded stack (SQLite, WAL) while the job's
heartbeat writes from its own connection (issue 37, H3): it failed with "database is locked" at
its first progress update, 6 times of 6; 20,000 exported fine. The export runs in a worker-like
child process on a real SQLite file, the heartbeat beating every 0.2 s."""

from __future__ import annotations

import json

import pytest

from tests import embedded

pytestmark = pytest.mark.slow  # a child process on its own migrated SQLite file

ANNOTATIONS = 50_000
RATERS = 4

EXPORT = f"""
import json, random, sys
sys.path.insert(0, "perf")
from export_bench import populate
from django.contrib.auth import get_user_model
from annotation import projects
from annotation.models import Rater
from curation.exports import run_export_job
from curation.models import Export

User = get_user_model()
owner = User.objects.create(username="owner")
project = projects.create_project(
    name="h3", preset_key="valueground.pair_quality", created_by=owner, k_per_item={RATERS}
)
raters = [
    Rater.objects.create(kind="human", user=User.objects.create(username=f"ann{{i}}"), name=f"ann{{i}}")
    for i in range({RATERS})
]
populate(project, raters, 1, {ANNOTATIONS // RATERS}, random.Random(1))
export = Export.objects.create(project=project, content="annotations", format="jsonl", scope="all")
export = run_export_job(export=export)
export.refresh_from_db()
print(json.dumps({{"status": export.status, "message": export.message, "progress": export.progress,
                  "files": export.files, "beats_seen": export.heartbeat_at is not None}}))
"""


def test_export_of_50k_annotations_on_sqlite_with_a_beating_heartbeat(embedded_sqlite_template, tmp_path):
    db = embedded.fresh_copy(embedded_sqlite_template, tmp_path)
    # a lease of 1.6 s: the heartbeat writes every 0.2 s (core.heartbeat), many times per export
    result = embedded.run_child(db, tmp_path, EXPORT, env={"HV_JOB_LEASE_SECONDS": "1.6"})
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["status"] == "done", outcome["message"]
    assert outcome["progress"] == 1.0
    annotations = next(f for f in outcome["files"] if f["name"] == "annotations.jsonl")
    # one long row per answer: q1-q4, total, accepted (6 per annotation), the file's own count
    path = tmp_path / "media"
    written = next(path.rglob("annotations.jsonl"))
    with written.open() as fh:
        lines = sum(1 for _ in fh)
    assert annotations["rows"] == lines == ANNOTATIONS * 6
