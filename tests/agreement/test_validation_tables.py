"""The protocols' validation tables (issue 10): the paper's tables computed from ratings stored
through the platform, checked cell by cell against an independent computation (numpy / scipy /
sklearn) to 1e-9, and the paper-ready exports (Markdown, LaTeX booktabs, CSV, JSON) from the
API, the management command and the page, which must all hold the same numbers."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import resolve, reverse

from agreement import validation
from agreement.services import ReportParams, compute_report
from benchmarks import blendvis, counterfactuals, cqbench, cultivate
from benchmarks.blendvis import tables as blendvis_tables
from benchmarks.valueground import tables as valueground_tables
from core import csvsafe
from hvstats.tables import Cell, Row, Table, format_cell, to_csv, to_latex, to_markdown
from tests.agreement import test_paper_tables as paper
from tests.agreement.test_paper_tables import (
    TOL,
    VG_ANNOTATORS,
    VG_FIELDS,
    eq8,
    pearson,
    spearman,
    submit_judge,
    table4_independent,
)
from tests.annotation.factories import make_user

CQ_STORY, CQ_TURING = cqbench.STORY.key, cqbench.TURING.key

pytestmark = pytest.mark.django_db

# the paper-table fixtures: raw ratings stored through the platform (import, submit, judge rater)
env = paper._env
valueground = paper.valueground
store_ensemble = paper._store_ensemble


def close(a, b) -> bool:
    return a is not None and b is not None and abs(a - b) <= TOL


# ------------------------------------------------------------------------------ renderers
def sample_tables() -> list[Table]:
    return [
        Table(
            key="t_1",
            title="Table 1: a & b",
            columns=("Pearson r", "Bad rate", "n", "mean"),
            rows=(
                Row(
                    "Q1_x",
                    (
                        Cell(0.123456, (0.01, 0.2), 36),
                        Cell(0.054, (0.03, 0.08), 500, "%"),
                        Cell(36, fmt="count"),
                        Cell(3.276, fmt="num"),
                    ),
                ),
                Row(
                    "Total",
                    (
                        Cell(None, note="undefined: constant"),
                        Cell(0.0, (0.0, 0.0), 10, "%"),
                        Cell(10, fmt="count"),
                        Cell(None, fmt="num"),
                    ),
                ),
            ),
            caption="50% of #items ~ {x}",
            row_header="Field",
        )
    ]


def markdown_cells(md: str) -> list[list[str]]:
    rows = []
    for line in md.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip().replace("\\|", "|") for c in line.strip("|").split(" | ")])
    return rows


def latex_cells(tex: str) -> list[list[str]]:
    body = tex.split(r"\midrule")[1].split(r"\bottomrule")[0]
    return [[c.strip() for c in line.rstrip("\\ ").split(" & ")] for line in body.strip().splitlines()]


def unlatex(s: str) -> str:
    return s.replace(r"\%", "%").replace("--", "–").replace(r"\_", "_").replace(r"$\cdot$", "·")


def check_round_trip(tables: list[Table], md: str, tex: str, csv_text: str) -> None:
    """Markdown, LaTeX and CSV hold the numbers of the JSON (displayed digits, full CSV values)."""
    js = [t.to_dict() for t in tables]
    md_rows = markdown_cells(md)
    tex_rows = latex_cells(tex) if tables else []
    want_display = [[r["label"], *(c["display"] for c in r["cells"])] for t in js for r in t["rows"]]
    md_body = [r for r in md_rows if r not in [[t["row_header"] or "", *t["columns"]] for t in js]]
    assert md_body == want_display
    if len(js) == 1:
        assert [[unlatex(c) for c in r] for r in tex_rows] == want_display
    assert tex.count(r"\toprule") == tex.count(r"\midrule") == tex.count(r"\bottomrule") == len(js)
    got = list(csv.DictReader(io.StringIO(csv_text)))
    want = [
        (t["key"], r["label"], col, c)
        for t in js
        for r in t["rows"]
        for col, c in zip(t["columns"], r["cells"], strict=True)
    ]
    assert len(got) == len(want)
    for g, (key, label, col, c) in zip(got, want, strict=True):
        assert (g["table"], g["row"], g["column"]) == (key, label, col)
        # the API's CSV goes through core.csvsafe: a display starting with "-" (a negative
        # difference with its interval) gets the quote that keeps spreadsheets from reading a formula
        assert g["display"] in (c["display"], csvsafe.defuse(c["display"]))
        if c["value"] is None:
            assert g["value"] == ""
        elif c["format"] == "text":
            assert g["value"] == c["value"]
        else:
            assert float(g["value"]) == c["value"]  # exact: repr round trip
        if c["ci"]:
            assert [float(g["ci_low"]), float(g["ci_high"])] == c["ci"]


def test_renderers_format_escape_and_round_trip():
    t = sample_tables()
    md, tex, csv_text = to_markdown(t), to_latex(t), to_csv(t)
    assert "| Q1_x | 0.123 [0.010, 0.200] | 5.4% [3.0%, 8.0%] | 36 | 3.28 |" in md
    assert "| Total | – | 0.0% [0.0%, 0.0%] | 10 | – |" in md
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\begin{tabular}{lrrrr}" in tex
    assert r"Q1\_x & 0.123 [0.010, 0.200] & 5.4\% [3.0\%, 8.0\%] & 36 & 3.28 \\" in tex
    assert r"a \& b" in tex and r"50\% of \#items \textasciitilde{} \{x\}" in tex
    check_round_trip(t, md, tex, csv_text)
    assert Table.from_dict(json.loads(json.dumps(t[0].to_dict()))) == t[0]
    assert format_cell(Cell(0.5, fmt="p")) == "0.5"
    with pytest.raises(ValueError):
        Table("k", "t", ("a",), (Row("r", ()),))


# ------------------------------------------------------------------------------ ValueGround
def vg_columns(judge_label: str) -> dict[str, str]:
    return {
        "judge_pearson": f"{judge_label} vs mean human: Pearson r",
        "judge_spearman": f"{judge_label} vs mean human: Spearman ρ",
        "human_pearson": "Human agreement: Pearson r",
        "human_spearman": "Human agreement: Spearman ρ",
    }


VG_ROWS = (("Q1", "q1"), ("Q2", "q2"), ("Q3", "q3"), ("Q4", "q4"), ("Total", "total"))


def test_valueground_table4_from_stored_ratings_every_cell(valueground):
    project, ids, humans, judges, pos = valueground
    store_ensemble(project, ids, pos, judges)
    mean = {f: (judges["judge-a"][f] + judges["judge-b"][f]) / 2 for f in VG_FIELDS}
    mean["total"] = eq8(*(mean[q] for q in VG_FIELDS))
    tables = {t.key: t for t in validation.compute_tables(project, bootstrap=200, seed=3)}
    t4 = tables["valueground-table4"]
    want = table4_independent(humans, mean)
    cols = vg_columns("LLM ensemble (ensemble)")
    judge_cols = list(cols.values())[:2]
    human_cols = list(cols.values())[2:]
    judge_n = "LLM ensemble (ensemble) vs mean human: n"  # issue 22: every judge says its n
    assert t4.columns == (*judge_cols, judge_n, *human_cols, *valueground_tables.SLOT_COLUMNS, "n")
    for label, f in VG_ROWS:
        for k, col in cols.items():
            c = t4.cell(label, col)
            assert close(c.value, want[f][k]), (label, k, c.value, want[f][k])
            assert c.ci is not None and c.ci[0] <= c.ci[1]
        assert t4.cell(label, "n").value == 36

    # split by annotator group: judge vs the group's mean, human agreement within the group
    by_group = tables["valueground-table4-by-annotator-group"]
    for group in ("China", "Germany"):
        names = [u for u, c in VG_ANNOTATORS if c == group]
        for label, f in VG_ROWS:
            if f == "total":
                H = np.column_stack([eq8(*(humans[u][q] for q in VG_FIELDS)) for u in names])
            else:
                H = np.column_stack([humans[u][f] for u in names]).astype(float)
            row = f"{group}: {label}"
            assert close(by_group.cell(row, cols["judge_pearson"]).value, pearson(mean[f], H.mean(1)))
            assert close(by_group.cell(row, cols["judge_spearman"]).value, spearman(mean[f], H.mean(1)))
            # two annotators: each vs the other, so the mean of the two is their correlation
            assert close(by_group.cell(row, cols["human_pearson"]).value, pearson(H[:, 0], H[:, 1]))
            assert close(by_group.cell(row, cols["human_spearman"]).value, spearman(H[:, 0], H[:, 1]))

    # split by backbone: the same statistics on each backbone's pairs (items alternate gpt / gemini)
    by_backbone = tables["valueground-table4-by-backbone"]
    for b, parity in (("gpt", 0), ("gemini", 1)):
        sel = [pos[e] for e in ids if pos[e] % 2 == parity]
        sub_h = {u: {f: humans[u][f][sel] for f in VG_FIELDS} for u in humans}
        sub_j = {f: mean[f][sel] for f in (*VG_FIELDS, "total")}
        want_b = table4_independent(sub_h, sub_j)
        for label, f in VG_ROWS:
            for k, col in cols.items():
                assert close(by_backbone.cell(f"{b}: {label}", col).value, want_b[f][k]), (b, label, k)
            assert by_backbone.cell(f"{b}: {label}", "n").value == len(sel)


def test_valueground_bootstrap_is_seeded_and_single_judge_is_named(valueground):
    project, _ids, humans, judges, pos = valueground
    jraw = judges["judge-a"]
    submit_judge(project, "judge-a", lambda e: {f: int(jraw[f][pos[e]]) for f in VG_FIELDS})
    a = validation.compute_tables(project, bootstrap=100, seed=1)
    b = validation.compute_tables(project, bootstrap=100, seed=1)
    assert [t.to_dict() for t in a] == [t.to_dict() for t in b]
    assert "judge-a vs mean human: Pearson r" in a[0].columns
    want = table4_independent(humans, {**jraw, "total": eq8(*(jraw[q] for q in VG_FIELDS))})
    assert close(a[0].cell("Total", "judge-a vs mean human: Pearson r").value, want["total"]["judge_pearson"])


def slots_of(project) -> dict[str, list[str]]:
    """external id -> its human raters in assignment order (the slots, recomputed here)."""
    from annotation.models import Assignment

    out: dict[str, list[str]] = {}
    for a in Assignment.objects.filter(project=project, rater__kind="human", purpose="regular").order_by("id"):
        out.setdefault(a.item.external_id, []).append(a.rater.name)
    return out


def test_valueground_table4_human_ceiling_pooled_slot_vs_slot(valueground):
    """The ceiling both ways: leave-one-annotator-out (unchanged) and pooled slot vs slot, the mean
    over slot pairs of the coefficient of slot a vs slot b over the pairs (scipy)."""
    from itertools import combinations

    from scipy import stats as ss

    project, ids, humans, judges, pos = valueground
    store_ensemble(project, ids, pos, judges)
    tables = {t.key: t for t in validation.compute_tables(project, bootstrap=100, seed=3)}
    slots = slots_of(project)
    assert all(len(v) == 4 for v in slots.values())

    def value(u, f, e):
        if f == "total":
            return float(eq8(*(humans[u][q][pos[e]] for q in VG_FIELDS)))
        return float(humans[u][f][pos[e]])

    def pooled(f, sel, raters, fn):
        ranks = {e: [u for u in slots[e] if u in raters] for e in sel}
        k = min(len(r) for r in ranks.values())
        return float(
            np.mean(
                [
                    fn([value(ranks[e][a], f, e) for e in sel], [value(ranks[e][b], f, e) for e in sel]).statistic
                    for a, b in combinations(range(k), 2)
                ]
            )
        )

    everyone = [u for u, _ in VG_ANNOTATORS]
    p_col, s_col = valueground_tables.SLOT_COLUMNS
    t4 = tables["valueground-table4"]
    for label, f in VG_ROWS:
        for col, fn in ((p_col, ss.pearsonr), (s_col, ss.spearmanr)):
            c = t4.cell(label, col)
            assert close(c.value, pooled(f, ids, everyone, fn)), (label, col)
            assert c.ci is not None and c.n == 36
    by_group = tables["valueground-table4-by-annotator-group"]
    for group in ("China", "Germany"):
        names = [u for u, c in VG_ANNOTATORS if c == group]
        for label, f in VG_ROWS:
            assert close(by_group.cell(f"{group}: {label}", p_col).value, pooled(f, ids, names, ss.pearsonr))
    by_backbone = tables["valueground-table4-by-backbone"]
    for b in ("gemini", "gpt"):
        sel = [e for i, e in enumerate(ids) if ["gpt", "gemini"][i % 2] == b]
        for label, f in VG_ROWS:
            assert close(by_backbone.cell(f"{b}: {label}", s_col).value, pooled(f, sel, everyone, ss.spearmanr))


# ------------------------------------------------------------------------------ API, command, page
@pytest.fixture
def vg_with_judge(valueground):
    project, ids, _humans, judges, pos = valueground
    store_ensemble(project, ids, pos, judges)
    return project


def test_validation_report_api_formats_round_trip_and_equal_command_and_page(client, vg_with_judge):
    project = vg_with_judge
    url = reverse("api_validation_report", args=[project.id])
    assert resolve(url).url_name == "api_validation_report"
    client.force_login(project.created_by)
    q = "bootstrap=50&seed=2"
    js = client.get(f"{url}?format=json&{q}")
    assert js.status_code == 200, js.content
    body = js.json()
    assert body["status"] == "done" and body["params"] == {
        "bootstrap": 50,
        "seed": 2,
        "epsilon": 0.2,
        "min_rater_items": 30,
        "system": None,
        "finding": None,
    }
    tables = [Table.from_dict(t) for t in body["tables"]]
    assert tables[0].key == "valueground-table4"
    # "Does the benchmark's conclusion hold?" comes last, per generation backbone (the preset's
    # system stratum), and its data ride as "conclusions"
    keys = [t.key for t in tables]
    assert keys[-3:] == ["conclusions-systems", "conclusions-pairs", "conclusions-agreement"]
    assert body["conclusions"]["system"] == "generator"
    # the judges' verdicts ride with the protocol's tables: the same alt-test and PPI as the
    # agreement report's verdicts (issue 11)
    verdicts = tables[keys.index("conclusions-systems") - 1]
    assert verdicts.key == "judge-verdicts"
    report = compute_report(project=project, params=ReportParams(bootstrap=0))
    for f, fo in report["fields"].items():
        for j, jd in fo["judges_vs_humans"].items():
            row = f"{report['judge_labels'].get(j, j)}: {f}"
            a, p = jd["alt_test"], jd.get("ppi")
            if a.get("passed") is not None:
                assert verdicts.cell(row, "Alt-test").value == ("passes" if a["passed"] else "fails")
                assert close(verdicts.cell(row, "Winning rate ω").value, a["winning_rate"])
                assert close(verdicts.cell(row, "Advantage probability ρ").value, a["advantage_probability"])
            if p and p.get("estimate") is not None:
                c = verdicts.cell(row, "PPI mean")
                assert close(c.value, p["estimate"]) and close(c.ci[0], p["ci"][0]) and close(c.ci[1], p["ci"][1])
                assert close(verdicts.cell(row, "Human-only mean").value, p["classical_estimate"])
    texts = {}
    for fmt, ext in (("markdown", "md"), ("latex", "tex"), ("csv", "csv")):
        r = client.get(f"{url}?format={fmt}&{q}")
        assert r.status_code == 200
        assert f'validation-project-{project.id}.{ext}"' in r["Content-Disposition"]
        texts[fmt] = r.content.decode()
        out = io.StringIO()
        call_command("validation_report", project.id, format=fmt, bootstrap=50, seed=2, stdout=out)
        assert out.getvalue() == texts[fmt], fmt
    check_round_trip(tables, texts["markdown"], texts["latex"], texts["csv"])
    for t in tables:  # each table alone in LaTeX
        check_round_trip([t], to_markdown([t]), to_latex([t]), to_csv([t]))
    out = io.StringIO()
    call_command("validation_report", project.id, format="json", bootstrap=50, seed=2, stdout=out)
    assert json.loads(out.getvalue()) == body["tables"]

    # the page shows the same numbers, Table 4 first, above the per-field detail
    page = client.get(reverse("agreement_report", args=[project.id]) + f"?{q}").content.decode()
    assert 'data-testid="validation-tables"' in page
    assert page.index("Table 4: Agreement") < page.index('data-testid="field-detail"')
    for t in tables:
        for r in t.rows:
            for c in r.cells:
                # a compact cell (issue 25): the value, then its interval on a line of its own
                value, sep, ci = format_cell(c).partition(" [")
                shown = value + (f'<span class="ci">[{ci}</span>' if sep else "")
                assert shown in page, shown
    for fmt in ("markdown", "latex", "csv"):
        assert re.search(rf"validation-report/\?format={fmt}&amp;bootstrap=50&amp;seed=2&amp;epsilon=0.2", page), fmt
    # another epsilon: the verdicts table follows it; a bad one is refused
    tight = client.get(f"{url}?format=json&{q}&epsilon=0.1").json()
    tight_verdicts = next(t for t in tight["tables"] if t["key"] == "judge-verdicts")
    assert tight["params"]["epsilon"] == 0.1 and "epsilon 0.1" in tight_verdicts["caption"]
    assert client.get(f"{url}?format=json&{q}&epsilon=2").status_code == 400


def test_validation_report_permissions(client, vg_with_judge):
    project = vg_with_judge
    url = reverse("api_validation_report", args=[project.id])
    assert client.get(url).status_code in (401, 403)
    annotator_user = project.memberships.filter(role="annotator").first().user
    client.force_login(annotator_user)
    assert client.get(url).status_code in (403, 404)
    assert client.get(url + "?format=markdown").status_code in (403, 404)
    client.force_login(make_user("vg-stranger", researcher=True))
    assert client.get(url).status_code == 404  # outsiders cannot tell it exists
    client.force_login(project.created_by)
    assert client.get(reverse("api_validation_report", args=[999999])).status_code == 404
    assert client.get(url + "?bootstrap=-1").status_code == 400


def test_project_without_protocol_tables(client, settings, monkeypatch):
    """A preset that declares no validation report (a lab's own protocol, say) gets an empty
    list of tables, not an error; the generic agreement report still serves it."""
    import dataclasses

    from benchmarks import registry
    from tests.annotation.factories import make_project

    bare = dataclasses.replace(cultivate.DESCRIPTORS, key="test.no_tables", validation_report=None)
    monkeypatch.setitem(registry.PRESETS, bare.key, bare)
    owner = make_user("bt-owner", researcher=True)
    project = make_project(bare.key, owner=owner, k=2)
    assert not validation.has_tables(project)
    client.force_login(owner)
    r = client.get(reverse("api_validation_report", args=[project.id]) + "?format=json")
    assert r.status_code == 200 and r.json()["tables"] == []
    # as text it still says so, with its media type: never an empty body (an empty DRF body
    # loses its Content-Type, which the schemathesis pass caught for LaTeX)
    for fmt, media, said in (
        ("markdown", "text/markdown", "_No validation tables yet"),
        ("latex", "application/x-latex", "% No validation tables yet"),
        ("csv", "text/csv", "table,row,column,value"),
    ):
        r = client.get(reverse("api_validation_report", args=[project.id]) + f"?format={fmt}")
        assert r.status_code == 200 and r["Content-Type"].startswith(media), fmt
        assert r.content.decode().startswith(said), fmt


# ------------------------------------------------------------------------------ CQ-Bench
def test_cqbench_story_tables_every_cell():
    from sklearn.metrics import cohen_kappa_score

    from tests.agreement.test_paper_tables import cqbench_story_project

    project, ids, raw, judge_raw = cqbench_story_project("cqv", CQ_STORY)
    tables = {t.key: t for t in validation.compute_tables(project, bootstrap=100, seed=0)}
    values = tables["cqbench-story-values"]
    slots = slots_of(project)
    assert all(len(v) == 2 for v in slots.values())
    units = [(e, v) for e in ids for v in range(5)]
    for label, q in (("Reflection", "reflection"), ("Consistency", "consistency")):
        h1 = np.array([raw[(e, "cqv-ann1")][q][v] for e, v in units])
        h2 = np.array([raw[(e, "cqv-ann2")][q][v] for e, v in units])
        j = np.array([judge_raw[e][q][v] for e, v in units])
        kappa = values.cell(label, "Cohen's κ between annotators")
        assert close(kappa.value, cohen_kappa_score(h1, h2)) and kappa.n == 100 and kappa.ci
        # pooled slots: each story's first-assigned annotator vs its second
        s1 = np.array([raw[(e, slots[e][0])][q][v] for e, v in units])
        s2 = np.array([raw[(e, slots[e][1])][q][v] for e, v in units])
        pooled = values.cell(label, "Cohen's κ, annotator 1 vs annotator 2 (pooled slots)")
        assert close(pooled.value, cohen_kappa_score(s1, s2)) and pooled.n == 100 and pooled.ci
        agree = values.cell(label, "Agreement with gpt-judge on its positive values")
        want = np.concatenate([h1[j == 1], h2[j == 1]]).mean()  # vs the model rater, every judgement
        assert close(agree.value, float(want)) and agree.n == 2 * int((j == 1).sum()) and agree.ci
        assert values.cell(label, "n (story, value) units").value == 100
    quality = tables["cqbench-story-quality"]
    ri = np.array([x for a in raw.values() for x in a["rewrite_improvement"]], float)
    nat = np.array([a["naturalness"] for a in raw.values()], float)
    assert close(quality.cell("Rewrite improvement (0-5)", "Mean").value, ri.mean())
    assert close(quality.cell("Rewrite improvement (0-5)", "Share").value, np.mean(ri >= 4))
    assert quality.cell("Rewrite improvement (0-5)", "n judgements").value == 80
    assert close(quality.cell("Naturalness (1-5)", "Mean").value, nat.mean())
    assert close(quality.cell("Naturalness (1-5)", "Share").value, np.mean(nat >= 4))
    assert quality.cell("Naturalness (1-5)", "n judgements").value == 40


def test_cqbench_turing_table_every_cell():
    from scipy.stats import binomtest

    from tests.agreement.test_paper_tables import import_ok, submit_humans
    from tests.annotation.factories import make_project

    rng = np.random.default_rng(4)
    owner = make_user("ttv-owner", researcher=True)
    team = [make_user(f"ttv-ann{i}") for i in range(3)]
    project = make_project(CQ_TURING, owner=owner, annotators=team, k=3)
    ids = [f"tt-{i:02d}" for i in range(40)]
    import_ok(project, [{"id": e, "human_utterance": f"human {e}", "model_utterance": f"model {e}"} for e in ids])
    raw: dict[tuple[str, str], str] = {}

    def answers(e, u, a):
        choice = str(rng.choice(["human_utterance", "model_utterance", "tie"], p=[0.42, 0.43, 0.15]))
        raw[(e, u)] = choice
        order = a.presentation["pair_order"]["human_written"]
        return {"human_written": "tie" if choice == "tie" else ["left", "right"][order.index(choice)]}

    submit_humans(project, answers)
    (t,) = validation.compute_tables(project, bootstrap=100, seed=0)
    groups = {"All annotators": list(raw.values())}
    for u in sorted({u for _, u in raw}):
        groups[u] = [c for (_, uu), c in raw.items() if uu == u]
    assert [r.label for r in t.rows] == list(groups)
    for label, v in groups.items():
        v = np.array(v)
        correct, ties, n = int((v == "human_utterance").sum()), int((v == "tie").sum()), len(v)
        assert close(t.cell(label, "Accuracy (tie = 0)").value, correct / n)
        assert close(t.cell(label, "Accuracy over non-ties").value, correct / (n - ties))
        assert close(t.cell(label, "Tie rate").value, ties / n)
        assert close(t.cell(label, "Binomial p (non-ties vs 0.5)").value, binomtest(correct, n - ties, 0.5).pvalue)
        assert t.cell(label, "n answers").value == n
        assert t.cell(label, "Accuracy (tie = 0)").ci is not None


# ------------------------------------------------------------------------------ BLEnD-Vis
def test_blendvis_image_majority_and_bad_reasons_every_cell(tmp_path):
    from tests.agreement.test_paper_tables import import_ok, submit_humans, write_pngs
    from tests.annotation.factories import make_project

    rng = np.random.default_rng(8)
    owner = make_user("bvv-owner", researcher=True)
    team = [make_user(f"bvv-ann{i}") for i in range(3)]
    project = make_project(blendvis.IMAGE.key, owner=owner, annotators=team, k=3)
    ids = [f"bv-{i:02d}" for i in range(30)]
    write_pngs(tmp_path / "img", [f"{e}.png" for e in ids])
    import_ok(
        project,
        [
            {"id": e, "image": f"{e}.png", "entity": f"dish {i}", "region": "Spain", "placeholder": "this food"}
            for i, e in enumerate(ids)
        ],
        images=tmp_path / "img",
    )
    cats = ["wrong_subject", "misleading", "distorted"]  # "regional" never used: 0
    raw: dict[tuple[str, str], tuple[str, str | None]] = {}

    def answers(e, u, a):
        bad = rng.random() < (0.6 if int(e[-2:]) % 5 == 0 else 0.1)
        cat = str(rng.choice(cats)) if bad else None
        raw[(e, u)] = ("B" if bad else "G", cat)
        return {"verdict": "B", "reason_category": cat, "reason": "wrong dish"} if bad else {"verdict": "G"}

    submit_humans(project, answers)
    t, reasons = validation.compute_tables(project, bootstrap=100, seed=0)
    bad_votes = np.array([sum(raw[(e, u)][0] == "B" for (x, u) in raw if x == e) for e in ids])
    row = "Majority of the annotators"
    assert t.cell(row, "Bad").value == int((bad_votes >= 2).sum())
    assert t.cell(row, "Good").value == int((bad_votes < 2).sum())
    assert close(t.cell(row, "Bad rate").value, float(np.mean(bad_votes >= 2)))
    assert t.cell(row, "Images with a majority").value == 30 and t.cell(row, "Bad rate").ci
    given = [c for _, c in raw.values() if c]
    for value, label in blendvis_tables.REASON_LABELS.items():
        assert reasons.cell(label, "Bad judgements").value == given.count(value)
        assert close(reasons.cell(label, "Share of Bad judgements").value, given.count(value) / len(given))
    # never given: the exact (Clopper-Pearson) interval, not a zero-width bootstrap (issue 22)
    from statsmodels.stats.proportion import proportion_confint

    ci = reasons.cell("Inaccurate Regional Representation", "Share of Bad judgements").ci
    assert np.allclose(ci, proportion_confint(0, len(given), method="beta"), atol=1e-12)


# ------------------------------------------------------------------------------ Cultural Counterfactuals
def test_counterfactuals_flag_rates_by_dimension_and_judge_vs_humans(tmp_path):
    from sklearn.metrics import cohen_kappa_score

    from annotate import annotating
    from annotation.models import Assignment, Item, Rater
    from tests.agreement.test_paper_tables import CC_DIMS, CC_FLAGS, import_ok, submit_humans, write_pngs
    from tests.annotation.factories import make_project

    rng = np.random.default_rng(3)
    owner = make_user("ccv-owner", researcher=True)
    project = make_project(counterfactuals.AUDIT.key, owner=owner, annotators=[make_user("ccv-ann")], k=1)
    records = [
        {
            "id": f"cc-{d}-{i}",
            "context_image": f"cc-{d}-{i}-ctx.png",
            "person_image": f"cc-{d}-{i}-p.png",
            "counterfactual_image": f"cc-{d}-{i}-cf.png",
            "context_label": f"{d} label",
            "age_group": "Young",
            "race": "Black",
            "gender": "Woman",
            "dimension": d,
        }
        for d in CC_DIMS
        for i in range(10)
    ]
    write_pngs(
        tmp_path / "i", [r[k] for r in records for k in ("context_image", "person_image", "counterfactual_image")]
    )
    import_ok(project, records, images=tmp_path / "i")
    prob = np.array([0.3, 0.15, 0.1, 0.05, 0.0, 0.0])
    raw: dict[str, list[str]] = {}

    def answers(e, u, a):
        raw[e] = [f for f, p in zip(CC_FLAGS, prob, strict=True) if rng.random() < p]
        return {"flags": raw[e]}

    submit_humans(project, answers)
    # a classifier judge deciding two flags only
    decides = ["context_source", "context_counterfactual"]
    judge = Rater.objects.create(
        kind=Rater.Kind.MODEL, name="clf", backend="openai_chat", parameters={"decides": {"flags": decides}}
    )
    jraw = {}
    for item in Item.objects.filter(project=project):
        a = Assignment.objects.create(project=project, item=item, rater=judge, presentation={})
        jraw[item.external_id] = [f for f in decides if rng.random() < 0.3]
        annotating.submit_annotation(assignment_id=a.id, rater=judge, answers={"flags": jraw[item.external_id]})

    tables = {t.key: t for t in validation.compute_tables(project, bootstrap=100, seed=0)}
    flags = tables["counterfactuals-flags"]
    labels = [label for _, label, _ in counterfactuals.FLAGS]
    assert flags.columns == ("All dimensions", *sorted(CC_DIMS))
    dim = {e: e.split("-")[1] for e in raw}
    for col in flags.columns:
        sel = [e for e in raw if col == "All dimensions" or dim[e] == col]
        for f, label in zip(CC_FLAGS, labels, strict=True):
            c = flags.cell(label, col)
            assert close(c.value, float(np.mean([f in raw[e] for e in sel]))), (label, col)
            assert c.ci is not None and c.n == len(sel)
        assert close(flags.cell("Any failure flag", col).value, float(np.mean([len(raw[e]) > 0 for e in sel])))
        assert flags.cell("n judgements", col).value == len(sel)
    never = flags.cell(labels[5], "All dimensions")
    from statsmodels.stats.proportion import proportion_confint

    assert never.value == 0.0 and np.allclose(never.ci, proportion_confint(0, 30, method="beta"), atol=1e-12)
    assert format_cell(never) == "0.0% [0.0%, 11.6%]"  # exact binomial, not a zero-width bootstrap

    jt = tables["counterfactuals-judges"]
    assert [r.label for r in jt.rows] == [f"clf: {labels[0]}", f"clf: {labels[1]}"]  # only what it decides
    ids = sorted(raw)
    for f, label in zip(decides, labels[:2], strict=True):
        h = np.array([int(f in raw[e]) for e in ids])
        j = np.array([int(f in jraw[e]) for e in ids])
        row = f"clf: {label}"
        assert close(jt.cell(row, "Cohen's κ vs human majority").value, cohen_kappa_score(j, h))
        assert close(jt.cell(row, "Agreement").value, float(np.mean(j == h)))
        assert close(jt.cell(row, "Judge flag rate").value, float(j.mean()))
        assert close(jt.cell(row, "Human flag rate").value, float(h.mean()))
        assert jt.cell(row, "n images").value == 30


def test_dataset_card_carries_the_same_tables(client, vg_with_judge):
    from curation.exports import huggingface

    project = vg_with_judge
    client.force_login(project.created_by)
    md = client.get(reverse("api_validation_report", args=[project.id]) + "?format=markdown").content.decode()
    card = huggingface.validation_section(project)
    assert markdown_cells(card) == markdown_cells(md) and markdown_cells(card)
    assert "#### Table 4: Agreement between the automatic judge and human annotations" in card
