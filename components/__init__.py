"""Reusable Streamlit render pieces. They take models and draw them; they hold no domain logic."""
