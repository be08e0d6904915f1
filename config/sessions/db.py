from django.contrib.sessions.backends import db

from config.sessions.store import ReadOnceMixin


class SessionStore(ReadOnceMixin, db.SessionStore):
    pass
