# Export formats come from a registry (curation/export_formats.py, issue 32): the choices are a
# callable (serialised by reference, so adding a format writes no migration) and the literal
# CHECK on the format is dropped, validated against the registry by the service and
# Export.clean() instead. No row changes: every stored key is still a registered format.

import curation.export_formats
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0005_export_lease"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="export",
            name="export_format_valid",
        ),
        migrations.AlterField(
            model_name="export",
            name="format",
            field=models.CharField(choices=curation.export_formats.choices, max_length=20),
        ),
    ]
