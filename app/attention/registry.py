"""The registry: the one list of mechanisms that the API, the page and the tests read.

Adding a mechanism is one new file with a ``Mechanism`` subclass and one line here.
"""

from __future__ import annotations

from .additive import Additive
from .base import Mechanism
from .concat import Concat
from .errors import InputError
from .multi_head import MultiHead
from .multi_head_shared import MultiHeadShared
from .scaled_dot_product import ScaledDotProduct

MECHANISMS: dict[str, Mechanism] = {
    m.id: m for m in (ScaledDotProduct(), MultiHead(), MultiHeadShared(), Additive(), Concat())
}


def get(mechanism_id: str) -> Mechanism:
    try:
        return MECHANISMS[mechanism_id]
    except KeyError:
        raise InputError("mechanism", "one of " + ", ".join(MECHANISMS),
                         repr(mechanism_id)) from None
