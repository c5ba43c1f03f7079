"""The one error type that bad input raises anywhere below the web layer."""


class InputError(ValueError):
    """Bad input, named by the field it came in, with what was expected and what came.

    `field` is a dotted path as a user wrote it (e.g. ``weights.W_q`` or ``query.matrix``);
    the API turns it into a 422 whose ``loc`` is that path.
    """

    def __init__(self, field: str, expected: str, got: str | None = None):
        self.field = field
        self.expected = expected
        self.got = got
        message = f"{field}: expected {expected}"
        if got is not None:
            message += f", got {got}"
        super().__init__(message)


def shape_words(shape) -> str:
    """``(8, 4)`` -> ``"8 × 4"``, the way every shape error spells a shape."""
    return " × ".join(str(int(s)) for s in shape)
