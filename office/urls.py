"""The registry office's pages, under /registry/."""

from django.urls import URLPattern, path

from office import scorecard, views

app_name = "office"

urlpatterns: list[URLPattern] = [
    path("", views.console_page, name="console"),
    path("console.csv", views.console_csv, name="console_csv"),
    path("practices/<slug:slug>/scorecard", scorecard.scorecard_page, name="scorecard"),
    path("practices/<slug:slug>/scorecard.json", scorecard.scorecard_json, name="scorecard_json"),
    path("practices/<slug:slug>/scorecard.csv", scorecard.scorecard_csv, name="scorecard_csv"),
]
