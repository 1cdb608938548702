from django.apps import AppConfig
from django.contrib.admin.apps import AdminConfig


class RegistryAdminConfig(AdminConfig):
    """django.contrib.admin with the registry's site (:mod:`config.admin_site`)."""

    default_site = "config.admin_site.RegistryAdminSite"


class WiringConfig(AppConfig):
    """``config`` itself, so that Django lists its commands (``generate_secrets``)."""

    name = "config"
    label = "registry_config"
