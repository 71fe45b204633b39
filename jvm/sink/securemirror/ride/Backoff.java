package securemirror.ride;

/** The pause before the next try: one second, doubling, at most {@value #MOST_MS} ms. */
public final class Backoff {
    public static final long MOST_MS = 30_000;

    private Backoff() {
    }

    /** The pause before try {@code attempt} (1: the first retry). */
    public static long pauseMs(int attempt) {
        if (attempt <= 0) {
            return 0;
        }
        return Math.min(MOST_MS, 1000L << Math.min(attempt - 1, 20));
    }
}
