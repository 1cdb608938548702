from django.urls import path

from keys import views

app_name = "keys"

urlpatterns = [
    path("", views.key_page, name="key"),
    path("mint/", views.key_mint_page, name="mint"),
    path("rotate/", views.key_rotate_page, name="rotate"),
    path("revoke/", views.key_revoke_page, name="revoke"),
]
