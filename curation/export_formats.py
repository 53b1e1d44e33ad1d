"""All export formats, in display order. Adding a format = one table class + one line here.

A format is declared by :class:`ExportFormat`: its key (stored on ``Export.format``), its label,
the extension and content type of the files it writes, the export contents it serves, and the
table class that writes a table of rows in it (a subclass of
:class:`curation.exports.tables.Table`, named by its dotted path and imported only when an
export runs). The model's choices, the export form, the API and the service's validation all
read this registry; the writers dispatch through it.

The class is named by path, not imported, for the reason a protocol's tables are
(``benchmarks.base.LazyReport``): ``curation.models`` reads this module for its choices, so it
must stay light (no pyarrow, no numpy at startup) and must not import the export writers, which
import the models."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

#: what an export holds (``Export.content``); a format lists those it serves
ITEMS, ANNOTATIONS, REVISIONS = "items", "annotations", "revisions"
#: the longest key ``Export.format`` stores
KEY_MAX_LENGTH = 20


@dataclass(frozen=True)
class ExportFormat:
    key: str
    label: str | Promise
    #: the extension of the table files it writes (``items.<extension>``)
    extension: str
    #: the Content-Type its files are downloaded with
    content_type: str
    #: the export contents it serves (``Export.content`` values)
    contents: tuple[str, ...]
    #: ``"module.Class"``: the :class:`~curation.exports.tables.Table` subclass that writes it
    table: str
    #: how a refusal names it ("the <noun> format exports ...")
    noun: str = ""

    def __post_init__(self) -> None:
        if not self.key or len(self.key) > KEY_MAX_LENGTH:
            raise ValueError(f"an export format key has 1 to {KEY_MAX_LENGTH} characters: {self.key!r}")
        if not self.contents:
            raise ValueError(f"export format {self.key!r} serves no content")

    @property
    def name(self) -> str:
        return self.noun or self.key

    def serves(self, content: str) -> bool:
        return content in self.contents

    def table_class(self) -> type:
        """The table class, imported now (not named in an import: see the module's docstring)."""
        module, _, cls = self.table.rpartition(".")
        return getattr(import_module(module), cls)


FORMATS: dict[str, ExportFormat] = {
    f.key: f
    for f in (
        ExportFormat(
            key="jsonl",
            label="JSONL",
            extension="jsonl",
            content_type="application/x-ndjson",
            contents=(ITEMS, ANNOTATIONS, REVISIONS),  # revisions: the import format
            table="curation.exports.tables.JsonlTable",
        ),
        ExportFormat(
            key="csv",
            label="CSV",
            extension="csv",
            content_type="text/csv; charset=utf-8",
            contents=(ITEMS, ANNOTATIONS),
            table="curation.exports.tables.CsvTable",
        ),
        ExportFormat(
            key="parquet",
            label="Parquet",
            extension="parquet",
            content_type="application/vnd.apache.parquet",
            contents=(ITEMS, ANNOTATIONS),
            table="curation.exports.tables.ParquetTable",
        ),
        ExportFormat(
            key="hf",
            label=gettext_lazy("Hugging Face datasets folder"),
            extension="zip",  # dataset.zip, beside the dataset/ folder it zips
            content_type="application/zip",
            contents=(ITEMS,),
            table="curation.exports.huggingface.DatasetFolder",
            noun="Hugging Face folder",
        ),
    )
}


def get_format(key: str) -> ExportFormat:
    try:
        return FORMATS[key]
    except KeyError:
        raise KeyError(f"unknown export format {key!r}; use one of {', '.join(FORMATS)}") from None


def keys() -> list[str]:
    return list(FORMATS)


def choices() -> list[tuple[str, Any]]:
    """(key, label) pairs: ``Export.format``'s choices (a callable, so a new format needs no
    migration), the export form's select and the API's list."""
    return [(f.key, f.label) for f in FORMATS.values()]


def serving(content: str) -> list[str]:
    """The keys of the formats that serve ``content``."""
    return [f.key for f in FORMATS.values() if f.serves(content)]


def refusal(content: str, key: str) -> str | None:
    """Why ``key`` cannot export ``content`` (None when it can): the one check behind the
    service (``start_export``) and ``Export.clean``, in place of a database constraint that
    would have to list the keys."""
    fmt = FORMATS.get(key)
    if fmt is None:
        return f"unknown export format {key!r}: use one of {', '.join(FORMATS)}"
    if fmt.serves(content):
        return None
    others = serving(content)
    use = " or ".join(filter(None, [", ".join(others[:-1]), others[-1]])) if others else "no format"
    return f"the {fmt.name} format exports {' / '.join(fmt.contents)}; use {use} for {content}"
