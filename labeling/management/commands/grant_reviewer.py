"""python manage.py grant_reviewer USERNAME [--revoke]"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand, CommandError, CommandParser

REVIEWERS = "reviewers"


def reviewers_group() -> Group:
    """The group holding labeling.adjudicate (made on first use; the admin can grant it too)."""
    group, _ = Group.objects.get_or_create(name=REVIEWERS)
    group.permissions.add(Permission.objects.get(content_type__app_label="labeling", codename="adjudicate"))
    return group


class Command(BaseCommand):
    help = "Make a user a reviewer (the adjudication queue of every campaign), or no longer one with --revoke."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="the site account to grant the reviewer role to")
        parser.add_argument("--revoke", action="store_true", help="take the reviewer role away instead")

    def handle(self, *args, **options) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"username: no account named {options['username']!r}")
        group = reviewers_group()
        if options["revoke"]:
            user.groups.remove(group)
            self.stdout.write(f"{user.username} is no longer a reviewer.")
        else:
            user.groups.add(group)
            self.stdout.write(f"{user.username} is a reviewer: /labeling/campaigns/<id>/adjudication/.")
