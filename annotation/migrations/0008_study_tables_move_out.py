"""The study tables move to ``studies`` (issue 21), step 1: their keys leave annotation's state. State only: no table is created, renamed or dropped."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0007_annotation_history_image_names'),
    ]

    # Django's state only: every table keeps its name (``db_table``), so no SQL runs, and a
    # database made by the previous release migrates without touching a row.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
        migrations.RemoveField(
            model_name='assignmentplan',
            name='created_by',
        ),
        migrations.RemoveField(
            model_name='assignmentplan',
            name='project',
        ),
        migrations.RemoveField(
            model_name='assignmentplan',
            name='sample',
        ),
    ]
        ),
    ]
