"""The pages, run by st.navigation from dashboard/app/main.py; each draws itself through one named function."""
