"""Settings refuse what would leave a production deployment open."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from benchtrail.config import Settings


def test_production_refuses_a_broker_without_a_password() -> None:
    with pytest.raises(ValidationError, match="BENCHTRAIL_REDIS_URL must carry the broker's password"):
        Settings(env="production", redis_url="redis://redis:6379/0")
    with pytest.raises(ValidationError, match="BENCHTRAIL_REDIS_URL"):
        Settings(env="production", redis_url="redis://user@redis:6379/0")  # a user name is not a password


def test_production_takes_a_broker_with_a_password_and_other_envs_take_either() -> None:
    assert Settings(env="production", redis_url="redis://:s3cret@redis:6379/0").redis_url.endswith("@redis:6379/0")
    assert Settings(env="production", redis_url="rediss://:s3cret@redis.example:6380/0").env == "production"
    for env in ("development", "test"):
        assert Settings(env=env, redis_url="redis://127.0.0.1:6379/0").env == env

