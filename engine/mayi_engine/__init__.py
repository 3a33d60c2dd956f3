"""Pure-Python rules engine for May I and Shanghai (contract rummy)."""
