from django.urls import path

from registry import account
from registry.statistics import views

app_name = "registry"

urlpatterns = [
    path("practices/", account.practice_chooser, name="practices"),
    path("statistics/", views.statistics_page, name="statistics"),
    path("statistics.json", views.statistics_json, name="statistics_json"),
    path("statistics.csv", views.statistics_csv, name="statistics_csv"),
]
