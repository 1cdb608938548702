"""The gathering window (ingestion/messaging/gathering.py): a single's message joins the
broker's queue ``REGISTRY_SINGLES_GATHER_SECONDS`` after its commit, held by the web process,
and the singles committed meanwhile, whichever practices sent them, publish nothing. (The
default, 1 s, holds in the web and worker processes tests start; in the test process itself,
messages go at once unless a test says otherwise: tests/conftest.py.)"""

from __future__ import annotations

import threading

import pytest

from ingestion.messaging.gathering import _Held
from ingestion.models import Ingestion
from ingestion.pipeline.recovery import ingestions_to_recover
from tests.factories import course
from tests.ingestion.messaging.test_republish import published
from tests.ingestion.pipeline.test_combined_claim import submit
from tests.workers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_singles_message_joins_the_queue_when_its_window_ends(api, settings):
    settings.REGISTRY_SINGLES_GATHER_SECONDS = 0.5
    first, second = submit(api, [course("W-1", family="Alpha"), course("W-2", family="Beta")])
    assert (published(str(first)), published(str(second))) == (0, 0)  # held, committed
    assert Ingestion.objects.filter(id__in=[first, second], enqueued_at__isnull=False).count() == 2
    wait_for(lambda: published(str(first)) == 1, timeout=10, message="the held message")
    assert published(str(second)) == 0  # it goes with the first's claim


def test_while_the_process_holds_the_singles_message_its_next_singles_ask_no_one(api, settings):
    """The flag is gone from Redis (as if expired): a second single would publish a message
    of its own if it asked Redis. This process holds the first's message, published after
    the second's commit, so the second asks nothing and goes with the first's claim."""
    from django.core.cache import caches

    from ingestion.messaging.gathering import holds
    from ingestion.messaging.singles_flag import _flag

    settings.REGISTRY_SINGLES_GATHER_SECONDS = 0.5
    (first,) = submit(api, [course("W-1", family="Alpha")])
    assert holds()
    caches["default"]._cache.get_client(write=True).delete(_flag())
    (second,) = submit(api, [course("W-2", family="Beta")])
    wait_for(lambda: published(str(first)) == 1, timeout=10, message="the held message")
    assert not holds()
    assert published(str(second)) == 0


def test_a_held_single_is_not_the_recoverys_before_its_requeue_age(api, settings):
    """Held, the single waits in neither the queue nor a worker: the recovery leaves it be,
    as the window is below REGISTRY_REQUEUE_AFTER_SECONDS."""
    settings.REGISTRY_SINGLES_GATHER_SECONDS = 0.5
    settings.REGISTRY_RECOVERY_GRACE_SECONDS = 0
    (single,) = submit(api, [course("W-1")])
    assert published(str(single)) == 0
    assert ingestions_to_recover() == []
    wait_for(lambda: published(str(single)) == 1, timeout=10, message="the held message")


def test_a_held_publish_that_fails_leaves_the_single_to_the_recovery(api, settings):
    from config.celery import app
    from tests.ingestion.intake.test_submit import reset_producers

    settings.REGISTRY_SINGLES_GATHER_SECONDS = 0.3
    settings.REGISTRY_RECOVERY_GRACE_SECONDS = 0
    original = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"  # a real, closed port
    reset_producers(app)
    try:
        (single,) = submit(api, [course("W-1")])
        wait_for(
            lambda: Ingestion.objects.get(id=single).enqueued_at is None,
            timeout=20,
            message="the failed publish noted",
        )
    finally:
        app.conf.broker_url = original
        reset_producers(app)
    assert ingestions_to_recover() == [single]
    assert published(str(single)) == 0


def test_what_is_held_is_published_at_once_when_the_process_exits():
    made: list[str] = []
    held = _Held()
    held.later(60, made.append, "later")
    held.later(30, made.append, "sooner")
    held.now()  # atexit
    assert made == ["sooner", "later"]


def test_held_calls_are_made_in_their_order_on_one_thread():
    made: list[tuple[str, str]] = []
    done = threading.Event()

    def note(name: str) -> None:
        made.append((name, threading.current_thread().name))
        if len(made) == 3:
            done.set()

    held = _Held()
    held.later(0.3, note, "third")
    held.later(0.1, note, "first")
    held.later(0.2, note, "second")
    assert done.wait(10)
    assert [name for name, _ in made] == ["first", "second", "third"]
    assert {thread for _, thread in made} == {"gathering"}


@pytest.mark.worker
def test_a_web_process_stopped_normally_publishes_what_it_holds(tmp_path):
    """gunicorn's web process, told to stop (SIGTERM) while it holds a single's message for
    20 s more, publishes it as it exits rather than leave it to the recovery."""
    import orjson
    import requests

    from registry.models import Practice
    from tests import workers
    from tests.ingestion.conftest import mint
    from tests.services import Stack

    token = mint(Practice.objects.create(slug="st-mary"))
    env = workers.worker_environment(REGISTRY_SINGLES_GATHER_SECONDS="20")
    with Stack(env, tmp_path).web() as web:
        response = requests.post(
            f"{web.url}/api/registry/fhir/Bundle",
            data=orjson.dumps(course("E-1")),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/fhir+json"},
            timeout=60,
        )
        assert response.status_code == 202
        single = response.headers["Content-Location"].rstrip("/").rsplit("/", 1)[-1]
        assert published(single) == 0  # held
    assert published(single) == 1  # published on the way out
