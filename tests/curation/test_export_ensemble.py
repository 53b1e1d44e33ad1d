"""One truth for ensembles (issue 10, point 6): the long annotations export carries a combined
judge's exact value (``value_exact``) next to its stored, rounded rubric answer and names the
judge, so a correlation recomputed from the export equals the agreement report's."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from agreement.services import ReportParams, compute_report
from annotation.models import Item
from curation.exports import export_root, run_export_job
from curation.models import Export
from judges import configuration, execution, runs
from judges.models import JudgeOutput

from .helpers import submit_all, valueground_project

pytestmark = pytest.mark.django_db

HUMAN_Q4 = [1, 0, 1, 0, 1, 0]
JUDGE_B_Q4 = [1, 0, 0, 1, 1, 0]  # judge A always answers q4 = 1: the rounded mean is always 1


def find(tree, key):
    """The first dict under ``key`` anywhere in a nested report."""
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        for v in tree.values():
            found = find(v, key)
            if found is not None:
                return found
    return None


@pytest.fixture
def project(researcher, annotators, tmp_path, django_capture_on_commit_callbacks):
    project = valueground_project(researcher, annotators[:3], tmp_path / "img", n=6, k=3)
    items = list(Item.objects.filter(project=project).order_by("id"))
    pos = {it.id: i for i, it in enumerate(items)}
    submit_all(
        project,
        lambda item, rater: {
            "q1": 2,
            "q2": 1,
            "q3": (pos[item.id] + int(rater.name[-1])) % 3,
            "q4": HUMAN_Q4[pos[item.id]],
        },
    )
    common = {"backend": "openai_chat", "model_id": "m", "params": {"base_url": "http://127.0.0.1:9"}}
    a = configuration.create_judge_config(project=project, name="a", questions=["q1", "q2", "q3", "q4"], **common)
    b = configuration.create_judge_config(project=project, name="b", questions=["q1", "q2", "q3", "q4"], **common)
    ens = configuration.create_judge_config(project=project, name="ens", backend="ensemble", members=[a, b])
    with django_capture_on_commit_callbacks(execute=False):
        run = runs.start_judge_run(config=ens)
    for it in items:  # what the two members answered (no endpoint is called: every pass is in)
        i = pos[it.id]
        for p, (member, q4) in enumerate([(a, 1), (b, JUDGE_B_Q4[i])]):
            parsed = {"q1": 2, "q2": 1, "q3": (i + p) % 3, "q4": q4}
            JudgeOutput.objects.create(
                run=run, item=it, pass_index=p, member=member, raw_output=json.dumps(parsed), parsed=parsed
            )
    run = execution.execute_judge_chunk(run_id=run.id, item_ids=run.item_ids)
    assert run.status == "done", run.message
    return project


def read(project, user, fmt) -> pd.DataFrame:
    export = run_export_job(
        export=Export.objects.create(project=project, created_by=user, content="annotations", format=fmt, scope="all")
    )
    assert export.status == "done", export.message
    path = export_root(export) / f"annotations.{fmt}"
    if fmt == "jsonl":
        return pd.read_json(path, lines=True, dtype=False)
    if fmt == "csv":
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        for c in ("value_num", "value_exact"):
            df[c] = pd.to_numeric(df[c].replace("", np.nan))
        return df
    return pd.read_parquet(path)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_the_export_carries_the_exact_value_and_agrees_with_the_report(project, researcher, fmt):
    df = read(project, researcher, fmt)
    names = list(df.columns)
    assert names[:7] == ["item", "item_version", "rater", "rater_kind", "field", "value", "value_num"]
    # added at the end (then duration_ms, source and rater.<attribute> columns): earlier columns unchanged
    tail = names[names.index("judge_name") :]
    assert tail[:4] == ["judge_name", "value_exact", "duration_ms", "source"]
    assert all(c.startswith("rater.") for c in tail[4:])
    humans = df[df["rater_kind"] == "human"]
    assert humans["value_exact"].isna().all() and humans["judge_name"].isna().all() | (humans["judge_name"] == "").all()
    judge = df[df["rater_kind"] == "model"]
    assert set(judge["judge_name"]) == {"ens"}
    jq4 = judge[judge["field"] == "q4"].set_index("item")
    assert set(jq4["value_num"]) == {1.0}  # the rounded rubric answer: constant, no correlation
    assert sorted(set(jq4["value_exact"])) == [0.5, 1.0]
    # the report's reading of every row: value_exact where present, else value_num
    df["reading"] = df["value_exact"].fillna(df["value_num"])
    q4 = df[df["field"] == "q4"]
    human_mean = q4[q4["rater_kind"] == "human"].groupby("item")["reading"].mean()
    judge_q4 = q4[q4["rater_kind"] == "model"].set_index("item")["reading"].reindex(human_mean.index)
    r_export = float(np.corrcoef(judge_q4.to_numpy(float), human_mean.to_numpy(float))[0, 1])

    report = compute_report(project=project, params=ReportParams(field="q4", bootstrap=0))
    vs = find(report["fields"]["q4"], "judges_vs_humans")
    (entry,) = vs.values()
    r_report = entry["vs_human_mean"]["pearson"]["value"]
    assert r_report is not None and r_export == pytest.approx(r_report, abs=1e-9)
    # the derived Total too: computed from the exact means in the report's reading
    tot = judge[judge["field"] == "total"]
    assert tot["value_exact"].notna().all()
