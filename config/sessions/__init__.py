"""Session stores that read a session row with SQL written once (config.rows) instead of a
compiled ORM query on every request. Same table, expiry rule and logout as Django's own:
`db` for sites without Redis, `cached_db` (the Redis cache in front) when REDIS_URL is set."""

from django.contrib.sessions.models import Session
from django.utils import timezone

from config import rows


class ReadOnceMixin:
    def _get_session_from_db(self):
        if not self.session_key:
            self._session_key = None
            return None
        session = rows.fetch_one(
            Session, "t.session_key = %s AND t.expire_date > %s", [self.session_key, timezone.now()]
        )
        if session is None:
            self._session_key = None
        return session
