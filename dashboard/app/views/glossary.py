"""The glossary: every technical word the dashboard shows (the Traces page, "How this was recalled"), each in one line
of plain words. Linked from the Traces page, the case pages' technical sections and Home."""

import streamlit as st

from components.glossary import GLOSSARY

st.title("Glossary")
st.caption(
    "The technical words some pages show, each in plain words. The pages a support lead or a finance manager reads "
    "use the plain words; these are for who wants to look under the hood."
)
for term in sorted(GLOSSARY, key=str.casefold):
    with st.container(border=True):
        st.markdown(f"**{term}**")
        st.text(GLOSSARY[term])
