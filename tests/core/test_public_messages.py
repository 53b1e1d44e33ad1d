"""Issue 37, lows: what a person is shown of an unexpected failure carries no absolute server
path and no exception type name (a job's failure, a judge's chunk failure, an image that does not
decode, a broker that refuses), and an import's counts do not tell which images other projects
hold. The attack is the input: an exception whose text holds a server path, a file that is no
image, an image another project already stored."""

from __future__ import annotations

import pytest

from annotation import importing
from annotation.assets import ImageProblem, check_image
from core import jobs
from core.errors import public_text
from curation.models import Export
from judges.chunk_failures import chunk_error_message
from tests.annotation.factories import jsonl, make_project, make_user, valueground_records

SERVER_PATH = "/srv/hv/var/media/imports/3f2a/data.jsonl"


def lost_file() -> FileNotFoundError:
    return FileNotFoundError(2, "No such file or directory", SERVER_PATH)


def test_public_text_cuts_server_paths_and_names_no_type():
    text = public_text(lost_file())
    assert "/srv" not in text and "FileNotFoundError" not in text
    assert text == "[Errno 2] No such file or directory: 'data.jsonl'"
    assert public_text(RuntimeError("")) == "an unexpected error (details in the server log)"
    assert public_text(ValueError("see https://example.org/a/b, 3/4")) == "see https://example.org/a/b, 3/4"


@pytest.mark.django_db
def test_a_job_that_fails_unexpectedly_shows_no_path_and_no_type(caplog):
    owner = make_user("owner", researcher=True)
    project = make_project("cqbench.turing", owner=owner)
    export = Export.objects.create(project=project, created_by=owner, content="items", format="jsonl", scope="all")

    def work(job):
        raise lost_file()

    jobs.run(export, work)
    export.refresh_from_db()
    assert export.status == "failed"
    assert export.message.startswith("internal error: ") and "details in the server log" in export.message
    assert "/srv" not in export.message and "FileNotFoundError" not in export.message
    assert SERVER_PATH in caplog.text  # the operator still finds it in the log


def test_a_judge_chunk_failure_shows_no_path_and_no_type():
    message = chunk_error_message(lost_file())
    assert message == "the judge failed on this item's chunk: [Errno 2] No such file or directory: 'data.jsonl'"
    assert chunk_error_message(TimeoutError()).endswith("an unexpected error (details in the server log)")


def test_an_image_that_does_not_decode_names_no_decoder_exception():
    with pytest.raises(ImageProblem) as exc:
        check_image(b"GIF89a but not really an image", name="image 'x.gif'")
    assert "not a valid image" in str(exc.value)
    assert "Error" not in str(exc.value) and "PNG" in str(exc.value)


def test_a_broker_that_refuses_is_reported_without_its_exception_type():
    said: list[str] = []

    def send():
        raise ConnectionRefusedError(111, "Connection refused")

    assert jobs.send_or_fail(send, said.append) is False
    assert "task queue could not be reached" in said[0] and "Connection refused" in said[0]
    assert "ConnectionRefusedError" not in said[0]


@pytest.mark.django_db
def test_an_import_does_not_tell_which_images_another_project_holds(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    theirs = make_project("valueground.pair_quality", owner=make_user("theirs", researcher=True))
    mine = make_project("valueground.pair_quality", owner=make_user("mine", researcher=True))
    records = valueground_records(tmp_path, n=1)  # the same two images for both projects
    assert importing.import_items(project=theirs, data=jsonl(records), data_format="jsonl", images=tmp_path).ok
    report = importing.import_items(project=mine, data=jsonl(records), data_format="jsonl", images=tmp_path)
    assert report.ok and (report.images_stored, report.images_reused) == (2, 0)  # as if nobody had them
    records[0]["id"] = "vg-again"  # the project's own images again: reused, as before
    report = importing.import_items(project=mine, data=jsonl(records), data_format="jsonl", images=tmp_path)
    assert report.ok and (report.images_stored, report.images_reused) == (0, 2)
