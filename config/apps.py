from django.contrib.admin.apps import AdminConfig


class RegistryAdminConfig(AdminConfig):
    """django.contrib.admin with the registry's site (:mod:`config.admin_site`)."""

    default_site = "config.admin_site.RegistryAdminSite"
