"""``JudgeConfig.backend`` takes its choices from the backend registry (``judges/registry.py``,
issue 32): a callable, so a backend added there needs no migration. Choices are not a database
constraint: no column, row or constraint changes."""

import judges.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('judges', '0008_sample_in_studies'),
    ]

    operations = [
        migrations.AlterField(
            model_name='judgeconfig',
            name='backend',
            field=models.CharField(choices=judges.models.backend_choices, max_length=20),
        ),
    ]
