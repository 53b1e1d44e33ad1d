"""Judge runs join the common job lifecycle (core.jobs): the ``state`` column becomes
``status``, with the same values, so existing runs keep their outcome."""

from django.db import migrations, models
from django.db.models import Q


class Migration(migrations.Migration):
    dependencies = [
        ("judges", "0001_initial"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="judgerun", name="judge_run_state_valid"),
        migrations.RenameField(model_name="judgerun", old_name="state", new_name="status"),
        migrations.AlterField(
            model_name="judgerun",
            name="status",
            field=models.CharField(
                choices=[("queued", "Queued"), ("running", "Running"), ("done", "Done"), ("failed", "Failed"),
                         ("cancelled", "Cancelled")],
                default="queued",
                max_length=10,
            ),
        ),
        migrations.AddConstraint(
            model_name="judgerun",
            constraint=models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "failed", "cancelled"]),
                name="judge_run_status_valid",
            ),
        ),
    ]
