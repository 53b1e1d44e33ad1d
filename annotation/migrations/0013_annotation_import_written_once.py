"""An annotation file is written into a project once (issue 37, H1): ``written_sha256`` holds the
file's SHA-256 on the import that wrote it, unique per project, so a second import of the same
file racing the first cannot write too.

Rows are kept. Of the done imports that wrote (their report names no ``duplicate_of``), the first
of each (project, SHA-256) gets ``written_sha256``; later ones (two imports of one file that both
wrote before this fix) keep their rows and NULL, so the constraint can be created; their ratings
stay as they were, to be removed by the researcher if wanted."""

from django.db import migrations, models


def mark_writers(apps, schema_editor) -> None:
    AnnotationImport = apps.get_model("annotation", "AnnotationImport")
    seen: set[tuple[int, str]] = set()
    done = AnnotationImport.objects.filter(status="done").exclude(sha256="").order_by("id")
    for pk, project_id, sha256, report in done.values_list("id", "project_id", "sha256", "report").iterator():
        if isinstance(report, dict) and report.get("duplicate_of") is not None:
            continue  # "already imported": it wrote nothing
        if (project_id, sha256) in seen:
            continue
        seen.add((project_id, sha256))
        AnnotationImport.objects.filter(pk=pk).update(written_sha256=sha256)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0012_annotation_import_formats_from_registry"),
    ]

    operations = [
        migrations.AddField(
            model_name="annotationimport",
            name="written_sha256",
            field=models.CharField(blank=True, editable=False, max_length=64, null=True),
        ),
        migrations.RunPython(mark_writers, migrations.RunPython.noop, elidable=True),
        migrations.AddConstraint(
            model_name="annotationimport",
            constraint=models.UniqueConstraint(
                condition=models.Q(("written_sha256__isnull", False)),
                fields=("project", "written_sha256"),
                name="annotation_import_file_written_once",
            ),
        ),
    ]
