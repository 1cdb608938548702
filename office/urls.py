"""The registry office's pages, under /registry/."""

from django.urls import URLPattern

app_name = "office"

urlpatterns: list[URLPattern] = []
