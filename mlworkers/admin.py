"""Nothing to register: JobRun's admin is in jobs/admin.py; model versions are annotation's."""
