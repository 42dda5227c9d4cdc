"""What a run is and how it changes, shared by every domain that makes or moves runs: its status lifecycle,
its typed meta, the live events of its changes, its environment, the shares of a run over several load
generators, its slug and summary, and who may see or change it (`access`). It imports no other domain but
auth: uploads, plans, ingest, alerts, runs and trails build on it."""
