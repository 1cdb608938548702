"""Signing in, and getting back in: lock-outs that one client cannot impose on another, and
password reset by mail.

* :mod:`registry.signin.lockout`: django-axes locks the pair (username, client address) after
  ``AXES_FAILURE_LIMIT`` failures, and an address after ``REGISTRY_SIGN_IN_ADDRESS_LIMIT``
  failures across usernames. Wrong passwords from one address never lock a person out
  from another.
* :mod:`registry.signin.reset`: the password reset pages, offered only when mail is
  configured (``EMAIL_URL``), throttled per client address (:mod:`registry.signin.throttle`).
* :mod:`registry.signin.services`: the page's request publishes a Celery task given only
  user ids (``registry.tasks.send_password_reset``), so the page answers in the same time
  whether or not the address has an account.
* :mod:`registry.signin.mail`: the reset mail the task builds and sends; throttled per
  account.

The client address is :func:`lib.client.client_address` everywhere.
"""
