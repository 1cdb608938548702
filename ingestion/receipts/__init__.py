"""What a client reads back: the receipt, its progress while processing, its retention.

``selectors`` (the status endpoint's reads), ``receipt`` (the finished receipt, streamed),
``progress`` (how far a processing ingestion got), ``retention`` (the purge of old outcomes).
"""
