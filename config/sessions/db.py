from django.contrib.sessions.backends import db

from config.sessions import ReadOnceMixin


class SessionStore(ReadOnceMixin, db.SessionStore):
    pass
