"""WSGI entry point, for servers that speak only WSGI (make run serves config.asgi)."""

from config.environment import settings_or_exit

settings_or_exit()  # a bad setting: one line and exit status 4, before anything else

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()
