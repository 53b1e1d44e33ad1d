"""Items needing revision, with every rater's answers and feedback, in the import format (JSONL),
to be edited and re-imported as new versions (:func:`curation.services.import_revisions`)."""

from __future__ import annotations

import json
import os
import secrets
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agreement.selectors import submitted_annotations
from benchmarks.base import STRATA_KEYS

from .. import selectors
from ..models import Export
from .common import Pseudonyms, file_entry


def export_revisions(export: Export, root: Path, prov: dict[str, Any], progress: Callable[[float], None]) -> list[dict]:
    """One JSONL record per item needing revision, in the import format (image fields as
    ``sha256:<hex>`` of the stored image) plus ``_revision``: the decision, every rater's
    answers and free-text feedback, and the images' original file names. Edit the item fields, keep ``id``, and re-import."""
    project = export.project
    rubric = project.rubric_version.parsed()
    text_ids = [q.id for q in rubric.questions if q.type == "text"]
    images = set(project.preset.image_fields())
    pseudonyms = Pseudonyms()
    qs = selectors.needs_revision_items(project)
    total = max(qs.count(), 1)
    out = root / "revisions.jsonl"
    tmp = root / f".tmp-{secrets.token_hex(6)}-revisions.jsonl"
    n = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for rows in selectors.item_chunks(
            qs,
            "external_id",
            "version",
            "data",
            *STRATA_KEYS,
            "meta",
            "decision__reason",
            "decision__note",
            "image_names",
        ):
            feedback = defaultdict(list)
            for item_id, rater_id, kind, answers, derived in (
                submitted_annotations(project)
                .filter(item_id__in=[r[0] for r in rows])
                .order_by("id")
                .values_list("item_id", "rater_id", "rater__kind", "answers", "derived")
            ):
                feedback[item_id].append(
                    {
                        "rater": pseudonyms(rater_id),
                        "rater_kind": kind,
                        "answers": answers,
                        "derived": derived,
                        "feedback": {t: answers.get(t) for t in text_ids if (answers or {}).get(t)},
                    }
                )
            for r in rows:
                record: dict[str, Any] = {"id": r[1]}
                for k, v in (r[3] or {}).items():
                    record[k] = f"sha256:{v}" if k in images and v else v
                for c, v in zip(STRATA_KEYS, r[4 : 4 + len(STRATA_KEYS)], strict=True):
                    if v:
                        record[c] = v
                k = 4 + len(STRATA_KEYS)
                if r[k]:
                    record["meta"] = r[k]
                record["_revision"] = {
                    "of_version": r[2],
                    "reason": r[k + 1],
                    "note": r[k + 2],
                    "ratings": feedback.get(r[0], []),
                    # the file names the images were imported under (a re-import keeps them)
                    "image_names": r[k + 3] or {},
                }
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                n += 1
            progress(n / total)
    os.replace(tmp, out)
    return [file_entry(out, out.name, n)]
