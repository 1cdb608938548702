"""The monthly feedback mail: each practice's staff receive last month's scorecard beside the
registry's (docs/registry-office.md, "The monthly feedback mail").

``mail.py`` builds one recipient's mail; ``services.py`` claims a practice's month and sends;
``tasks.py`` is the beat's task; ``views.py`` the preview page and the opt-out.
"""
