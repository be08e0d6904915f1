from django.contrib import admin

from jobs.models import JobRun


@admin.register(JobRun)
class JobRunAdmin(admin.ModelAdmin):
    list_display = ["kind", "status", "attempts", "progress_done", "progress_total", "created_at", "finished_at"]
    list_filter = ["kind", "status"]
