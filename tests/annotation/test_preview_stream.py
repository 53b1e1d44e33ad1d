"""The streaming check behind the annotation-import preview (issue 37, M3), its parts against
plain references: the duplicate check's pairs against a Python set of tuples, the streamed
SHA-256 and UTF-8 check against ``hashlib`` and ``bytes.decode`` of the whole file, and a preview
that keeps no row against the import's check of the same file."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from annotation import annotation_import
from annotation.annotation_import import RatedPairs, RatingsFile

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.parametrize("items, raters", [(1, 1), (7, 3), (300, 5), (40, 200)])
def test_rated_pairs_answers_as_a_set_of_pairs_does(items, raters):
    rng = random.Random(items * 1000 + raters)
    pairs = RatedPairs(items)
    reference: set[tuple[int, int]] = set()
    for _ in range(items * raters * 2):  # every rater passes the point where a bitmap is smaller
        r, i = rng.randrange(raters), rng.randrange(items)
        assert pairs.add(r, i) is ((r, i) not in reference)
        reference.add((r, i))
    assert len({pairs.key(r, i) for r, i in reference}) == len(reference)  # one key per pair
    assert any(isinstance(v, bytearray) for v in pairs.of.values()) or items * raters < 2


def test_rated_pairs_numbers_raters_and_items_in_the_order_first_met():
    pairs = RatedPairs(3)
    assert pairs.number("b", 70) == (0, 0)
    assert pairs.number("a", 70) == (1, 0)
    assert pairs.number("b", 12) == (0, 1)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"plain ascii\n",
        "caf\u00e9 \u2603 \U0001f600\n".encode() * 50,
        b"\xef\xbb\xbf" + "\u00e9t\u00e9".encode() * 40,
        b"ab\xffcd",
        b"\xef\xbb\xbfab\xff",
        b"x" * 37 + "\u20ac".encode()[:2],  # cut in the middle of a character at the end
        b"y" * 21 + b"\xe2\x82" + b"z" * 30,
    ],
)
@pytest.mark.parametrize("chunk", [1, 2, 5, 1 << 20])
def test_the_streamed_digest_is_hashlib_and_the_bad_byte_is_decode_s(data, chunk, monkeypatch, tmp_path):
    monkeypatch.setattr(annotation_import, "READ_CHUNK_BYTES", chunk)
    path = tmp_path / "f"
    path.write_bytes(data)
    try:
        data.decode("utf-8-sig")
        bad = None
    except UnicodeDecodeError as exc:
        bad = exc.start
    expected = (hashlib.sha256(data).hexdigest(), bad)
    assert RatingsFile.of(path).digest() == expected
    assert RatingsFile.of(data).digest() == expected


@pytest.mark.django_db
def test_a_preview_keeps_no_row_and_reports_what_the_import_s_check_does(researcher, tmp_path):
    from tests.curation.helpers import valueground_project

    project = valueground_project(researcher, [], tmp_path / "img", n=4, k=3)
    path = FIXTURES / "labelstudio_valueground.json"
    kept = annotation_import.check_annotations(
        project=project, data=path, data_format="labelstudio", mapping={"quality": "q3"}
    )
    counted = annotation_import.check_annotations(
        project=project, data=path, data_format="labelstudio", mapping={"quality": "q3"}, keep_rows=False
    )
    assert kept.report.ok and len(kept.rows) == 4
    assert counted.rows == [] and counted.report.as_dict() == kept.report.as_dict()
    assert counted.per_source == kept.per_source == {"1": 2, "2": 2}
