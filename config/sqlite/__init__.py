"""The SQLite backend the shipped default runs on: Django's own, with a flush that empties
guarded tables the way PostgreSQL's TRUNCATE does (see base.py)."""
