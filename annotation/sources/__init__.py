"""Readers of human annotations collected in other tools, one module per format: Label Studio's
JSON export (:mod:`.labelstudio`), long CSV / JSONL (:mod:`.long`), wide CSV (:mod:`.wide`).
Each turns a file into :class:`.common.SourceRating` rows (one per source annotator and item,
answers still keyed by the source's field names and holding the source's raw values) and
problems by task id or line number; :mod:`annotation.annotation_import` maps, coerces, checks
and writes them."""
