"""``GET /metrics``: the Prometheus text format, read at scrape time, behind a bearer token.

Every figure comes from where all processes meet, so any web process answers for all of
them: the kept counters and the unfinished ingestions from PostgreSQL (a sum over one row
per practice, and a count over the ``ingestion_unfinished`` partial index: no count over the
records or the finished ingestions), the heartbeats and the shared HTTP and duration
tallies from Redis (:mod:`.aggregate`). Labels hold statuses, outcomes and route names only.

Without ``REGISTRY_METRICS_TOKEN`` the page does not exist (404); a request without the
token, or with another, gets the same 404.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from ingestion.monitoring.aggregate import (
    HTTP_BUCKETS,
    INGESTION_BUCKETS,
    SEPARATOR,
    UNTRUSTED_FORWARDED,
    aggregate,
)
from ingestion.monitoring.counters import RECORD_OUTCOMES, pipeline_counts_total
from ingestion.monitoring.health import authorised, queue_state, worker_count
from ingestion.monitoring.inflight import in_flight
from registry.silence import silent_count

Histogram = dict[str, float]  # bucket index, "inf", "sum", "count" -> value


class RegistryCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield from _pipeline()
        yield from _web()
        yield from _shared()
        yield from _practices()

    def describe(self) -> list[Metric]:
        return []  # read at scrape time only


def _pipeline() -> Iterator[Metric]:
    counts = pipeline_counts_total()
    queue = queue_state()
    ingestions = CounterMetricFamily(
        "registry_ingestions", "Ingestions submitted, completed and failed.", labels=["status"]
    )
    unfinished = queue.queued + queue.processing
    finished = counts.ingestions_completed + counts.ingestions_failed
    ingestions.add_metric(["submitted"], finished + unfinished)
    ingestions.add_metric(["completed"], counts.ingestions_completed)
    ingestions.add_metric(["failed"], counts.ingestions_failed)
    yield ingestions
    records = CounterMetricFamily(
        "registry_records",
        "Receipt entries by outcome; flagged, amended and retracted are kinds of accepted.",
        labels=["outcome"],
    )
    for outcome in RECORD_OUTCOMES:
        records.add_metric([outcome], getattr(counts, f"records_{outcome}"))
    yield records
    yield GaugeMetricFamily(
        "registry_ingestion_queue_depth", "Ingestions queued or processing.", value=unfinished
    )
    yield GaugeMetricFamily(
        "registry_ingestion_oldest_queued_seconds",
        "Age of the oldest queued ingestion (0 when none is queued).",
        value=queue.oldest_queued_seconds,
    )
    yield GaugeMetricFamily(
        "registry_single_oldest_waiting_seconds",
        "Age of the oldest queued single-course ingestion (0 when none waits).",
        value=queue.oldest_single_seconds,
    )
    workers = worker_count()
    yield GaugeMetricFamily(
        "registry_workers_alive",
        "Celery workers with a recent heartbeat.",
        value=workers if workers is not None else float("nan"),
    )


def _web() -> Iterator[Metric]:
    """Requests inside the web processes: an overloaded web shows here, not in the queue."""
    web = in_flight()
    yield GaugeMetricFamily(
        "registry_web_requests_in_flight",
        "Requests received by the web processes and not yet answered.",
        value=web.requests,
    )
    yield GaugeMetricFamily(
        "registry_web_oldest_request_seconds",
        "Age of the oldest request the web processes hold (0 when none).",
        value=web.oldest_seconds,
    )


def _practices() -> Iterator[Metric]:
    """Practices as the registry office sees them: a count, never a practice's name."""
    yield GaugeMetricFamily(
        "registry_practices_silent",
        "Practices that usually send and have sent nothing for REGISTRY_SILENT_AFTER_DAYS.",
        value=silent_count(),
    )


def _shared() -> Iterator[Metric]:
    tallies = aggregate.read()
    yield CounterMetricFamily(
        "registry_untrusted_forwarded",
        "Requests with X-Forwarded-For from a peer not in REGISTRY_TRUSTED_PROXIES (ignored).",
        value=tallies.pop(UNTRUSTED_FORWARDED, 0.0),
    )
    requests = CounterMetricFamily(
        "registry_http_requests",
        "HTTP requests answered, by route name and status.",
        labels=["endpoint", "status"],
    )
    durations: dict[str, dict[str, Histogram]] = defaultdict(lambda: defaultdict(dict))
    for name, value in sorted(tallies.items()):
        kind, labels, last = name.split(SEPARATOR, 2)
        if kind == "http_requests":
            requests.add_metric([labels, last], value)
        else:
            durations[kind][labels][last] = value
    yield requests
    http = HistogramMetricFamily(
        "registry_http_request_duration_seconds",
        "Time to answer an HTTP request (to its first byte), by route name.",
        labels=["endpoint"],
    )
    for endpoint, tally in sorted(durations["http_duration"].items()):
        buckets, total = _buckets(tally, HTTP_BUCKETS)
        http.add_metric([endpoint], buckets, total)
    yield http
    ingestion = HistogramMetricFamily(
        "registry_ingestion_duration_seconds",
        "Time from submitted to completed, by kind (single or batch).",
        labels=["kind"],
    )
    for kind, tally in sorted(durations["ingestion_duration"].items()):
        if kind:  # a field without a kind was written before kinds were kept
            buckets, total = _buckets(tally, INGESTION_BUCKETS)
            ingestion.add_metric([kind], buckets, total)
    yield ingestion


def _buckets(tally: Histogram, bounds: Sequence[float]) -> tuple[list[tuple[str, float]], float]:
    """Cumulative buckets, as the text format wants them, and the sum."""
    cumulative, buckets = 0.0, []
    for index, bound in enumerate(bounds):
        cumulative += tally.get(str(index), 0.0)
        buckets.append((repr(bound), cumulative))
    buckets.append(("+Inf", cumulative + tally.get("inf", 0.0)))
    return buckets, tally.get("sum", 0.0)


registry = CollectorRegistry(auto_describe=False)
registry.register(RegistryCollector())


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if not authorised(request):
        raise Http404
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
