"""``python manage.py rank`` (issue 36): the same report as ``hv-stats rank``; the JSON holds
exactly the issue's schema and the notes go to stderr; a bad file is a ``CommandError`` naming its
lines and prints nothing."""

from __future__ import annotations

import io
import json

import pytest


def _file(tmp_path):
    lines = ["question_id,model_a,model_b,judge,winner,turn"]
    for i in range(60):
        a, b = [("x", "y"), ("y", "z"), ("x", "z")][i % 3]
        lines.append(f"q{i},{a},{b},expert_{i % 5},{'model_a' if i % 4 else 'tie (bothbad)'},1")
        lines.append(f"q{i},{a},{b},gpt4_pair,{'model_a' if i % 5 else 'model_b'},1")
    for i in range(200):
        a, b = [("x", "y"), ("y", "z"), ("x", "z"), ("x", "w")][i % 4]
        lines.append(f"q{i},{a},{b},gpt4_pair,model_a,2")
    p = tmp_path / "mtbench.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def _call(*args):
    from django.core.management import call_command

    out, err = io.StringIO(), io.StringIO()
    call_command("rank", *[str(a) for a in args], stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_rank_command_json_equals_hv_stats(django_ready, tmp_path, capsys):
    from hvstats.cli import main

    path = _file(tmp_path)
    out, err = _call(path, "--judge", "gpt4_pair", "--format", "json")
    rep = json.loads(out)
    assert set(rep) == {"systems", "methods"} and rep["systems"] == ["w", "x", "y", "z"]
    assert "never by people" in err and "w" in err  # only the judge compared w
    assert main(["rank", str(path), "--judge", "gpt4_pair", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == rep
    table, _ = _call(path, "--judge", "gpt4_pair")
    assert "note: compared by the judge only" in table


def test_rank_command_refuses_a_bad_file(django_ready, tmp_path):
    from django.core.management.base import CommandError

    p = tmp_path / "bad.csv"
    p.write_text("item,system_a,system_b,rater,winner\nq1,x,y,p,a\nq2,x,y,p,nobody\n")
    with pytest.raises(CommandError, match="line 3: unknown winner 'nobody'"):
        _call(p)
