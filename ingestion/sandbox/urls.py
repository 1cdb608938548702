from django.urls import path

from ingestion.sandbox import views

app_name = "sandbox"

urlpatterns = [
    path("", views.sandbox_reset_page, name="reset"),
]
