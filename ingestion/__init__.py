"""Everything about a submission, in the order it goes.

``api`` (the HTTP surface) → ``intake`` (parsed, staged, queued) → ``messaging`` (the message
published after the commit) ⇢ ``tasks`` (the worker's thin tasks) → ``pipeline`` (claimed,
chunk by chunk, completed) → ``lifecycle`` (the records decided and stored in the registry);
``receipts`` is what a client reads back. ``fhir`` is the pure mapping core the intake, the
pipeline and the ``$validate`` preview share. The web never loads ``tasks`` or ``pipeline``.
"""
