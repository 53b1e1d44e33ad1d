"""Issue 25: the UI language an annotator chose was kept in their rater profile
(``Rater.attributes["ui_language"]``), which rules match on and exports carry. It moves to the
user's own preferences (``accounts.Preference``); the reverse puts it back."""

from django.db import migrations

KEY = "ui_language"
MAX_LENGTH = 16  # Preference.ui_language


def forward(apps, schema_editor):
    Rater = apps.get_model("annotation", "Rater")
    Preference = apps.get_model("accounts", "Preference")
    # only the system wrote the key, and only on a person's own profile (a rater with a user);
    # a rater imported from another tool keeps whatever attributes its file gave it
    for rater in Rater.objects.filter(user__isnull=False, attributes__has_key=KEY).iterator():
        attributes = dict(rater.attributes)
        code = attributes.pop(KEY)
        if isinstance(code, str) and 0 < len(code) <= MAX_LENGTH:
            Preference.objects.update_or_create(user_id=rater.user_id, defaults={"ui_language": code})
        rater.attributes = attributes
        rater.save(update_fields=["attributes"])


def backward(apps, schema_editor):
    Rater = apps.get_model("annotation", "Rater")
    Preference = apps.get_model("accounts", "Preference")
    for preference in Preference.objects.exclude(ui_language="").iterator():
        rater = Rater.objects.filter(user_id=preference.user_id).first()
        if rater is not None:  # a user without a profile kept the language in the cookie only
            rater.attributes = {**(rater.attributes or {}), KEY: preference.ui_language}
            rater.save(update_fields=["attributes"])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_preference"),
        ("annotation", "0010_annotation_imports"),
    ]

    operations = [migrations.RunPython(forward, backward)]
