"""The staff's export API: views (`views.py`), their serializers and URLs."""
