"""The study tables, declared here since issue 21 (before, in ``annotation.models``). State only: no table is created, renamed or dropped."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('annotation', '0008_study_tables_move_out'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    # Django's state only: every table keeps its name (``db_table``), so no SQL runs, and a
    # database made by the previous release migrates without touching a row.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
        migrations.CreateModel(
            name='CrowdStudy',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200)),
                ('token', models.CharField(max_length=64, unique=True)),
                ('completion_code', models.CharField(max_length=64)),
                ('items_per_participant', models.PositiveIntegerField(default=10)),
                ('prescreen', models.JSONField(blank=True, default=list)),
                ('active', models.BooleanField(default=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='studies', to='annotation.project')),
            ],
            options={
                'db_table': 'annotation_crowdstudy',
            },
        ),
        migrations.CreateModel(
            name='Sample',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200)),
                ('strata_keys', models.JSONField(blank=True, default=list, help_text='item columns or meta keys')),
                ('allocation', models.CharField(choices=[('equal', 'Equal per stratum'), ('proportional', 'Proportional to stratum size')], default='equal', max_length=12)),
                ('total_size', models.PositiveIntegerField(blank=True, null=True)),
                ('per_stratum', models.PositiveIntegerField(blank=True, null=True)),
                ('seed', models.BigIntegerField(default=0)),
                ('report', models.JSONField(blank=True, default=dict, help_text='per-stratum available / asked / drawn')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='samples', to='annotation.project')),
            ],
            options={
                'db_table': 'annotation_sample',
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='AssignmentPlan',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200)),
                ('mode', models.CharField(choices=[('preassigned', 'Pre-assigned rows'), ('pooled', 'Pooled (annotators draw the next item, with leases)')], default='pooled', max_length=12)),
                ('status', models.CharField(choices=[('active', 'Active'), ('closed', 'Closed')], default='active', max_length=10)),
                ('k', models.PositiveSmallIntegerField(default=2)),
                ('eligibility', models.JSONField(blank=True, default=list)),
                ('balance', models.JSONField(blank=True, default=dict)),
                ('cap_per_annotator', models.PositiveIntegerField(blank=True, null=True)),
                ('lease_seconds', models.PositiveIntegerField(blank=True, help_text='empty = HV_LEASE_SECONDS', null=True)),
                ('seed', models.BigIntegerField(default=0)),
                ('report', models.JSONField(blank=True, default=dict)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='plans', to='annotation.project')),
                ('sample', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='plans', to='studies.sample')),
            ],
            options={
                'db_table': 'annotation_assignmentplan',
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='SampleItem',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('stratum', models.CharField(blank=True, max_length=300)),
                ('item', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.item')),
                ('sample', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='members', to='studies.sample')),
            ],
            options={
                'db_table': 'annotation_sampleitem',
            },
        ),
        migrations.AddField(
            model_name='sample',
            name='items',
            field=models.ManyToManyField(related_name='samples', through='studies.SampleItem', to='annotation.item'),
        ),
        migrations.CreateModel(
            name='CrowdParticipant',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('pid_hash', models.CharField(max_length=64)),
                ('prolific_study_id', models.CharField(blank=True, max_length=64)),
                ('prolific_session_id', models.CharField(blank=True, max_length=64)),
                ('prescreen_answers', models.JSONField(blank=True, default=dict)),
                ('eligible', models.BooleanField(blank=True, null=True)),
                ('completed_at', models.DateTimeField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('rater', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='crowd_entries', to='annotation.rater')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='participants', to='studies.crowdstudy')),
            ],
            options={
                'db_table': 'annotation_crowdparticipant',
                'constraints': [models.UniqueConstraint(fields=('study', 'pid_hash'), name='uniq_study_participant')],
            },
        ),
        migrations.CreateModel(
            name='PoolSlot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('requires', models.CharField(blank=True, max_length=300)),
                ('order_key', models.BigIntegerField(default=0, help_text='seeded random order in which the pool is served')),
                ('state', models.CharField(choices=[('open', 'Open'), ('leased', 'Leased'), ('submitted', 'Submitted')], default='open', max_length=10)),
                ('lease_expires_at', models.DateTimeField(blank=True, null=True)),
                ('assignment', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='slot', to='annotation.assignment')),
                ('item', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.item')),
                ('plan', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='slots', to='studies.assignmentplan')),
                ('rater', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='annotation.rater')),
            ],
            options={
                'db_table': 'annotation_poolslot',
                'indexes': [models.Index(fields=['plan', 'state', 'requires', 'order_key'], name='slot_pool_idx'), models.Index(fields=['plan', 'state', 'lease_expires_at'], name='slot_lease_idx'), models.Index(fields=['item'], name='slot_item_idx')],
                'constraints': [models.CheckConstraint(condition=models.Q(('state__in', ['open', 'leased', 'submitted'])), name='slot_state_valid'), models.CheckConstraint(condition=models.Q(('state', 'open'), ('assignment__isnull', False), _connector='OR'), name='slot_taken_has_assignment')],
            },
        ),
        migrations.AddConstraint(
            model_name='assignmentplan',
            constraint=models.CheckConstraint(condition=models.Q(('mode__in', ['preassigned', 'pooled'])), name='plan_mode_valid'),
        ),
        migrations.AddConstraint(
            model_name='assignmentplan',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', ['active', 'closed'])), name='plan_status_valid'),
        ),
        migrations.AddConstraint(
            model_name='assignmentplan',
            constraint=models.CheckConstraint(condition=models.Q(('k__gte', 1)), name='plan_k_positive'),
        ),
        migrations.AddIndex(
            model_name='sampleitem',
            index=models.Index(fields=['sample', 'stratum'], name='sampleitem_stratum_idx'),
        ),
        migrations.AddConstraint(
            model_name='sampleitem',
            constraint=models.UniqueConstraint(fields=('sample', 'item'), name='uniq_sample_item'),
        ),
        migrations.AddConstraint(
            model_name='sample',
            constraint=models.CheckConstraint(condition=models.Q(('allocation__in', ['equal', 'proportional'])), name='sample_allocation_valid'),
        ),
    ]
        ),
    ]
