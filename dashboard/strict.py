"""The base of every model read from a file, a form or a command line: unknown fields are errors, and so are
non-finite numbers (Infinity, NaN: no amount, confidence or limit is one, and JSON cannot carry them back)."""

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, allow_inf_nan=False)
