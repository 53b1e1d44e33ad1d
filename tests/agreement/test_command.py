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
    txt = _call(
        csv_file, "--format", "table", "--bootstrap", "0", "--metric", "pearson", "--metric", "krippendorff_alpha"
    )
    assert "krippendorff_alpha" in txt and "field Total" in txt


def test_command_jsonl(django_ready, tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(
        "\n".join(json.dumps({"item": i, "rater": r, "value": (i * (r + 1)) % 4}) for i in range(12) for r in range(3))
    )
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


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_command_krippendorff_worked_example(django_ready, tmp_path, level):
    """``agreement FILE --metric krippendorff_alpha --level L`` on Krippendorff's 2011 worked
    example: the published value (3 decimals) and the ``krippendorff`` package (the pair A-B
    does not use category 5; this used to raise IndexError)."""
    import krippendorff

    from tests.agreement.kripp2011 import KRIPP, PUBLISHED, write_csv

    p = write_csv(tmp_path / "kripp2011.csv")
    ref = krippendorff.alpha(reliability_data=KRIPP.T, level_of_measurement=level)
    rep = json.loads(_call(p, "--metric", "krippendorff_alpha", "--level", level, "--bootstrap", "100"))
    a = rep["fields"]["value"]["humans_vs_humans"]["krippendorff_alpha"]
    assert round(a["value"], 3) == PUBLISHED[level]
    assert a["value"] == pytest.approx(ref, abs=1e-12)
    assert a["n_items"] == 11 and a["ci"] is not None
    txt = _call(p, "--metric", "krippendorff_alpha", "--level", level, "--format", "table", "--bootstrap", "0")
    assert f"krippendorff_alpha       {PUBLISHED[level]:.3f}" in txt


def test_command_alpha_only_with_a_judge(django_ready, csv_file):
    """Only alpha asked for, a judge present, numeric level: no ceiling metrics are
    reported (this used to raise KeyError looking up the judge's correlation table)."""
    for level in ("ordinal", "interval", "ratio", "nominal"):
        rep = json.loads(_call(csv_file, "--metric", "krippendorff_alpha", "--level", level, "--bootstrap", "20"))
        f = rep["fields"]["Total"]
        assert f["humans_vs_humans"]["krippendorff_alpha"]["value"] is not None
        assert f["humans_vs_humans"]["leave_one_rater_out"] == {}
        assert f["judges_vs_humans"]["judge"] == {}
