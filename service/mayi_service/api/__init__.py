"""HTTP resources, one flask-smorest Blueprint each."""
