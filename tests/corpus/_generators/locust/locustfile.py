"""Our Locust user for tests/corpus/locust-csv (run by produce.sh against the loopback demo target)."""

from locust import HttpUser, between, task


class Reader(HttpUser):
    wait_time = between(0.01, 0.05)

    @task(3)
    def home(self):
        self.client.get("/", name="accueil ✓")

    @task(1)
    def slow(self):
        self.client.get("/slow", name="slow 慢")

    @task(1)
    def echo(self):
        self.client.post("/echo", json={"note": "ünïcødé"}, name="echo")
