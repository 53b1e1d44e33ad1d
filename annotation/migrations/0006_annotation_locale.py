from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_job_lease"),
    ]

    operations = [
        migrations.AddField(
            model_name="annotation",
            name="locale",
            field=models.CharField(blank=True, default="", max_length=20),
        ),
    ]
