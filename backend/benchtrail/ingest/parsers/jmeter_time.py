"""Formatted JMeter timestamps (`jmeter.save.saveservice.timestamp_format`, a Java SimpleDateFormat pattern).

JMeter writes epoch milliseconds unless that property names a pattern; then `timeStamp` is text in the
JVM's default time zone, with no zone in it unless the pattern has one. We read such a file by

1. the pattern given on upload (`timestamp_format`), else one inferred from the values: the first rows'
   timestamps are matched against the layouts JMeter users set (date `yyyy/MM/dd`, `yyyy-MM-dd`,
   `dd/MM/yyyy`, `MM/dd/yyyy`, `dd.MM.yyyy`, `yyyyMMdd`; time `HH:mm:ss`; optional `.SSS`/`,SSS`
   milliseconds; optional `'T'` separator and zone `Z`/`XXX`). A day-first or month-first date is told
   apart by a first number above 12 (or a second one); when every row could be either, the file is
   refused and the pattern must be given;
2. the zone given on upload (`timestamp_zone`, an IANA name such as `Europe/Paris` or an offset such as
   `+02:00`), else the zone in the values, else UTC;
3. the precision the pattern keeps: with milliseconds (`SSS`) times are exact to the millisecond; without,
   to the whole second (a sample's start is the start of its second), which the parsed file states:
   latencies (`elapsed`) stay exact, but the run's duration and throughput, and the series' intervals, are
   known to a second only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from ..model import ParseError

# Java SimpleDateFormat letters -> (chrono, Python strptime). `SSS` is milliseconds (3 digits).
_TOKENS = [("yyyy", "%Y", "%Y"), ("yy", "%y", "%y"), ("MMMM", "%B", "%B"), ("MMM", "%b", "%b"), ("MM", "%m", "%m"),
           ("dd", "%d", "%d"), ("HH", "%H", "%H"), ("hh", "%I", "%I"), ("mm", "%M", "%M"), ("ss", "%S", "%S"),
           ("SSS", "%3f", "%f"), ("a", "%p", "%p"), ("EEEE", "%A", "%A"), ("EEE", "%a", "%a"),
           ("XXX", "%:z", "%z"), ("XX", "%z", "%z"), ("Z", "%z", "%z")]


@dataclass(frozen=True, slots=True)
class TimeFormat:
    java: str               # the SimpleDateFormat pattern
    chrono: str             # the same for polars (chrono)
    python: str             # the same for datetime.strptime (finding a bad line)
    zone: str               # applied when the values carry none
    has_zone: bool
    precision_ms: int       # 1 or 1000
    inferred: bool

    def describe(self) -> str:
        how = "inferred from the values" if self.inferred else "as given"
        where = "the zone in the values" if self.has_zone else self.zone
        unit = "milliseconds" if self.precision_ms == 1 else "whole seconds"
        return f"timeStamp formatted as '{self.java}' ({how}), in {where}: times known to {unit}"


def java_to_formats(pattern: str) -> tuple[str, str, bool, int]:
    """(chrono, python, has zone, precision ms) of a SimpleDateFormat pattern; refuses letters we cannot read."""
    chrono, python = [], []
    has_zone = False
    precision = 1000
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            end = pattern.find("'", i + 1)
            if end < 0:
                raise ParseError(f"timestamp format {pattern!r}: unclosed quote", field="timestamp_format")
            literal = pattern[i + 1:end] or "'"
            chrono.append(literal.replace("%", "%%"))
            python.append(literal.replace("%", "%%"))
            i = end + 1
            continue
        if ch.isalpha():
            for token, c, p in _TOKENS:
                if pattern.startswith(token, i):
                    chrono.append(c)
                    python.append(p)
                    has_zone |= token in ("XXX", "XX", "Z")
                    if token == "SSS":
                        precision = 1
                    i += len(token)
                    break
            else:
                raise ParseError(f"timestamp format {pattern!r}: the letter '{ch}' at {i} is not one we read "
                                 "(y M d H h m s S a E Z X)", field="timestamp_format")
            continue
        chrono.append(ch.replace("%", "%%"))
        python.append(ch.replace("%", "%%"))
        i += 1
    if not ("%Y" in chrono or "%y" in chrono) or not any(t in chrono for t in ("%m", "%b", "%B")) \
            or "%d" not in chrono:
        raise ParseError(f"timestamp format {pattern!r} has no full date (year, month, day): the samples cannot be "
                         "placed in time", field="timestamp_format")
    return "".join(chrono), "".join(python), has_zone, precision


_DATE = [
    (re.compile(r"\d{4}/\d{2}/\d{2}"), "yyyy/MM/dd"),
    (re.compile(r"\d{4}-\d{2}-\d{2}"), "yyyy-MM-dd"),
    (re.compile(r"\d{2}\.\d{2}\.\d{4}"), "dd.MM.yyyy"),
    (re.compile(r"\d{2}/\d{2}/\d{4}"), "??/??/yyyy"),
    (re.compile(r"\d{2}-\d{2}-\d{4}"), "??-??-yyyy"),
    (re.compile(r"\d{8}"), "yyyyMMdd"),
]
_VALUE = re.compile(r"^(?P<date>[\d/.\-]+)(?P<sep>[ T]|'T')?(?P<time>\d{2}:\d{2}:\d{2}|\d{6})?"
                    r"(?P<frac>[.,]\d{3})?(?P<zone>Z|[+-]\d{2}:\d{2}|[+-]\d{4})?$")


def infer(values: list[str]) -> str:
    """The SimpleDateFormat pattern of `values` (the first rows' timeStamp), or a ParseError saying why not."""
    sample = [v.strip() for v in values if v.strip()][:500]
    if not sample:
        raise ParseError("no timeStamp values to infer their format from", field="timeStamp")
    shapes = set()
    first_big = second_big = False
    for k, v in enumerate(sample):
        m = _VALUE.match(v)
        date = m.group("date") if m else ""
        layout = next((lay for rx, lay in _DATE if rx.fullmatch(date)), None)
        if m is None or layout is None or m.group("time") is None:
            if k == 0:
                raise ParseError(f"timeStamp {v!r} is neither epoch milliseconds nor a date and time of a layout we "
                                 "infer: give its format (timestamp_format, e.g. 'yyyy/MM/dd HH:mm:ss')",
                                 field="timeStamp")
            continue   # a later odd value: the read names its line
        date = m.group("date")
        if layout.startswith("??"):
            a, b = int(date[0:2]), int(date[3:5])
            first_big |= a > 12
            second_big |= b > 12
        time = "HH:mm:ss" if ":" in m.group("time") else "HHmmss"
        sep = {" ": " ", "T": "'T'", "'T'": "'T'", None: ""}[m.group("sep")]
        frac = "" if m.group("frac") is None else m.group("frac")[0] + "SSS"
        zone = m.group("zone")
        zone_p = "" if zone is None else ("XXX" if ":" in zone or zone == "Z" else "Z")
        shapes.add((layout, sep, time, frac, zone_p))
    if len(shapes) > 1:
        raise ParseError(f"timeStamp values are written in {len(shapes)} different layouts: give the format "
                         "(timestamp_format)", field="timeStamp")
    layout, sep, time, frac, zone_p = shapes.pop()
    if layout.startswith("??"):
        d = layout[2]
        if first_big and second_big:
            raise ParseError("timeStamp dates have numbers above 12 in both of their first two places: not a "
                             "date layout we know; give the format (timestamp_format)", field="timeStamp")
        if first_big:
            layout = f"dd{d}MM{d}yyyy"
        elif second_big:
            layout = f"MM{d}dd{d}yyyy"
        else:
            raise ParseError(f"timeStamp dates such as {sample[0]!r} may be day-first or month-first (no day above "
                             "12 in the first rows): give the format, e.g. timestamp_format='dd/MM/yyyy HH:mm:ss'",
                             field="timeStamp")
    return f"{layout}{sep}{time}{frac}{zone_p}"


def time_format(values: list[str], pattern: str | None, zone: str | None) -> TimeFormat:
    inferred = pattern is None
    java = pattern or infer(values)
    chrono, python, has_zone, precision = java_to_formats(java)
    zone_name = zone or "UTC"
    _zone(zone_name)   # refuse an unknown zone before reading
    return TimeFormat(java, chrono, python, zone_name, has_zone, precision, inferred)


def _zone(name: str) -> timezone | ZoneInfo:
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", name)
    if m:
        sign = 1 if m.group(1) == "+" else -1
        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    if name in ("UTC", "Z"):
        return timezone.utc
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ParseError(f"time zone {name!r} is neither an IANA name (Europe/Paris) nor an offset (+02:00)",
                         field="timestamp_zone") from None


def epoch_ms_expr(fmt: TimeFormat) -> pl.Expr:
    """`timeStamp` text -> epoch ms (Int64), strictly (a value off the pattern fails the read)."""
    col = pl.col("timeStamp").cast(pl.String).str.strip_chars()
    if fmt.has_zone:
        parsed = col.str.strptime(pl.Datetime("ms", "UTC"), fmt.chrono, strict=True)
    else:
        parsed = col.str.strptime(pl.Datetime("ms"), fmt.chrono, strict=True)
        zone = fmt.zone
        if re.fullmatch(r"[+-]\d{2}:?\d{2}", zone):
            sign = 1 if zone[0] == "+" else -1
            minutes = int(zone[1:3]) * 60 + int(zone[-2:])
            parsed = (parsed - pl.duration(minutes=sign * minutes)).dt.replace_time_zone("UTC")
        else:
            parsed = parsed.dt.replace_time_zone("UTC" if zone in ("UTC", "Z") else zone, ambiguous="earliest",
                                                 non_existent="null")
    return parsed.dt.epoch("ms").alias("timeStamp")


def check_value(value: str, fmt: TimeFormat) -> str | None:
    """Why `value` is not a timestamp of `fmt` (None when it is), for the error of a bad line."""
    try:
        datetime.strptime(value.strip(), fmt.python)
        return None
    except ValueError:
        return f"{value!r} does not match the timestamp format '{fmt.java}'"
