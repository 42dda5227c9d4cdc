"""An S3-compatible server on loopback for tests: moto's standalone server (`moto[server]`) as its own
process, standing in for the user's object store. boto3 talks to it over HTTP like to any S3 endpoint;
nothing in our process is patched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infra.localstack import VENV_BIN, Process, answers, free_port, wait_until

# moto accepts any credentials; they are passed like a user's would be (boto3's environment chain).
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "benchtrail-test", "AWS_SECRET_ACCESS_KEY": "benchtrail-test-secret",
               "AWS_DEFAULT_REGION": "us-east-1"}


class S3Server:
    def __init__(self, logdir: Path, bucket: str = "benchtrail-raw") -> None:
        self.port = free_port()
        self.bucket = bucket
        self.proc = Process("moto-s3", [str(VENV_BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(self.port)],
                            {"PATH": "/usr/bin:/bin"}, logdir)
        wait_until(lambda: answers(self.url, timeout=2), 60, "the S3 server")
        self.client().create_bucket(Bucket=bucket)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self, prefix: str = "") -> dict[str, str]:
        """What a Benchtrail process needs to keep its raw files in this server's bucket."""
        return {"BENCHTRAIL_STORAGE": "s3", "BENCHTRAIL_S3_BUCKET": self.bucket, "BENCHTRAIL_S3_ENDPOINT_URL": self.url,
                "BENCHTRAIL_S3_REGION": "us-east-1", "BENCHTRAIL_S3_PREFIX": prefix, **CREDENTIALS}

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.url, region_name="us-east-1",
                            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])

    def keys(self, prefix: str = "") -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return sorted(o["Key"] for page in pages for o in page.get("Contents", []))

    def read(self, key: str) -> bytes:
        return bytes(self.client().get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def stop(self) -> None:
        self.proc.stop()
