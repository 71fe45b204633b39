package securemirror.sink;

import java.util.Map;

/**
 * The producers' settings of one task, read when its first producer is needed: as late as possible, as a delegation
 * token is valid for a while after the driver sends the next one, and a task may start well before it writes. Clients
 * of this executor logged in with an older token are retired then ({@link Producers#retireOlderLogins}).
 */
final class TaskClient {
    private final SinkSettings settings;
    private Map<String, Object> read;

    TaskClient(SinkSettings settings) {
        this.settings = settings;
    }

    Map<String, Object> settings() {
        if (read == null) {
            read = settings.clientSettings();
            Producers.retireOlderLogins(read);
        }
        return read;
    }
}
