"""Issue 35: a judge's short label (judges/labels.py), what table headers call it; the judges
made before get the label derived from their names, in the order they were made."""

from django.db import migrations, models


def fill_labels(apps, schema_editor):
    # the pure derivation of judges/labels.py (no model, no app state)
    from judges.labels import default_short_label

    JudgeConfig = apps.get_model("judges", "JudgeConfig")
    taken: dict[int, set[str]] = {}
    for config in JudgeConfig.objects.order_by("id").only("id", "project_id", "name"):
        used = taken.setdefault(config.project_id, set())
        label = default_short_label(config.name, used)
        used.add(label)
        JudgeConfig.objects.filter(pk=config.pk).update(short_label=label)


class Migration(migrations.Migration):
    dependencies = [
        ("judges", "0011_chunk_slots"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgeconfig",
            name="short_label",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
        migrations.RunPython(fill_labels, migrations.RunPython.noop),
    ]
