"""python manage.py add_accounts NAME [NAME ...] [--researcher]

Site accounts with a generated password each, printed once: annotators (who take HITs at
/labeling/) by default, or researchers (staff: campaigns, jobs, models, analysis) with --researcher.
An annotator's Worker row is made by labeling.services.workers, the one writer of workers.
"""

import secrets

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from labeling.services.workers import worker_for_user


class Command(BaseCommand):
    help = "Create site accounts (annotators, or researchers with --researcher), each with a generated password."

    def add_arguments(self, parser) -> None:
        parser.add_argument("usernames", nargs="+", metavar="NAME", help="the new accounts' user names")
        parser.add_argument("--researcher", action="store_true", help="staff accounts for researchers")

    def handle(self, *args, usernames: list[str], researcher: bool, **options) -> None:
        User = get_user_model()
        for name in usernames:
            self._check_name(User, name)
        taken = sorted(User.objects.filter(username__in=usernames).values_list("username", flat=True))
        if taken:
            raise CommandError(f"already taken: {', '.join(taken)} (nothing created)")
        if len(set(usernames)) != len(usernames):
            raise CommandError("a name is given twice (nothing created)")
        with transaction.atomic():
            passwords = {name: self._create(name, researcher) for name in usernames}
        role = "researcher" if researcher else "annotator"
        for name, password in passwords.items():
            self.stdout.write(f"{role} {name}  password: {password}")

    def _check_name(self, User, name: str) -> None:
        try:
            User._meta.get_field("username").clean(name, None)
        except ValidationError as error:
            raise CommandError(f"NAME {name!r}: {' '.join(error.messages)} (nothing created)") from None

    def _create(self, username: str, researcher: bool) -> str:
        password = secrets.token_urlsafe(12)
        user = get_user_model().objects.create_user(username=username, password=password, is_staff=researcher)
        if not researcher:
            worker_for_user(user)
        return password
