"""``hv-stats`` (:mod:`hvstats.cli`), wide files (:mod:`hvstats.io`), the report as Markdown and
LaTeX (:mod:`hvstats.render`) and the package's lazy imports (issue 33)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hvstats.cli import main
from hvstats.data import numeric_values
from hvstats.io import read_ratings

ROOT = Path(__file__).resolve().parents[2]


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The same ratings as a long CSV, a wide CSV and a wide JSONL; 40 items, three humans on
    30 of them, a judge on all; a 1-5 score and a yes/no field with empty cells."""
    rng = np.random.default_rng(5)
    long = ["item,rater,value,field,rater_kind,country,pi"]
    wide = ["item,rater,rater_kind,country,pi,score,ok"]
    jsonl = []
    for i in range(40):
        t, c = int(rng.integers(1, 6)), "CN" if i % 2 else "DE"
        for r in ("h0", "h1", "h2", "gpt"):
            kind = "model" if r == "gpt" else "human"
            if kind == "human" and i >= 30:  # unlabelled: listed with empty human values
                score, ok = "", ""
            else:
                score, ok = str(int(np.clip(t + rng.integers(-1, 2), 1, 5))), ["no", "yes"][int(rng.integers(0, 2))]
            long += [f"i{i},{r},{score},score,{kind},{c},0.5", f"i{i},{r},{ok},ok,{kind},{c},0.5"]
            wide.append(f"i{i},{r},{kind},{c},0.5,{score},{ok}")
            obj = {"item": f"i{i}", "rater": r, "rater_kind": kind, "country": c, "pi": 0.5}
            obj.update({k: v for k, v in (("score", score), ("ok", ok)) if v})
            jsonl.append(json.dumps(obj))
    paths = tmp_path / "long.csv", tmp_path / "wide.csv", tmp_path / "wide.jsonl"
    for p, lines in zip(paths, (long, wide, jsonl), strict=True):
        p.write_text("\n".join(lines) + "\n")
    return paths


def _out(capsys, *argv) -> str:
    assert main([str(a) for a in argv]) == 0
    return capsys.readouterr().out


def test_long_and_wide_files_give_the_same_report(tmp_path, capsys):
    long, wide, jsonl = _files(tmp_path)
    args = ["--by", "country", "--bootstrap", "30", "--active"]
    a = json.loads(_out(capsys, "agreement", long, *args))
    assert json.loads(_out(capsys, "agreement", wide, *args)) == a
    assert json.loads(_out(capsys, jsonl, *args)) == a  # the default command
    assert a["fields"]["ok"]["n_categories"] == 2  # empty cells are no label ('nan' was one)
    assert set(a["active"]["fields"]) == {"score", "ok"}


def test_wide_to_long_keeps_an_unlabelled_item_once(tmp_path):
    _, wide, _ = _files(tmp_path)
    df = read_ratings(wide, by=["country"])
    assert set(df.columns) >= {"item", "rater", "field", "value", "country", "pi", "rater_kind", "_line"}
    human_39 = df[(df["item"] == "i39") & (df["rater"] == "h0")]
    assert len(human_39) == 1 and pd.isna(human_39["value"].iloc[0])
    assert len(df[(df["item"] == "i0") & (df["rater"] == "h0")]) == 2
    assert df["field"].tolist()[:2] == ["score", "ok"]  # row by row, fields in column order


def test_nominal_blanks_are_missing_under_the_str_dtype():
    df = pd.DataFrame({"value": pd.array(["no", "yes", None, " "], dtype="str"), "field": "f"})
    codes, labels = numeric_values(df, "nominal")
    assert list(labels) == ["no", "yes"]
    assert codes[:2].tolist() == [0.0, 1.0] and np.isnan(codes[2:]).all()


def test_markdown_and_latex_tables(tmp_path, capsys):
    long, _, _ = _files(tmp_path)
    md = _out(capsys, long, "--by", "country", "--bootstrap", "30", "--format", "markdown", "--active")
    assert "### Agreement on score" in md and "| coefficient | all | country=CN | country=DE |" in md
    rep = json.loads(_out(capsys, long, "--by", "country", "--bootstrap", "30"))
    alpha = rep["fields"]["score"]["humans_vs_humans"]["krippendorff_alpha"]
    lo, hi = alpha["ci"]
    assert f"| humans: krippendorff_alpha | {alpha['value']:.3f} [{lo:.3f}, {hi:.3f}] |" in md
    winning = rep["fields"]["score"]["judges_vs_humans"]["gpt"]["alt_test"]["winning_rate"]
    assert f"| gpt: alt-test winning rate | {100 * winning:.1f}% |" in md
    assert "### Active estimate of the mean of score" in md and "gpt: active mean" in md
    assert "PPI++ and human-only means: share of 'yes'." in md  # the yes/no field's means, said
    tex = _out(capsys, long, "--bootstrap", "0", "--format", "latex", "--joint-alt-test")
    assert tex.count(r"\begin{table}") == 4  # the answers, two fields, the joint alt-test
    assert r"humans: krippendorff\_alpha" in tex and "no intervals" in tex
    # one answer per judge first: in the JSON, at the top of the text and of the tables
    (answer,) = rep["answers"]
    assert answer["judge"] == "gpt" and answer["verdict"] in ("replace", "some_fields", "cannot", "cannot_tell")
    assert 0 <= answer["stability"] <= 1 and isinstance(answer["borderline"], bool)
    assert set(answer) >= {"fields_passed", "fields_failed", "reason", "humans", "n_items", "epsilon", "multiplicity"}
    assert md.index("### One answer per judge") < md.index("### Agreement on score")
    assert tex.index("One answer per judge") < tex.index(r"humans: krippendorff\_alpha")
    text = _out(capsys, long, "--bootstrap", "0", "--format", "table")
    assert text.startswith("== one answer per judge")
    assert f"stability {answer['stability']:.2f} over {answer['replicates']} leave-one-human-out" in text


def test_errors_and_help(tmp_path, capsys):
    long, _, _ = _files(tmp_path)
    assert main([str(tmp_path / "nope.csv")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main([str(long), "--by", "nowhere"]) == 2
    assert "missing stratum column(s): nowhere" in capsys.readouterr().err
    assert main([str(long), "--epsilon", "1"]) == 2
    no_field = tmp_path / "w.csv"
    no_field.write_text("item,rater,rater_kind\n1,a,human\n")
    assert main([str(no_field)]) == 2
    assert "no field column" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0 and "agreement" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        main(["agreement", "--help"])
    assert done.value.code == 0 and "--format {json,table,markdown,latex}" in capsys.readouterr().out


def _fresh(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()


def test_the_command_line_imports_no_numpy_pandas_or_scipy():
    """``hv-stats --help`` stays fast because importing the command and printing its help load
    none of them (the time itself is measured by perf/cli_import_time.py, never asserted)."""
    out = _fresh(
        "import sys\n"
        "import hvstats.cli\n"
        "try:\n    hvstats.cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('numpy', 'pandas', 'scipy') if m in sys.modules))"
    )
    assert "agreement" in out  # the help was printed
    assert out.splitlines()[-1] == "[]"


def test_the_lazy_package_keeps_its_names():
    """``hvstats.alt_test`` and ``hvstats.correlation`` stay the functions after their modules
    are imported, as with the eager package of old."""
    out = _fresh(
        "import hvstats.alt_test, hvstats.correlation, hvstats\n"
        "from hvstats import agreement_report, alt_test, correlation, frame\n"
        "print(callable(alt_test) and callable(correlation), hvstats.alt_test is alt_test, frame.__name__,"
        " agreement_report.__module__)"
    )
    assert out == "True True hvstats.frame hvstats.report"
