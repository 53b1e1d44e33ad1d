"""The formats of an annotation import are the reader registry's (``annotation.sources.registry``),
no longer a list in the table: the literal CheckConstraint is dropped (rows kept, no data
changes) and the column's choices and validator name the registry's functions, so that a new
reader needs no migration."""

import annotation.sources.registry
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0011_annotation_import_label_studio_flat"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="annotationimport",
            name="annotation_import_format_valid",
        ),
        migrations.AlterField(
            model_name="annotationimport",
            name="data_format",
            field=models.CharField(
                choices=annotation.sources.registry.choices,
                max_length=20,
                validators=[annotation.sources.registry.known_format],
            ),
        ),
    ]
