"""What every benchmark stands on (benchmarks/__init__.py lists its modules): one sandbox's session and clocks, the
contenders, the data loaded and the figures read back, one summary of repeats, and the results files with the build
they were made at. It imports no scenario."""
