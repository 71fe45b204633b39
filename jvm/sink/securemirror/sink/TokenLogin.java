package securemirror.sink;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;

/**
 * The target's Kafka delegation token as a login, read where Spark's own Kafka connector reads it
 * ({@code KafkaTokenUtil.getTokenJaasParams}): the Hadoop credentials of this process, under the service
 * {@code kafka.server.delegation.token.<cluster id>}, put there by the driver's token manager and replaced on
 * every executor when it obtains a new token. The token's id is the SCRAM user name and its HMAC the password
 * ({@code tokenauth=true}). Neither is ever printed.
 */
public final class TokenLogin {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TokenLogin.class);
    static final String SERVICE_PREFIX = "kafka.server.delegation.token.";
    private static final String MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule";

    private TokenLogin() {
    }

    /** {@code settings} with the token's login in place of the keytab's: a new map whenever the token changes. */
    public static Map<String, Object> apply(Map<String, Object> settings, String cluster, String mechanism) {
        Token<?> token;
        try {
            token = UserGroupInformation.getCurrentUser().getCredentials().getToken(new Text(SERVICE_PREFIX + cluster));
        } catch (java.io.IOException error) {
            throw new IllegalStateException("could not read this process's Hadoop credentials: " + error.getMessage());
        }
        if (token == null) {
            throw new IllegalStateException("no Kafka delegation token for cluster '" + cluster + "' in this process's "
                + "Hadoop credentials: the driver did not obtain one (its log names the reason after 'Failed to get "
                + "token from service: kafka'); pre-flight's kafka.delegation_token check shows whether the brokers "
                + "issue tokens to this identity");
        }
        Map<String, Object> own = new HashMap<>(settings);
        own.put("sasl.mechanism", mechanism);
        own.put("sasl.jaas.config", MODULE + " required tokenauth=true username=" + quoted(token.getIdentifier())
            + " password=" + quoted(token.getPassword()) + ";");
        return own;
    }

    /** A JAAS option value in double quotes, as Kafka's JaasConfig parser reads it back. */
    private static String quoted(byte[] bytes) {
        String text = new String(bytes, StandardCharsets.UTF_8);
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** True when two settings differ only in their login (the same target, an older or newer token). */
    public static boolean sameButLogin(Map<String, Object> one, Map<String, Object> other) {
        Map<String, Object> a = new HashMap<>(one);
        Map<String, Object> b = new HashMap<>(other);
        a.remove("sasl.jaas.config");
        b.remove("sasl.jaas.config");
        return a.equals(b) && !one.equals(other);
    }

    /**
     * Close a client logged in with an older token. Its close may fail (the brokers already refuse the old token on
     * re-authentication: "Failed to close kafka consumer"); that is the retired client's end, not the task's failure.
     */
    public static boolean retire(String what, Runnable close) {
        try {
            close.run();
        } catch (RuntimeException error) {
            Throwable root = error;
            for (int depth = 0; depth < 32 && root.getCause() != null && root.getCause() != root; depth++) {
                root = root.getCause();
            }
            LOG.info("secure-mirror: a {} logged in with an older delegation token closed with an error: {} ({})",
                     what, error.getClass().getSimpleName(), root.getClass().getSimpleName());
        }
        return true;
    }
}
