package securemirror.config;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;

/**
 * Kafka's own config classes resolving references through {@link HadoopCredentialConfigProvider}
 * (tests/unit/profile/test_credstores_jvm.py): args STORE ALIAS JAAS_ALIAS MISSING_ALIAS. An AdminClientConfig with
 * the truststore password {@code ${jceks:ALIAS}} and a JAAS line whose password is {@code ${jceks:JAAS_ALIAS}};
 * then one whose alias is missing. Prints, tab-separated: {@code truststore BASE64}, {@code jaas BASE64},
 * {@code missing MESSAGE} (the ConfigException's) or {@code missing resolved} when Kafka did not refuse it.
 */
public final class CredentialProviderCheck {
    private CredentialProviderCheck() {
    }

    public static void main(String[] args) {
        String store = args[0];
        AdminClientConfig config = new AdminClientConfig(settings(store, args[1], args[2]));
        System.out.println("truststore\t" + base64(config.getPassword(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG).value()));
        System.out.println("jaas\t" + base64(config.getPassword(SaslConfigs.SASL_JAAS_CONFIG).value()));
        try {
            new AdminClientConfig(settings(store, args[3], args[2]));
            System.out.println("missing\tresolved");
        } catch (ConfigException e) {
            System.out.println("missing\t" + e.getMessage());
        }
    }

    private static Map<String, Object> settings(String store, String alias, String jaasAlias) {
        Map<String, Object> settings = new HashMap<>();
        settings.put("bootstrap.servers", "kafka.source.test:9093");
        settings.put("security.protocol", "SASL_SSL");
        settings.put("sasl.mechanism", "PLAIN");
        settings.put("config.providers", "jceks");
        settings.put("config.providers.jceks.class", HadoopCredentialConfigProvider.class.getName());
        settings.put("config.providers.jceks.param.path", store);
        settings.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, "${jceks:" + alias + "}");
        settings.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"mirror\" password=\"${jceks:" + jaasAlias + "}\";");
        return settings;
    }

    private static String base64(String value) {
        return Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
    }
}
