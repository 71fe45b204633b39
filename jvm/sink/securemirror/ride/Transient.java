package securemirror.ride;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Whether a failure is one the mirror rides through (a cluster's bad minutes) or one that retrying cannot mend.
 * <p>
 * Transient: anything whose cause chain holds one of Kafka's {@link RetriableException}s (a timeout, a leader or
 * coordinator that moved, {@code NOT_ENOUGH_REPLICAS}, a disconnection, a broker away), a
 * {@link java.util.concurrent.TimeoutException}, or a login that could not reach its KDC ("Cannot contact any KDC":
 * the tickets the client holds stay valid meanwhile). Never transient: a refused grant ({@link
 * AuthorizationException}), an interrupt (the query stops), or anything else (a bug is not a bad minute).
 */
public final class Transient {
    private static final String[] KDC_AWAY = {"cannot contact any kdc", "receive timed out", "connection refused"};

    private Transient() {
    }

    public static boolean isTransient(Throwable error) {
        boolean retriable = false;
        for (Throwable cause : chain(error)) {
            if (cause instanceof AuthorizationException || cause instanceof InterruptedException) {
                return false;
            }
            if (cause instanceof RetriableException || cause instanceof java.util.concurrent.TimeoutException
                    || kdcAway(cause)) {
                retriable = true;
            }
        }
        return retriable;
    }

    /** Is {@code className} one of Kafka's retriable exceptions (asked of the driver's own kafka-clients)? */
    public static boolean retriableClass(String className) {
        try {
            Class<?> found = Class.forName(className, false, Transient.class.getClassLoader());
            return RetriableException.class.isAssignableFrom(found)
                || java.util.concurrent.TimeoutException.class.isAssignableFrom(found);
        } catch (ClassNotFoundException | LinkageError error) {
            return false;
        }
    }

    private static boolean kdcAway(Throwable cause) {
        String text = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
        if (!(cause instanceof org.apache.kafka.common.errors.AuthenticationException)
                && !cause.getClass().getName().startsWith("javax.security.")
                && !cause.getClass().getName().startsWith("sun.security.krb5")) {
            return false;
        }
        for (String words : KDC_AWAY) {
            if (text.contains(words)) {
                return true;
            }
        }
        return false;
    }

    static List<Throwable> chain(Throwable error) {
        List<Throwable> found = new ArrayList<>();
        for (Throwable at = error; at != null && !found.contains(at) && found.size() < 32; at = at.getCause()) {
            found.add(at);
        }
        return found;
    }

    /** One line naming a failure by its innermost cause, for a status line (never a setting's value). */
    public static String describe(Throwable error) {
        List<Throwable> causes = chain(error);
        Throwable root = causes.get(causes.size() - 1);
        String message = root.getMessage() == null ? "" : ": " + root.getMessage().lines().findFirst().orElse("");
        String text = root.getClass().getSimpleName() + message;
        return text.length() > 300 ? text.substring(0, 300) : text;
    }
}
