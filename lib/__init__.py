"""The bottom layer: a small shared library that imports no app and not config.

Circuit breaker, client address, log filters, static files, the Redis cache and its client.
The import contracts in pyproject.toml (``lint-imports``, run by ``make lint``) keep it so.
"""
