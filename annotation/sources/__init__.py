"""Readers of ratings made in other tools, one module per format, each declared once in the
registry (:mod:`.registry`): Label Studio's JSON export (:mod:`.labelstudio`) and flat exports
(:mod:`.labelstudio_flat`), long CSV / JSONL (:mod:`.long`), wide CSV (:mod:`.wide`), and one
judge's outputs, a line per item (:mod:`.outputs`). Each turns a file's text into
:class:`.common.SourceRating` rows (one per source annotator and item, answers still keyed by
the source's field names and holding the source's raw values) and problems by task id or line
number; :mod:`annotation.annotation_import` maps, coerces, checks and writes people's ratings,
``judges.imported`` a judge's."""
