"""The HTTP API agents hand cases in through and learn the human's decision from (docs/api.md), and its client.

`routes.api()` is a FastAPI app mounted at /api/v1 beside the Streamlit pages (app/streamlit_app.py); `client` is the
small typed client an agent uses (it imports httpx and the API's models only).
"""
