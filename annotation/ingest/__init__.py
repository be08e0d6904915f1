"""Subtitle ingestion core: readers, cleaning, sentence/turn segmentation and the dialogue split.

Pure Python (no Django import), streaming from end to end: a file is read, cleaned, segmented and
split as it goes, so memory stays flat however long the film. `pipeline.FileRun` ties it together;
`annotation.ingestion` writes what it yields to the database.
"""

from annotation.ingest.cleaning import CleaningRules
from annotation.ingest.pipeline import FileRun, PipelineConfig
from annotation.ingest.records import DialogueRecord, FileMeta, Sentence, SubtitleFormatError, TurnRecord

__all__ = [
    "CleaningRules",
    "DialogueRecord",
    "FileMeta",
    "FileRun",
    "PipelineConfig",
    "Sentence",
    "SubtitleFormatError",
    "TurnRecord",
]
