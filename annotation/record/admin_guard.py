"""The admin never changes the study's record behind the audit log's back.

A field the audit log records is either changed in the admin through the same writer as the pages
(which writes the entry) or shown read-only there; a row whose deletion would remove or rewrite
recorded rows (a campaign and its answers, a label that gold labels name, the corpus under them)
is never deleted here. `NeverDeleted` is that refusal: no delete button, no bulk delete, and the
delete page, reached by its address, sends back to the row with the reason and the page's way.
tests/labeling/test_admin_audit.py walks every change form and delete action of the admin.
"""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

# the reason an entry written from the admin carries
ADMIN_REASON = "changed in the admin"


class NeverDeleted:
    """A ModelAdmin mixin: rows of this model are not deleted in the admin (`deletion_refused` says why)."""

    deletion_refused = "This row is part of the study's record and is not deleted here."

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def delete_view(self, request: HttpRequest, object_id: str, extra_context=None) -> HttpResponse:
        messages.error(request, self.deletion_refused)
        options = self.model._meta
        return redirect(reverse(f"admin:{options.app_label}_{options.model_name}_change", args=[object_id]))
