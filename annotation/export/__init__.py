"""Dataset export: pure formatters (CSV, JSONL, a Hugging Face folder, the dataset card) fed by one
streaming query, so the command, the Celery job and the API write the same files row by row."""
