"""What an operator sees of the pipeline: metrics, pipeline health, the consistency check.

* :mod:`.counters`: what the pipeline has done (ingestions finished, records by outcome),
  kept per practice in the chunk's own transaction (:class:`~ingestion.models.PipelineCount`).
* :mod:`.aggregate`: counters and histograms shared by every web and worker process (the HTTP
  requests, the ingestions' durations), summed in Redis.
* :mod:`.heartbeat`: a thread in each Celery worker that says it is alive.
* :mod:`.metrics`: ``/metrics``, read at scrape time from PostgreSQL and Redis.
* :mod:`.health`: ``/healthz/pipeline``, are ingestions moving.
* :mod:`.consistency`: ``manage.py check_registry``, does what is derived agree with the records.
"""
