"""The annotator fast path's session engines: `db` for sites without Redis, `cached_db` (the
Redis cache in front) when REDIS_URL is set. Same expiry rule and logout as Django's own; their
table (models.UserSession) keeps the signed-in user's id, so a session read from the database
brings its user with it (store.py), and config.auth hands that user to authentication."""
