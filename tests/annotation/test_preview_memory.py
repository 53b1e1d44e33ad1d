"""The preview of a large annotation file in a worker with a memory cap (issue 37, M3): the check
behind the preview held the file's bytes, its text and every rating read (~1.5 KiB per
annotation: 1,635 MiB for 10^6), so a 145 MB Label Studio export took a web worker past 1.1 GB
until gunicorn killed it. Here the attack at a tenth of the scale that keeps the test quick:
a Label Studio JSON export of 10^5 annotations (~20 MB), previewed in a child process whose
data segment may grow by no more than :data:`CAP_MIB` past what Django, the project and a
database connection hold, a cap smaller than the file itself. The old check ran out of memory
under it (MemoryError); the streaming check reads the file a chunk at a time, keeps no rating,
and one int per rating at most, and meets it. perf/preview_memory.py measures 10^4 to 10^6."""

from __future__ import annotations

import json

import pytest

from tests import embedded

pytestmark = pytest.mark.slow  # a child process on its own migrated SQLite file, ~10 s

TASKS, SOURCES = 10_000, 10  # 10^5 annotations: every source rates every task
CAP_MIB = 16

PREVIEW_UNDER_A_CAP = f"""
import json, os, resource
from pathlib import Path
from django.conf import settings
from annotation import annotation_import
from annotation.models import Item
from tests.annotation.factories import make_project, make_user

TASKS, SOURCES, CAP = {TASKS}, {SOURCES}, {CAP_MIB} * 2**20
project = make_project("cqbench.turing", owner=make_user("owner", researcher=True))
Item.objects.bulk_create(
    Item(project=project, external_id=f"t{{i}}", version=1, data={{"human_utterance": f"h{{i}}", "model_utterance": f"m{{i}}"}})
    for i in range(TASKS)
)


def write_export(path, tasks):
    # Label Studio's JSON export (exportType=JSON): a task list, each task's annotations inside
    with path.open("w") as fh:
        fh.write("[")
        for i in range(tasks):
            anns = ",".join(
                json.dumps({{
                    "id": i * SOURCES + r, "completed_by": r + 1, "lead_time": 4.2, "created_at": "2024-05-01T10:00:00Z",
                    "result": [{{"from_name": "human_written", "type": "choices", "value": {{"choices": ["left"]}}}}],
                }})
                for r in range(SOURCES)
            )
            fh.write(("," if i else "") + f'{{{{"id": {{i}}, "data": {{{{"id": "t{{i}}"}}}}, "annotations": [{{anns}}]}}}}')
        fh.write("]")


def preview(path):
    return annotation_import.preview_staged(
        project=project, path=path, data_format="labelstudio", item_key="id", mapping={{}}
    )


folder = Path(settings.MEDIA_ROOT)
small, large = folder / "small.json", folder / "large.json"
write_export(small, 3)
write_export(large, TASKS)
preview(small)  # every module and query the preview needs, loaded before the cap


def data_segment():
    for line in open("/proc/self/status"):
        if line.startswith("VmData:"):
            return int(line.split()[1]) * 1024


before = data_segment()
_, hard = resource.getrlimit(resource.RLIMIT_DATA)
resource.setrlimit(resource.RLIMIT_DATA, (before + CAP, hard))
report = preview(large)
print(json.dumps({{
    "file_bytes": large.stat().st_size, "cap_bytes": CAP, "grew_bytes": data_segment() - before,
    "ok": report.ok, "errors": report.errors[:3], "annotations": report.annotations_read,
    "raters": report.raters, "items": report.items_matched, "per_rater": [r["annotations"] for r in report.rater_plan],
}}))
"""


def test_a_large_label_studio_preview_stays_under_a_memory_cap(embedded_sqlite_template, tmp_path):
    db = embedded.fresh_copy(embedded_sqlite_template, tmp_path)
    result = embedded.run_child(db, tmp_path, PREVIEW_UNDER_A_CAP)
    assert result.returncode == 0, result.stderr[-3000:]  # the old check: MemoryError
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["file_bytes"] > outcome["cap_bytes"], outcome  # the file alone would not fit
    assert outcome["ok"], outcome["errors"]
    # what the file holds, counted from how it was written
    assert outcome["annotations"] == TASKS * SOURCES
    assert outcome["raters"] == SOURCES and outcome["per_rater"] == [TASKS] * SOURCES
    assert outcome["items"] == TASKS
