from django.urls import path

from registry import account
from registry.feedback import views as feedback
from registry.members import views as members
from registry.statistics import scorecard_views, views

app_name = "registry"

urlpatterns = [
    path("practices/", account.practice_chooser, name="practices"),
    path("practices/new/", members.practice_new_page, name="practice_new"),
    path("members/", members.members_page, name="members"),
    path("statistics/", views.statistics_page, name="statistics"),
    path("statistics.json", views.statistics_json, name="statistics_json"),
    path("statistics.csv", views.statistics_csv, name="statistics_csv"),
    path("statistics/scorecard.json", scorecard_views.scorecard_json, name="scorecard_json"),
    path("statistics/scorecard.csv", scorecard_views.scorecard_csv, name="scorecard_csv"),
    path("statistics/feedback-mail/", feedback.feedback_mail_page, name="feedback_mail"),
]
