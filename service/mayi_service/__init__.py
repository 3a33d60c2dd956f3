"""The May I game service (REST API over Redis) and the mayi command line."""
