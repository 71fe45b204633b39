"""The status line of a batch (pure)."""

from secure_mirror.run.monitor import status_text


def _line(**changes):
    line = {"batch": 0, "record-count": 500, "records-in-per-sec": 0.0, "records-out-per-sec": 250.0,
            "byte-count": 512000, "batch-duration-ms": 2000, "records-behind": 0}
    return {**line, **changes}


def test_a_first_batch_has_no_input_rate_rather_than_zero():
    assert status_text(_line()) == ("batch 0: 500 records, in n/a, out 250/s, 250.0 KiB/s, took 2000 ms, "
                                    "0 behind the source")


def test_later_batches_show_the_input_rate():
    assert "in 120/s, out 250/s" in status_text(_line(batch=3, **{"records-in-per-sec": 120.4}))
    assert "0 records, in 0/s" in status_text(_line(**{"record-count": 0}))
