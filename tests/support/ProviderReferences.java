package securemirror.sink;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.connect.mirror.MirrorMakerConfig;

/**
 * Resolves rendered configurations the way Kafka's own readers do (tests/unit/render/test_reference_readers.py),
 * compiled with jvm/sink's AdminSettings. Arguments: {@code kind:label:allowed:path} for each file, where kind is
 * {@code client} (a client's .properties, read by AdminClientConfig), {@code job} (the job's options as .properties,
 * through AdminSettings as the mirror's admin clients take them) or {@code mm2=ALIAS} (mm2.properties, through
 * MirrorMakerConfig's client configuration for ALIAS), and allowed the value of Kafka's allow-list system property
 * ({@code org.apache.kafka.automatic.config.providers}, read whenever a configuration is made). Prints, one line each,
 * {@code label TAB setting TAB value} for each secret setting and each JAAS option, as JaasContext parses the resolved
 * {@code sasl.jaas.config}; a value's line breaks written as \n.
 */
public final class ProviderReferences {
    private static final List<String> SECRETS = List.of(
        "ssl.truststore.password", "ssl.keystore.password", "ssl.key.password", "ssl.keystore.key");

    public static void main(String[] args) throws Exception {
        for (String arg : args) {
            String[] spec = arg.split(":", 4);
            String kind = spec[0];
            String label = spec[1];
            System.setProperty("org.apache.kafka.automatic.config.providers", spec[2]);
            Map<String, Object> settings = load(spec[3]);
            if (kind.equals("job")) {
                settings = AdminSettings.of(settings);
            } else if (kind.startsWith("mm2=")) {
                settings = Mm2.adminSettings(spec[3], settings, kind.substring("mm2=".length()));
            }
            report(label, new AdminClientConfig(settings));
        }
    }

    private static Map<String, Object> load(String path) throws Exception {
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(Paths.get(path))) {
            props.load(in);
        }
        Map<String, Object> settings = new HashMap<>();
        props.stringPropertyNames().forEach(name -> settings.put(name, props.getProperty(name)));
        return settings;
    }

    private static void report(String label, AdminClientConfig config) {
        List<String> lines = new ArrayList<>();
        for (String name : SECRETS) {
            Password value = config.getPassword(name);
            if (value != null) {
                lines.add(name + "\t" + value.value());
            }
        }
        if (config.getPassword("sasl.jaas.config") != null) {
            JaasContext context = JaasContext.loadClientContext(config.values());
            for (AppConfigurationEntry entry : context.configurationEntries()) {
                entry.getOptions().forEach((option, value) -> lines.add("jaas." + option + "\t" + value));
            }
        }
        lines.forEach(line -> System.out.println(label + "\t" + line.replace("\n", "\\n")));
    }

    /**
     * Only loaded for mm2 files: MirrorMakerConfig is on Kafka's class path, not on the job's. One per file (each scans
     * the class path for plugins, which takes a while).
     */
    private static final class Mm2 {
        private static final Map<String, MirrorMakerConfig> READ = new HashMap<>();

        static Map<String, Object> adminSettings(String path, Map<String, Object> settings, String alias) {
            Map<String, String> strings = new HashMap<>();
            settings.forEach((name, value) -> strings.put(name, (String) value));
            return READ.computeIfAbsent(path, ignored -> new MirrorMakerConfig(strings)).clientConfig(alias).adminConfig();
        }
    }
}
