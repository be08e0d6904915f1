from django.urls import path

from labeling.pages import qualification as qualification_views
from labeling.pages import researcher as views
from labeling.pages import reviewer as review
from labeling.pages import study_report as study_report_views

urlpatterns = [
    path("campaigns/", views.campaign_list, name="campaign_list"),
    path("campaigns/new/", views.campaign_create, name="campaign_create"),
    path("campaigns/new/pairwise/", views.campaign_create_pairwise, name="campaign_create_pairwise"),
    path("campaigns/<int:pk>/", views.campaign_detail, name="campaign_detail"),
    path("campaigns/<int:pk>/results/", views.campaign_results, name="campaign_results"),
    path("campaigns/<int:pk>/export.<str:fmt>", views.campaign_export, name="campaign_export"),
    path("campaigns/<int:pk>/answers.<str:fmt>", views.campaign_answers_export, name="campaign_answers_export"),
    path("campaigns/<int:pk>/report/", views.campaign_report_partial, name="campaign_report"),
    path("campaigns/<int:pk>/quiz-history/", qualification_views.campaign_quiz_history, name="campaign_quiz_history"),
    path("campaigns/<int:pk>/study-report/", study_report_views.study_report_page, name="study_report"),
    path(
        "campaigns/<int:pk>/study-report.<str:fmt>",
        study_report_views.study_report_download,
        name="study_report_download",
    ),
    path("campaigns/<int:pk>/survey.<str:fmt>", study_report_views.survey_download, name="survey_download"),
    path("campaigns/<int:pk>/study-report/rate/", study_report_views.study_report_rate, name="study_report_rate"),
    path("campaigns/<int:pk>/status/", views.campaign_status, name="campaign_status"),
    path("campaigns/<int:pk>/aggregate/", views.campaign_aggregate, name="campaign_aggregate"),
    path("campaigns/<int:pk>/approve/", views.campaign_approve_submitted, name="campaign_approve_submitted"),
    path("campaigns/<int:pk>/payments/", views.campaign_record_payments, name="campaign_record_payments"),
    path("campaigns/<int:pk>/labels.csv", views.campaign_labels_csv, name="campaign_labels_csv"),
    path("campaigns/<int:pk>/entry-token/", views.campaign_rotate_token, name="campaign_rotate_token"),
    path("campaigns/<int:pk>/publish/", views.campaign_publish, name="campaign_publish"),
    path(
        "campaigns/<int:pk>/qualification/",
        qualification_views.open_qualification_seats,
        name="campaign_qualification_seats",
    ),
    path("campaigns/<int:pk>/sync/", views.campaign_sync, name="campaign_sync"),
    path("campaigns/<int:pk>/release-unproven/", views.campaign_release_unproven, name="campaign_release_unproven"),
    path("campaigns/<int:pk>/platform-close/", views.campaign_platform_close, name="campaign_platform_close"),
    path("campaigns/<int:pk>/bonus-check/", views.campaign_unsure_payment, name="campaign_unsure_payment"),
    path("campaigns/<int:pk>/partial-share/", views.campaign_partial_share, name="campaign_partial_share"),
    path(
        "campaigns/<int:pk>/platform-work/<int:submission_id>/decide/",
        views.platform_submission_decide,
        name="platform_submission_decide",
    ),
    path("workers/<int:pk>/block/", views.worker_block, name="worker_block"),
    path("labels/accept/", views.label_accept, name="label_accept"),
    # adjudication, the audit log, settings (labeling.pages.reviewer)
    path("campaigns/<int:pk>/adjudication/", review.queue_page, name="adjudication_queue"),
    path("campaigns/<int:pk>/adjudication/<int:item_id>/", review.item_page, name="adjudication_item"),
    path("campaigns/<int:pk>/adjudication/<int:item_id>/settle/", review.settle_item, name="adjudication_settle"),
    path(
        "campaigns/<int:pk>/adjudication/<int:item_id>/send-back/", review.send_back_item, name="adjudication_send_back"
    ),
    path("campaigns/<int:pk>/audit/", review.campaign_log, name="campaign_audit_log"),
    path("campaigns/<int:pk>/settings/", review.campaign_settings, name="campaign_settings"),
    path("workers/<int:pk>/audit/", review.worker_log, name="worker_audit_log"),
    path("turns/<int:turn_id>/audit/", review.turn_log, name="turn_audit_log"),
    path("labels/refuse/", review.refuse_label, name="label_refuse"),
]
