"""Run slugs go on command lines (`benchtrail show RUN`): one starting with '-' would be read as an option."""

import re

from benchtrail.runstate.slugs import new_slug


def test_run_slugs_never_start_with_a_dash():
    slugs = [new_slug() for _ in range(5000)]   # without the rule, P(no leading '-') = (63/64)^5000 < 1e-34
    assert all(re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]{10}", s) for s in slugs), [s for s in slugs if s[0] == "-"][:3]
    assert len(set(slugs)) == len(slugs)
