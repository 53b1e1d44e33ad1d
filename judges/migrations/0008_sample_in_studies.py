"""``JudgeRun.sample`` points at the sample's new home, ``studies.Sample`` (issue 21). State only: no table is created, renamed or dropped."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('judges', '0007_run_management'),
        ('studies', '0001_initial'),
    ]

    # Django's state only: every table keeps its name (``db_table``), so no SQL runs, and a
    # database made by the previous release migrates without touching a row.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
        migrations.AlterField(
            model_name='judgerun',
            name='sample',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='judge_runs', to='studies.sample'),
        ),
    ]
        ),
    ]
