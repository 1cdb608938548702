"""gunicorn settings for ``make run`` and the Procfile's ``web``."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Under ASGI each request runs its view on a thread of its own: database connections come
# from a pool instead of being kept per thread (config/settings/data.py).
os.environ.setdefault("REGISTRY_WEB_ASGI", "1")

from config.environment import settings_or_exit

# A bad setting stops gunicorn here, in the arbiter, with one line: not in each worker.
settings_or_exit()
from django.conf import settings  # noqa: E402
from gunicorn.glogging import Logger  # noqa: E402

from lib.logfilters import logged_path, logged_request_line  # noqa: E402

bind = f"127.0.0.1:{settings.PORT}"
workers = settings.WEB_CONCURRENCY
# gunicorn's asyncio worker (config/front.py): slow clients wait as coroutines, not threads.
worker_class = "config.front.Worker"
worker_connections = settings.WEB_CONNECTIONS
# Large batches take a while to upload and stage; don't kill the worker mid-request.
timeout = settings.WEB_TIMEOUT
# An idle connection is closed after 2 s (gunicorn's default, made explicit): nginx keeps its
# connections to the web for the next request and drops an idle one after 1 s, first
# (deploy/nginx/registry.conf), so it never sends a request on a connection closing here.
keepalive = 2
accesslog = "-"
# The access log shows the path and status, never a query string or a body, and no address:
# gunicorn knows only the socket's peer, which behind a proxy is the proxy
# (lib/client.py decides the client's address). The path has its ids and tokens masked
# (lib.logfilters.logged_path): a patient id after the FHIR base, a reset link's token.
access_log_format = '"%(m)s %(U)s" %(s)s %(B)s %(M)sms'


class MaskedAccessLog(Logger):
    """gunicorn's logger, writing the request's path as lib.logfilters.logged_path has it."""

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        atoms: dict[str, Any] = super().atoms(resp, req, environ, request_time)
        atoms["U"] = logged_path(atoms["U"] or "")
        atoms["r"] = logged_request_line(atoms["r"])
        atoms["q"] = ""
        return atoms


logger_class = MaskedAccessLog
# X-Forwarded-Proto and the like are judged by Django against REGISTRY_TRUSTED_PROXIES
# (config/proxy.py), not by gunicorn's own list (forwarded_allow_ips, 127.0.0.1 by default).
secure_scheme_headers: dict[str, str] = {}


def post_worker_init(worker: Any) -> None:
    """Print the next steps once the last worker of the first generation is up."""
    if os.environ.get("REGISTRY_BANNER") != "1" or worker.age != worker.cfg.workers:
        return
    from config.banner import serving_url

    url = serving_url(
        port=settings.PORT, allowed_hosts=settings.ALLOWED_HOSTS, https=settings.REGISTRY_HTTPS
    )
    print(
        f"""
Birth registry is serving {url}  (API docs: /docs/, health: /healthz)

Next steps, in another terminal:
  .venv/bin/python manage.py createpractice st-mary --name "St Mary's"
  .venv/bin/python manage.py mintkey st-mary            # prints the rgk_ token once
  .venv/bin/python manage.py createsuperuser            # for /admin/ and /settings/
  .venv/bin/python manage.py addmember st-mary <username> --role staff
""",
        flush=True,
    )
