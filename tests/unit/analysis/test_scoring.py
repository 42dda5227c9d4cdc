"""F1 and cover against hand-computed values and TCPDBench's published zero-baseline scores."""

from __future__ import annotations

import json

import pytest

from benchtrail.analysis.scoring import covering, f_measure, precision_recall_f
from tests.support.corpus import SHARED

FIXTURES = SHARED / "fixtures" / "cpd"


def test_f1_hand_checked() -> None:
    # Annotators {0,10} and {0,12}; predictions {0,11,30}.
    # Union {0,10,12}: 0 matches 0, 10 matches 11, 12 finds nothing left (11 taken) -> P = 2/3.
    # Recall: annotator 1 -> {0,10} both matched = 1; annotator 2 -> {0,12} both matched = 1.
    f, p, r = precision_recall_f({"a": [10], "b": [12]}, [11, 30], margin=5)
    assert p == pytest.approx(2 / 3)
    assert r == pytest.approx(1.0)
    assert f == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))


def test_f1_margin_is_inclusive_and_zero_always_counts() -> None:
    assert f_measure({"a": [10]}, [15]) == pytest.approx(1.0)
    # 16 is 6 away: P = 1/2 (only 0), R = 1/2 -> F = 1/2
    assert f_measure({"a": [10]}, [16]) == pytest.approx(0.5)
    assert f_measure({"a": []}, []) == pytest.approx(1.0)


def test_cover_hand_checked() -> None:
    # n=10, truth cut at 5: segments [0,5) [5,10); prediction cut at 4: [0,4) [4,10)
    # [0,5): best Jaccard with [0,4) = 4/5; [5,10): with [4,10) = 5/6  -> (5*0.8 + 5*5/6)/10
    assert covering({"a": [5]}, [4], 10) == pytest.approx((5 * 0.8 + 5 * 5 / 6) / 10)
    # No prediction: single segment [0,10); J([0,5),[0,10)) = 0.5 for both -> 0.5
    assert covering({"a": [5]}, [], 10) == pytest.approx(0.5)


def test_zero_baseline_matches_tcpdbench_tables() -> None:
    annotations = json.loads((FIXTURES / "tcpd" / "annotations.json").read_text())
    f1 = json.loads((FIXTURES / "tcpdbench_v2_tables" / "default_f1_uni_full.json").read_text())
    cover = json.loads((FIXTURES / "tcpdbench_v2_tables" / "default_cover_uni_full.json").read_text())
    checked = 0
    for path in sorted((FIXTURES / "tcpd" / "datasets").glob("*.json")):
        data = json.loads(path.read_text())
        name = data["name"]
        if data["n_dim"] != 1 or name not in f1:
            continue
        assert f_measure(annotations[name], []) == pytest.approx(f1[name]["zero"], abs=1e-9)
        assert covering(annotations[name], [], data["n_obs"]) == pytest.approx(cover[name]["zero"], abs=1e-9)
        checked += 1
    assert checked == 31
