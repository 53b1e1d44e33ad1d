import io
import json

import pytest


@pytest.fixture
def csv_file(tmp_path):
    lines = ["item,rater,value,field,rater_kind,country"]
    for i in range(30):
        for r in range(3):
            lines.append(f"i{i},h{r},{(i + (r == 2) * (i % 3 == 0)) % 5 + 1},Total,human,{'CN' if i % 2 else 'DE'}")
        lines.append(f"i{i},judge,{(i + 1) % 5 + 1},Total,model,{'CN' if i % 2 else 'DE'}")
    p = tmp_path / "r.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def _call(*args):
    from django.core.management import call_command
    out = io.StringIO()
    call_command("agreement", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def test_command_json_and_table(django_ready, csv_file):
    rep = json.loads(_call(csv_file, "--by", "country", "--bootstrap", "50", "--level", "ordinal"))
    f = rep["fields"]["Total"]
    assert f["humans_vs_humans"]["krippendorff_alpha"]["value"] is not None
    assert "judge" in f["judges_vs_humans"] and set(f["strata"]["country"]) == {"CN", "DE"}
    txt = _call(csv_file, "--format", "table", "--bootstrap", "0", "--metric", "pearson", "--metric", "krippendorff_alpha")
    assert "krippendorff_alpha" in txt and "field Total" in txt


def test_command_jsonl(django_ready, tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(json.dumps({"item": i, "rater": r, "value": (i * (r + 1)) % 4})
                           for i in range(12) for r in range(3)))
    rep = json.loads(_call(p, "--bootstrap", "0"))
    assert rep["fields"]["value"]["n_items"] == 12


def test_command_errors(django_ready, tmp_path, csv_file):
    from django.core.management.base import CommandError
    with pytest.raises(CommandError, match="cannot read"):
        _call(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("item,value\n1,2\n")
    with pytest.raises(CommandError, match="missing required column"):
        _call(bad)
    nn = tmp_path / "nn.csv"
    nn.write_text("item,rater,value\n1,a,2\n1,b,3\n2,a,oops\n")
    with pytest.raises(CommandError, match="line 4"):
        _call(nn, "--level", "interval")
    j = tmp_path / "x.jsonl"
    j.write_text('{"item": 1, "rater": "a", "value": 1}\n{broken\n')
    with pytest.raises(CommandError, match="line 2"):
        _call(j)
    with pytest.raises(CommandError, match="stratum"):
        _call(csv_file, "--by", "nowhere")
