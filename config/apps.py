from django.apps import AppConfig
from django.contrib.admin.apps import AdminConfig
from django.core.checks import Tags, register


class RegistryAdminConfig(AdminConfig):
    """django.contrib.admin with the registry's site (:mod:`config.admin_site`)."""

    default_site = "config.admin_site.RegistryAdminSite"


class SiteConfig(AppConfig):
    """``config`` itself, as an app: Django lists its commands (``generate_secrets``) and it
    registers its deploy checks at start-up."""

    name = "config"
    label = "site"

    def ready(self) -> None:
        from config.proxy import forgotten_proxy_check

        register(forgotten_proxy_check, Tags.security, deploy=True)
