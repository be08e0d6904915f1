from django.contrib.sessions.backends import cached_db

from config.sessions.store import ReadOnceMixin


class SessionStore(ReadOnceMixin, cached_db.SessionStore):
    pass
