"""What each worker process of `benchtrail-api` does once its app is built (benchtrail/serve.py)."""

from __future__ import annotations

from tests.support.pythons import fresh_process_output


def test_a_worker_freezes_what_it_built_out_of_the_collectors_generations():
    """In a process of its own (freezing is for the life of the process): the app built by
    `worker_app`, its modules, routes, schemas and mappers are frozen: over 100,000 objects that
    full collections no longer walk (228,068 measured)."""
    code = ("import gc\nfrom benchtrail.serve import worker_app\nbefore = gc.get_freeze_count()\n"
            "worker_app()\nprint(before, gc.get_freeze_count())")
    out = fresh_process_output(code).split()
    before, after = int(out[-2]), int(out[-1])
    assert before == 0
    assert after > 100_000, after


def test_the_processes_share_of_database_connections_stays_within_the_total():
    """`db.api_share`: every pool of a process gets at least one connection, and the processes together
    hold no more than the total whenever it leaves 3 per process; 2 processes of the default 48 keep
    the pools measured in `make bench-api` (12 reads, 4 on the loop) and get 8 for writes."""
    from benchtrail.db import ConnectionShare, api_share

    for processes in range(1, 17):
        for total in range(3 * processes, 201):
            share = api_share(total, processes)
            assert min(share.read, share.write, share.loop) >= 1, (total, processes, share)
            assert share.total * processes <= total, (total, processes, share)
    assert api_share(48, 2) == ConnectionShare(read=12, write=8, loop=4)
    assert api_share(48, 8) == ConnectionShare(read=3, write=2, loop=1)
    assert api_share(48, 1) == ConnectionShare(read=16, write=8, loop=4)
    assert api_share(48, 20).total == 3   # fewer than 3 each is not a server: 60 in all, said at startup
