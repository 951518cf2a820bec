"""A trace request that does not validate, said in one plain sentence naming the field as the query console labels
it (never pydantic's dump: "1 validation error for TraceRequest ... https://errors.pydantic.dev/..."). No Streamlit.
"""

from __future__ import annotations

from pydantic import ValidationError

# The console's labels (components/trace_view.render_console); a deep link's parameters carry the same fields.
LABELS = {
    "bank": "Bank",
    "query": "Query",
    "tags": "Tags",
    "tags_match": "tags_match",
    "budget": "Budget",
    "max_tokens": "max_tokens",
    "types": "Fact types",
}


def _sentence(error: dict) -> str:
    field = str(error["loc"][0]) if error.get("loc") else ""
    label, kind, ctx = LABELS.get(field, field or "The request"), error.get("type", ""), error.get("ctx") or {}
    if kind == "string_too_short":
        return f"{label} is empty: fill it in to trace a recall."
    if kind == "string_too_long":
        return f"{label} is {len(str(error.get('input', ''))):,} characters long; a trace takes at most {ctx.get('max_length', 0):,}."
    if kind in ("greater_than_equal", "greater_than"):
        return f"{label} must be at least {ctx.get('ge', ctx.get('gt'))}."
    if kind in ("less_than_equal", "less_than"):
        return f"{label} must be at most {ctx.get('le', ctx.get('lt'))}."
    if kind == "literal_error":
        return f"{label} must be one of {ctx.get('expected', 'the values offered')}."
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return f"{label} must be a whole number."
    if kind == "extra_forbidden":
        return f"{label} is not part of a trace request."
    message = str(error.get("msg", "is not valid")).removeprefix("Value error, ")
    return f"{label}: {message[:1].lower() + message[1:]}" + ("" if message.endswith(".") else ".")


def request_problem(exc: ValidationError) -> str:
    """What is wrong with the request, one sentence per field at fault."""
    return " ".join(_sentence(error) for error in exc.errors())
