"""The registry office's pages, under /registry/."""

from django.urls import URLPattern, path

from office import views

app_name = "office"

urlpatterns: list[URLPattern] = [
    path("", views.console_page, name="console"),
    path("console.csv", views.console_csv, name="console_csv"),
]
