"""A test-only URLconf: tiny API views behind the key authentication and scope permission."""

from __future__ import annotations

from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from keys.authentication import ApiKeyAuthentication
from keys.models import INGEST_READ, INGEST_WRITE
from keys.permissions import HasScope


class ScopedView(APIView):
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasScope]
    required_scope = INGEST_WRITE

    def get(self, request: Request) -> Response:
        return Response(
            {
                "practice": request.auth.practice.slug,
                "prefix": request.auth.prefix,
                "user": str(request.user),
            }
        )

    post = get


class ReadView(ScopedView):
    required_scope = INGEST_READ


class UnscopedView(ScopedView):
    required_scope = None


urlpatterns = [
    path("write", ScopedView.as_view()),
    path("read", ReadView.as_view()),
    path("unscoped", UnscopedView.as_view()),
]
