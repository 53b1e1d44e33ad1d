"""Repair stored texts that hold a lone UTF-16 surrogate (issue 37, H2): before surrogates were
refused, JSON's ``"\\udc00"`` escape reached JSON columns, and one such answer made every export
of its project fail to encode. Each lone surrogate becomes U+FFFD (the replacement character);
valid pairs (an emoji) and everything else stay as they are.

Where one can be stored: SQLite keeps a JSON column as the text ``json.dumps`` wrote, with every
non-ASCII character escaped, so a lone surrogate sits there as ``\\udc00``; only rows whose text
holds a ``\\ud`` escape (a ``LIKE``, no row decoded otherwise) are read and checked. PostgreSQL's
JSONB refuses a lone surrogate outright ("Unicode low surrogate must follow a high surrogate"),
and text columns on either database cannot receive one (the drivers refuse to encode it), so
there is nothing to repair there and the migration reads nothing."""

import re

from django.db import migrations

#: (model, its JSON columns that people, imports or judges wrote)
COLUMNS = {
    "Annotation": ("answers", "derived"),
    "AnnotationRevision": ("answers", "derived"),
    "Item": ("data", "meta"),
    "Rater": ("attributes", "parameters"),
}

_SURROGATE = re.compile("[\ud800-\udfff]")
BATCH = 500


def _repaired(value):
    """``value`` with each lone surrogate replaced by U+FFFD (a copy of this migration's own, so
    that later changes to ``core.values`` cannot change what it did)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_repaired(k): _repaired(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_repaired(v) for v in value]
    return value


def repair(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return  # JSONB and text columns cannot hold a lone surrogate: nothing was stored
    for model_name, fields in COLUMNS.items():
        model = apps.get_model("annotation", model_name)
        table = connection.ops.quote_name(model._meta.db_table)
        pk = connection.ops.quote_name(model._meta.pk.column)
        columns = [connection.ops.quote_name(model._meta.get_field(f).column) for f in fields]
        # "\ud" in the stored text: a surrogate escape, lone or paired (LIKE ignores ASCII case,
        # so \uD800 matches too); the pairs and a literal backslash before "ud" are told apart
        # in Python below
        where = " OR ".join(f"{c} LIKE %s" for c in columns)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {pk} FROM {table} WHERE {where}", ["%\\ud%"] * len(columns))
            ids = [found for (found,) in cursor.fetchall()]
        for start in range(0, len(ids), BATCH):
            for row in model.objects.filter(pk__in=ids[start : start + BATCH]).only("pk", *fields):
                changed = {}
                for field in fields:
                    value = getattr(row, field)
                    fixed = _repaired(value)
                    if fixed != value:
                        changed[field] = fixed
                if changed:
                    model.objects.filter(pk=row.pk).update(**changed)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0013_annotation_import_written_once"),
    ]

    operations = [migrations.RunPython(repair, migrations.RunPython.noop, elidable=True)]
