"""Attention mechanisms in pure torch: each returns ``output, trace``. No web code here."""

from .base import Mechanism
from .errors import InputError
from .trace import STEP_IDS, Step, Trace

__all__ = ["Mechanism", "InputError", "STEP_IDS", "Step", "Trace"]
