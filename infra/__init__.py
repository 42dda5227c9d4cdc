"""Local infrastructure in Python (importable with the repository root on sys.path): `infra.localstack`."""
