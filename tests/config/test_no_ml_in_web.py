"""Torch never loads in a web process: views only queue jobs, and looking a job up must stay light."""

import os
import subprocess
import sys

from tests.conftest import REPO_ROOT

PROBE = """
import os, sys
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()
from django.urls import resolve
import config.urls  # every view module
from jobs.registry import get
for kind in ("ingest", "export_dataset", "weak_train", "bulk_annotate", "sbert_expand"):
    get(kind)
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers", "faiss", "fasttext") if m in sys.modules)
print(",".join(heavy))
"""


def test_loading_the_urls_and_the_job_registry_imports_no_ml_library():
    environment = dict(os.environ, SECRET_KEY="x")
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
