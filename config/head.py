"""An answer to HEAD carries no body: dropped here, before the server sees it.

Django's ASGI handler sends a HEAD request's answer with the body a GET would have (its
Content-Length is the GET's, as RFC 9110 allows). gunicorn drops the bytes but logs a WARNING
for each such answer, so every monitor's or browser's HEAD looked like a fault in the log.
"""

from __future__ import annotations

from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]


class HeadWithoutBody:
    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.application(scope, receive, send)
            return

        async def send_headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the rest of a streamed body: nothing to say until its end
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.application(scope, receive, send_headers_only)
