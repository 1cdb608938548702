"""A submission taken in: its body parsed into chunks, staged encrypted, the ingestion queued.

``submission`` (the body read and cut into chunks), ``staging`` (the chunks' encryption),
``services`` (the submit call's writes, and its message published after the commit).
"""
