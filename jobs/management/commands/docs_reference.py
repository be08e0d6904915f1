"""python manage.py docs_reference [--check]: write the manual's generated reference pages."""

from django.core.management.base import BaseCommand, CommandError

from jobs.reference import pages, repo_root


class Command(BaseCommand):
    help = (
        "Write docs/reference/commands.md, jobs.md and settings.md from the code (each command's --help, "
        "the job registry's schemas, the settings read and .env.example). `make docs` runs it first."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="write nothing; fail naming each page that is out of date"
        )

    def handle(self, *args, check: bool, **options) -> None:
        root = repo_root()
        stale = []
        for relative, text in pages(root).items():
            path = root / relative
            if path.exists() and path.read_text() == text:
                continue
            stale.append(relative)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                self.stdout.write(f"wrote {relative}")
        if check and stale:
            raise CommandError(f"out of date: {', '.join(stale)}; run: python manage.py docs_reference")
        if not stale:
            self.stdout.write("the reference pages are up to date")
