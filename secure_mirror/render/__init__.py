"""Renderers: each a function of the validated Profile (or one Cluster) returning a dict or a string.

``render_all(profile, out_dir)`` writes them all, atomically; the other layers may call the builders directly
(``spark.source_options``, ``java_properties.client_properties``, ``acls.source_acls`` ...).
"""

from secure_mirror.render import acls, jaas, java_properties, krb5, librdkafka, mm2, providers, spark, templating
from secure_mirror.render.encoders import UnrepresentableValue
from secure_mirror.render.encoders import jaas as jaas_quote
from secure_mirror.render.tree import RenderedFile, render_all, render_files

__all__ = [
    "RenderedFile",
    "UnrepresentableValue",
    "acls",
    "jaas",
    "jaas_quote",
    "java_properties",
    "krb5",
    "librdkafka",
    "mm2",
    "providers",
    "render_all",
    "render_files",
    "spark",
    "templating",
]
