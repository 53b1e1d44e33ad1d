"""The study tables move to ``studies`` (issue 21), step 2: annotation's state forgets them and
``Assignment.plan`` points at ``studies.AssignmentPlan``. State only: no table is created, renamed or dropped."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0008_study_tables_move_out'),
        ('judges', '0008_sample_in_studies'),
        ('studies', '0001_initial'),
    ]

    # Django's state only: every table keeps its name (``db_table``), so no SQL runs, and a
    # database made by the previous release migrates without touching a row.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
        migrations.AlterField(
            model_name='assignment',
            name='plan',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='assignments', to='studies.assignmentplan'),
        ),
        migrations.RemoveField(
            model_name='poolslot',
            name='plan',
        ),
        migrations.RemoveField(
            model_name='crowdparticipant',
            name='rater',
        ),
        migrations.RemoveField(
            model_name='crowdparticipant',
            name='study',
        ),
        migrations.RemoveField(
            model_name='crowdstudy',
            name='project',
        ),
        migrations.RemoveField(
            model_name='poolslot',
            name='assignment',
        ),
        migrations.RemoveField(
            model_name='poolslot',
            name='item',
        ),
        migrations.RemoveField(
            model_name='poolslot',
            name='rater',
        ),
        migrations.RemoveField(
            model_name='sample',
            name='created_by',
        ),
        migrations.RemoveField(
            model_name='sample',
            name='items',
        ),
        migrations.RemoveField(
            model_name='sample',
            name='project',
        ),
        migrations.RemoveField(
            model_name='sampleitem',
            name='sample',
        ),
        migrations.RemoveField(
            model_name='sampleitem',
            name='item',
        ),
        migrations.DeleteModel(
            name='AssignmentPlan',
        ),
        migrations.DeleteModel(
            name='CrowdParticipant',
        ),
        migrations.DeleteModel(
            name='CrowdStudy',
        ),
        migrations.DeleteModel(
            name='PoolSlot',
        ),
        migrations.DeleteModel(
            name='Sample',
        ),
        migrations.DeleteModel(
            name='SampleItem',
        ),
    ]
        ),
    ]
