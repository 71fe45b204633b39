package securemirror.config;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.alias.CredentialProvider;
import org.apache.hadoop.security.alias.CredentialProviderFactory;
import org.apache.kafka.common.config.ConfigData;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.provider.ConfigProvider;

/**
 * A Kafka config provider (KIP-297) over Hadoop's credential providers: a Java client, MirrorMaker 2 or the mirror's
 * job resolves a secret from a {@code jceks://} store through Hadoop's own {@link CredentialProviderFactory}, as
 * Hive, Ranger and Spark read them, and no rendered file holds the value.
 *
 * <p>Kafka's variables are {@code ${provider:[path:]key}}, split at the first two colons, and a provider URI has
 * colons of its own ({@code jceks://hdfs@nn:8020/...}): the store is therefore the provider's parameter, and the
 * variable names only the alias:
 * <pre>
 * config.providers=jceks
 * config.providers.jceks.class=securemirror.config.HadoopCredentialConfigProvider
 * config.providers.jceks.param.path=jceks://file/etc/secure-mirror/mirror.jceks
 * ssl.truststore.password=${jceks:source-truststore}
 * </pre>
 * {@code path} is what {@code hadoop.security.credential.provider.path} takes, a comma-separated list of stores read
 * in order (the first holding the alias answers); one provider name per store keeps two sides' aliases apart. Other
 * parameters are Hadoop settings, e.g. {@code hadoop.security.credstore.java-keystore-provider.password-file}; the
 * keystore password is otherwise Hadoop's: {@code HADOOP_CREDSTORE_PASSWORD} in the JVM's environment, else "none".
 *
 * <p>An alias the stores do not hold, or a store that cannot be opened, is a {@link ConfigException} naming the store
 * and the alias when the client is configured, never a value left unresolved. Values never appear in a message.
 * With Kafka 3.8 and later, a JVM that sets {@code org.apache.kafka.automatic.config.providers} must list this class.
 */
public final class HadoopCredentialConfigProvider implements ConfigProvider {
    /** The provider parameter naming the store(s): {@code config.providers.<name>.param.path}. */
    public static final String PATH = "path";

    private String stores;
    private Configuration conf;

    @Override
    public void configure(Map<String, ?> configs) {
        Object path = configs.get(PATH);
        if (!(path instanceof String) || ((String) path).isBlank()) {
            throw new ConfigException("HadoopCredentialConfigProvider needs the store: set config.providers.<name>.param."
                    + PATH + " to a Hadoop credential provider URI, e.g. jceks://file/etc/secure-mirror/mirror.jceks");
        }
        stores = ((String) path).trim();
        conf = new Configuration(); // core-site.xml from the class path: HDFS, Kerberos, a password file
        for (Map.Entry<String, ?> entry : configs.entrySet()) {
            if (!PATH.equals(entry.getKey()) && entry.getValue() instanceof String) {
                conf.set(entry.getKey(), (String) entry.getValue());
            }
        }
        conf.set(CredentialProviderFactory.CREDENTIAL_PROVIDER_PATH, stores);
    }

    /** Nothing: a store is read alias by alias, never listed out. */
    @Override
    public ConfigData get(String path) {
        return new ConfigData(Map.of());
    }

    @Override
    public ConfigData get(String path, Set<String> aliases) {
        if (path != null && !path.isEmpty()) {
            throw new ConfigException("a HadoopCredentialConfigProvider variable names an alias only, ${<provider>:"
                    + "<alias>}; the store is the provider's param." + PATH + " (" + stores + "), not " + path);
        }
        List<CredentialProvider> providers = providers();
        Map<String, String> values = new HashMap<>();
        for (String alias : aliases) {
            values.put(alias, value(providers, alias));
        }
        return new ConfigData(values);
    }

    private List<CredentialProvider> providers() {
        try {
            return CredentialProviderFactory.getProviders(conf);
        } catch (IOException e) {
            throw new ConfigException("cannot open the credential store " + stores + ": " + e.getMessage());
        }
    }

    private String value(List<CredentialProvider> providers, String alias) {
        for (CredentialProvider provider : providers) {
            try {
                CredentialProvider.CredentialEntry entry = provider.getCredentialEntry(alias);
                if (entry != null && entry.getCredential() != null) {
                    return String.valueOf(entry.getCredential());
                }
            } catch (IOException e) {
                throw new ConfigException("cannot read the alias " + alias + " from the credential store " + provider
                        + " (check its keystore password: HADOOP_CREDSTORE_PASSWORD, else Hadoop's default 'none'): "
                        + e.getMessage());
            }
        }
        throw new ConfigException("the credential store " + stores + " has no alias " + alias + "; add it with "
                + "`hadoop credential create " + alias + " -provider " + stores + "`, or fix the alias");
    }

    @Override
    public void close() {
    }
}
