package securemirror.sink;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a batch write leaves its figures for the driver program that started it (the mirror job reads them with
 * {@link #take} after each batch): JSON text, see {@link Figures#toJson}.
 */
public final class Reports {
    private static final Map<String, String> WRITTEN = new ConcurrentHashMap<>();

    private Reports() {
    }

    static void put(String key, String json) {
        WRITTEN.put(key, json);
    }

    /** The figures of the write reported under {@code key}, or null; forgets them. */
    public static String take(String key) {
        return WRITTEN.remove(key);
    }
}
