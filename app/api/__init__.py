"""The HTTP layer: one router module per resource, each exposing ``router``.

``create_app`` includes every module in ``ROUTER_MODULES`` in this order.
"""

ROUTER_MODULES = [
    "app.api.health",
    "app.api.attention",
    "app.api.shares",
    "app.api.pages",
    "app.api.models",
]
