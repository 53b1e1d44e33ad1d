"""A project's share of the shared worker (issue 37, M4): one row per judge chunk at work
(``JudgeChunkSlot``, ``judges/share.py``)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0014_repair_lone_surrogates'),
        ('judges', '0010_judge_output_import'),
    ]

    operations = [
        migrations.CreateModel(
            name='JudgeChunkSlot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('worker', models.CharField(blank=True, max_length=200)),
                ('taken_at', models.DateTimeField(auto_now_add=True)),
                ('expires_at', models.DateTimeField(db_index=True)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='judge_chunk_slots', to='annotation.project')),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chunk_slots', to='judges.judgerun')),
            ],
            options={
                'indexes': [models.Index(fields=['project', 'expires_at'], name='judges_judg_project_3e662c_idx')],
            },
        ),
    ]
