from django.urls import path

from registry import account
from registry.members import views as members
from registry.statistics import views

app_name = "registry"

urlpatterns = [
    path("practices/", account.practice_chooser, name="practices"),
    path("practices/new/", members.practice_new_page, name="practice_new"),
    path("members/", members.members_page, name="members"),
    path("statistics/", views.statistics_page, name="statistics"),
    path("statistics.json", views.statistics_json, name="statistics_json"),
    path("statistics.csv", views.statistics_csv, name="statistics_csv"),
]
