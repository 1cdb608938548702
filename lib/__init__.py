"""The bottom layer: a small shared library that imports no app and not config.

The Redis circuit breaker, the client address and trusted proxies, log filters, static
files, the Content-Security-Policy, the admin's allowed lookups, the Redis cache and its
client. The import contracts in pyproject.toml (``lint-imports``, run by ``make lint``)
keep it so.
"""
