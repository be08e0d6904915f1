"""The study's record: the audit log's table (`audit_log.py`), its one writer (`audit.py`) and the
admin's guard that never deletes recorded rows (`admin_guard.py`)."""
