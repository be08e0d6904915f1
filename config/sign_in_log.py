"""django-axes' database handler (AXES_HANDLER), less its work on a sign-in that no password made.

What axes does on a successful sign-in (axes.handlers.database.AxesDatabaseHandler.user_logged_in,
django-axes 8: https://django-axes.readthedocs.io/en/latest/4_configuration.html, AXES_HANDLER
and AXES_RESET_ON_SUCCESS) is about passwords: it drops the account's expired failed attempts,
logs the sign-in in AccessLog and resets the account's failed attempts. An account without a
usable password (a crowd-platform landing's, labeling.services.workers._new_account) has no
password to guess, so no failed attempt and no lockout: those are three statements of every
landing's sign-in (a study's launch burst signs in every participant at once, issue 46) that
record nothing axes ever reads. The landing itself is on record where the landing caps and the
study's report read it (its Worker row: when, from which address, for which campaign). A
password account's sign-in, a failed one of any account, and a sign-out keep axes' own handling.
"""

from axes.handlers.database import AxesDatabaseHandler


class SignInLog(AxesDatabaseHandler):
    def user_logged_in(self, sender, request, user, **kwargs):
        if not user.has_usable_password():
            return None  # no password, nothing of axes' to log, clean or reset
        return super().user_logged_in(sender, request, user, **kwargs)
