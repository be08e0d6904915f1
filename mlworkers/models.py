"""mlworkers owns no tables: it reads and writes annotation's (ModelVersion, Prediction, TurnLabel).
JobRun moved to jobs.models (migrations mlworkers.0002 and jobs.0001)."""
