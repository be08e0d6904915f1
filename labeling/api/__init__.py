"""The staff API under /api/: `views` (campaigns, workers, proposed labels), `audit` (a campaign's
settings and audit log), `serializers`, and `urls`, which config/urls.py includes."""
