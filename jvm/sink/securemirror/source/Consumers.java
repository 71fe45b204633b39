package securemirror.source;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import securemirror.sink.TokenLogin;

/**
 * The source consumers of one executor: one per task slot, kept between a slot's tasks so a batch costs no new
 * connection, TLS handshake, Kerberos ticket or SASL exchange. At most one idle consumer per slot (and login), so
 * connections to each broker are bounded by the query's tasks, not its partitions.
 */
final class Consumers {
    private record Key(Map<String, Object> settings, int slot) {
    }

    private static final Map<Key, KafkaConsumer<byte[], byte[]>> IDLE = new ConcurrentHashMap<>();
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Consumers.class);

    private Consumers() {
    }

    static KafkaConsumer<byte[], byte[]> take(Map<String, Object> settings, int slot) {
        retireOlderLogins(settings);
        retireOtherSettings(settings, slot);
        KafkaConsumer<byte[], byte[]> idle = IDLE.remove(new Key(settings, slot));
        if (idle != null) {
            idle.resume(idle.paused());
            return idle;
        }
        return new KafkaConsumer<>(new HashMap<>(settings), new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** A consumer whose task read all its ranges waits for the slot's next task. */
    static void giveBack(Map<String, Object> settings, int slot, KafkaConsumer<byte[], byte[]> consumer) {
        KafkaConsumer<byte[], byte[]> before = IDLE.put(new Key(settings, slot), consumer);
        if (before != null && before != consumer) {
            before.close(Duration.ZERO);
        }
    }

    /** Close the slot's idle consumer whose fetch size was for another number of partitions (partitions or topics
     * were added to the slot, {@link SourceSettings#consumerSettings}), so a slot keeps at most one per source. */
    private static void retireOtherSettings(Map<String, Object> current, int slot) {
        IDLE.entrySet().removeIf(entry -> {
            Map<String, Object> idle = entry.getKey().settings();
            if (entry.getKey().slot() == slot && !idle.equals(current)
                    && withoutFetchSize(idle).equals(withoutFetchSize(current))) {
                entry.getValue().close(Duration.ofSeconds(5));
                return true;
            }
            return false;
        });
    }

    private static Map<String, Object> withoutFetchSize(Map<String, Object> settings) {
        Map<String, Object> out = new HashMap<>(settings);
        out.remove(SourceSettings.PER_PARTITION);
        return out;
    }

    /** Close idle consumers logged in with an older delegation token (as the sink's {@code Producers} does). */
    private static void retireOlderLogins(Map<String, Object> current) {
        int before = IDLE.size();
        IDLE.entrySet().removeIf(entry -> TokenLogin.sameButLogin(entry.getKey().settings(), current)
            && TokenLogin.retire("consumer", () -> entry.getValue().close(Duration.ofSeconds(5))));
        if (IDLE.size() < before) {
            LOG.info("secure-mirror source: closed {} consumer(s) logged in with an older delegation token",
                     before - IDLE.size());
        }
    }
}
