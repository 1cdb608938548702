"""Sandbox practices' data: deleting all of it, from the settings area or ``reset_sandbox``.

A sandbox practice (:attr:`registry.models.Practice.sandbox`) is where an integrator tries
the API with an ``rgk_test_`` key. Its staff may delete everything it holds, so the next try
starts clean: its ingestions (with their staged payloads and receipts), its records and all
that is derived from them, its providers and its kept counts. The practice, its members and
its key stay. Only a sandbox can be reset.

* :mod:`.services`: :func:`~.services.sandbox_reset`, in bounded batches;
* :mod:`.views` and :mod:`.urls`: the settings page (``/settings/sandbox/``), a confirmation
  before a POST;
* ``manage.py reset_sandbox SLUG`` (``ingestion/management/commands/reset_sandbox.py``).
"""
