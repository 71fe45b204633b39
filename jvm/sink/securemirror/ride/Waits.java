package securemirror.ride;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The driver's questions to a cluster, asked again while the cluster has a bad minute, and what this JVM waits for
 * meanwhile (read by the job's Python side through Py4J: {@link #json}, for its status lines).
 * <p>
 * {@link #ride} asks; a transient failure ({@link Transient#isTransient}) is asked again after a growing pause
 * ({@link Backoff}) until {@code rideMs} have passed since the first failure, then the last failure is thrown with
 * a sentence saying how long it was ridden. Anything else is thrown at once.
 */
public final class Waits {
    /** One wait going on: which side, what for, since when, how many tries, the last failure. */
    public record Wait(String side, String what, long sinceMs, int tries, String error) {
    }

    private static final Map<String, Wait> OPEN = new ConcurrentHashMap<>();
    private static final AtomicLong RIDDEN = new AtomicLong();
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Waits.class);

    private Waits() {
    }

    /** {@code call}'s answer, asked again through transient failures for at most {@code rideMs} (0: never again). */
    public static <T> T ride(String side, String what, long rideMs, Callable<T> call) {
        String key = side + ": " + what + " #" + Thread.currentThread().getId();
        long first = 0;
        int tries = 0;
        try {
            for (;;) {
                try {
                    T answer = call.call();
                    if (tries > 0) {
                        RIDDEN.incrementAndGet();
                        LOG.warn("secure-mirror: {} could {} again after {} s", side, what,
                                 (System.currentTimeMillis() - first) / 1000);
                    }
                    return answer;
                } catch (InterruptedException error) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while asked to " + what, error);
                } catch (Exception error) {
                    long now = System.currentTimeMillis();
                    if (!Transient.isTransient(error)) {
                        throw error instanceof RuntimeException runtime ? runtime : new IllegalStateException(
                            "the " + side + " cluster could not " + what + ": " + error, error);
                    }
                    first = tries == 0 ? now : first;
                    tries++;
                    if (now - first >= rideMs) {
                        throw new IllegalStateException("the " + side + " cluster could not " + what + " for "
                            + (now - first) / 1000 + " s, longer than mirror.ride_through_seconds ("
                            + rideMs / 1000 + " s): " + Transient.describe(error), error);
                    }
                    OPEN.put(key, new Wait(side, what, first, tries, Transient.describe(error)));
                    if (tries == 1) {
                        LOG.warn("secure-mirror: the {} cluster could not {} ({}); asking again for up to {} s",
                                 side, what, Transient.describe(error), rideMs / 1000);
                    }
                    Thread.sleep(Math.min(Backoff.pauseMs(tries), Math.max(1, first + rideMs - now)));
                }
            }
        } catch (InterruptedException error) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting to " + what, error);
        } finally {
            OPEN.remove(key);
        }
    }

    /** The waits going on now, and how many ended well since the JVM started, as JSON. */
    public static String json() {
        List<Wait> open = new ArrayList<>(OPEN.values());
        try {
            return new ObjectMapper().writeValueAsString(Map.of("open", open, "ridden", RIDDEN.get()));
        } catch (JsonProcessingException error) {
            throw new IllegalStateException(error);
        }
    }
}
