from django.contrib import admin

from mlworkers.models import JobRun


@admin.register(JobRun)
class JobRunAdmin(admin.ModelAdmin):
    list_display = ["kind", "status", "progress_done", "progress_total", "created_at", "finished_at"]
    list_filter = ["kind", "status"]
