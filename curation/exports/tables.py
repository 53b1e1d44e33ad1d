"""How a table of rows is written in each format: one :class:`Table` subclass per format, named
by its line in :mod:`curation.export_formats` (the registry), which opens it with
:meth:`Table.open`.

A table takes rows (tuples in ``schema`` order) batch by batch, writes them to
``<dir>/.tmp-*`` and renames the file into place on :meth:`Table.close`, which returns the
file entries (name, size, rows, sha256); :meth:`Table.abort` leaves nothing behind. Columns of
nested values (:func:`curation.exports.common.json_field`) hold native JSON where the format
can, JSON text otherwise. A text format may also offer a :class:`LineEncoder`, with which the
long annotations table is serialised from cached pieces (:func:`curation.exports.annotations.annotation_text`)
byte for byte as :meth:`Table.write` would write its rows; a format without one gets the rows."""

from __future__ import annotations

import io
import json
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from core import csvsafe

from ..export_formats import ExportFormat, get_format
from ..models import Export
from .common import file_entry, plain_value


class LineEncoder:
    """The text of a run of consecutive cells of one line: ``run(i, values)`` for the cells of
    columns ``i, i + 1, ...``; the runs of a line, in column order, joined, then :attr:`end`,
    are the line :meth:`Table.write` writes for that row."""

    end: str = "\n"

    def run(self, start: int, values: Sequence[Any]) -> str:
        raise NotImplementedError


class Table:
    """Rows to one export file in one format (subclasses: one per format)."""

    #: image columns hold the image itself (the ``datasets`` Image struct), not its sha256
    embeds_images: ClassVar[bool] = False

    def __init__(
        self,
        export: Export,
        path: Path,
        schema: pa.Schema,
        *,
        provenance: dict[str, Any],
        row_group_size: int,
    ) -> None:
        self.export, self.path, self.schema, self.provenance = export, path, schema, provenance
        self.names = schema.names
        self.rows = 0
        self.row_group_size = row_group_size
        self.tmp = path.parent / f".tmp-{secrets.token_hex(6)}-{path.name}"
        self.tmp.parent.mkdir(parents=True, exist_ok=True)

    @classmethod
    def open(
        cls,
        fmt: ExportFormat,
        export: Export,
        root: Path,
        stem: str,
        schema: pa.Schema,
        *,
        provenance: dict[str, Any],
        row_group_size: int,
    ) -> Table:
        """The table ``<root>/<stem>.<extension>`` of ``fmt``."""
        return cls(
            export, root / f"{stem}.{fmt.extension}", schema, provenance=provenance, row_group_size=row_group_size
        )

    def write(self, rows: Sequence[tuple]) -> None:
        raise NotImplementedError

    def line_encoder(self) -> LineEncoder | None:
        """The pieces of this format's lines (None: give it rows, :meth:`write`)."""
        return None

    def write_text(self, text: str, rows: int) -> None:
        """Lines made with :meth:`line_encoder` (``rows`` of them)."""
        raise TypeError(f"{type(self).__name__} takes rows, not text")

    def image_value(self, sha256: str, name: str | None) -> Any:
        """An image column's cell: the image's sha256 (tables that embed images override)."""
        return sha256

    def finish(self) -> None:
        """Close what the subclass opened (the temporary file is complete afterwards)."""

    def close(self) -> list[dict[str, Any]]:
        self.finish()
        os.replace(self.tmp, self.path)
        return [file_entry(self.path, self.path.name, self.rows)]

    def abort(self) -> None:
        try:
            self.finish()
        finally:
            self.tmp.unlink(missing_ok=True)


def open_table(
    export: Export,
    root: Path,
    stem: str,
    schema: pa.Schema,
    *,
    provenance: dict[str, Any],
    row_group_size: int,
) -> Table:
    """The table ``stem`` of ``export`` in the export's format (the registry's table class)."""
    fmt = get_format(export.format)
    return fmt.table_class().open(fmt, export, root, stem, schema, provenance=provenance, row_group_size=row_group_size)


class TextTable(Table):
    """A table written as UTF-8 text lines."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fh = open(self.tmp, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed in finish()

    def write_text(self, text: str, rows: int) -> None:
        self.fh.write(text)
        self.rows += rows

    def finish(self) -> None:
        self.fh.close()


# ------------------------------------------------------------------------------ JSONL
class JsonLines(LineEncoder):
    """JSONL: one object per row, keys in schema order, ``ensure_ascii=False``."""

    end = "}\n"

    def __init__(self, names: Sequence[str]) -> None:
        self.keys = [("{" if i == 0 else ", ") + json.dumps(n, ensure_ascii=False) + ": " for i, n in enumerate(names)]

    def run(self, start: int, values: Sequence[Any]) -> str:
        keys, dumps = self.keys, json.dumps
        return "".join(
            keys[start + i] + dumps(plain_value(v, nested=True), ensure_ascii=False) for i, v in enumerate(values)
        )


class JsonlTable(TextTable):
    """JSONL: nested values stay JSON."""

    def write(self, rows: Sequence[tuple]) -> None:
        if not rows:
            return
        self.rows += len(rows)
        names = self.names
        dumps = json.dumps
        self.fh.write(
            "".join(
                dumps({n: plain_value(v, nested=True) for n, v in zip(names, r, strict=True)}, ensure_ascii=False)
                + "\n"
                for r in rows
            )
        )

    def line_encoder(self) -> LineEncoder:
        return JsonLines(self.names)


# ------------------------------------------------------------------------------ CSV
class CsvCells(LineEncoder):
    """CSV text of a run of cells exactly as the platform's one writer (``core.csvsafe.writer``:
    formulas defused, ``\\r\\n`` rows) writes them inside a row (QUOTE_MINIMAL decides per cell, so
    runs joined by "," equal the whole row written at once; a sentinel last cell avoids the
    lone-empty-cell special case)."""

    end = csvsafe.LINE_END

    def __init__(self) -> None:
        self.buf = io.StringIO()
        self.writer = csvsafe.writer(self.buf)

    def run(self, start: int, values: Sequence[Any]) -> str:
        if not values:
            return ""
        buf = self.buf
        buf.seek(0)
        buf.truncate()
        self.writer.writerow([*(plain_value(v, nested=False) for v in values), "x"])
        text = buf.getvalue()[: -(2 + len(csvsafe.LINE_END))]  # drop ",x\r\n"
        return ("," + text) if start else text


class CsvTable(TextTable):
    """CSV through :mod:`core.csvsafe` (every cell, header too); nested values as JSON text."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.csv = csvsafe.writer(self.fh)  # defuses every cell (header too); \r\n rows
        self.csv.writerow(self.names)

    def write(self, rows: Sequence[tuple]) -> None:
        if not rows:
            return
        self.rows += len(rows)
        self.csv.writerows([[plain_value(v, nested=False) for v in r] for r in rows])

    def line_encoder(self) -> LineEncoder:
        return CsvCells()


# ------------------------------------------------------------------------------ Parquet
class ParquetTable(Table):
    """Parquet (zstd), one row group per batch; columns of nested values hold JSON text; the
    provenance in the file's metadata (``hv_provenance``, after any the schema brings)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        metadata = {**(self.schema.metadata or {}), b"hv_provenance": json.dumps(self.provenance).encode()}
        self.schema = self.schema.with_metadata(metadata)
        self.json_cols = {i for i, f in enumerate(self.schema) if (f.metadata or {}).get(b"json") == b"1"}
        self.pq = pq.ParquetWriter(self.tmp, self.schema, compression="zstd")

    def write(self, rows: Sequence[tuple]) -> None:
        if not rows:
            return
        self.rows += len(rows)
        cols = list(zip(*rows, strict=True))
        arrays = []
        for i, f in enumerate(self.schema):
            col = cols[i]
            if i in self.json_cols:
                col = [None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True) for v in col]
            arrays.append(pa.array(col, type=f.type))
        self.pq.write_table(pa.Table.from_arrays(arrays, schema=self.schema), row_group_size=self.row_group_size)

    def finish(self) -> None:
        self.pq.close()
