"""The only Streamlit-aware code besides `app.py` and `pages/`: session state, widgets, charts."""
