package securemirror.sink;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * An admin client's settings taken from a consumer's or a producer's: the names {@link AdminClientConfig} defines, and
 * the config providers ({@code config.providers} and every {@code config.providers.<name>.*}), with which Kafka resolves
 * the {@code ${provider:...}} references of {@code render --secrets references}. {@code configNames()} lacks them
 * (Kafka 3.9 all of them, 4.x the {@code .class} and {@code .param.} ones), so a filter on it alone left the admin
 * clients with unresolved references in place of the secrets.
 */
public final class AdminSettings {
    static final String PROVIDERS = "config.providers";

    private AdminSettings() {
    }

    /** The settings of {@code settings} an admin client takes, config providers included. */
    public static Map<String, Object> of(Map<String, ?> settings) {
        Map<String, Object> own = new HashMap<>();
        settings.forEach((name, value) -> {
            if (AdminClientConfig.configNames().contains(name) || name.equals(PROVIDERS)
                    || name.startsWith(PROVIDERS + ".")) {
                own.put(name, value);
            }
        });
        return own;
    }
}
