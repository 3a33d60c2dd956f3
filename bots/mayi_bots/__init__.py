"""Reference bots, written only against the mayi_sdk package."""
