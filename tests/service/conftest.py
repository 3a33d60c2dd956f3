"""The service tests use the shared fixtures of ``tests/conftest.py`` (a real Redis, the app,
the app on a real socket)."""
