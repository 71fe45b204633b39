import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.connect.mirror.Heartbeat;

/**
 * Kafka's own MirrorMaker 2 heartbeat records, for tests/unit/run/test_heartbeats_jvm.py. Reads tab-separated lines on
 * stdin, aliases hex-encoded (UTF-8), and answers one line each:
 * {@code encode <source hex> <target hex> <timestamp>} -> {@code <key hex> <value hex>} from
 * {@code Heartbeat.recordKey()/recordValue()} (package-private: reached by reflection);
 * {@code decode <key hex> <value hex>} -> {@code <source hex> <target hex> <timestamp>} from
 * {@code Heartbeat.deserializeRecord}, or {@code error <exception class>}.
 */
public class HeartbeatBytes {
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        Method key = Heartbeat.class.getDeclaredMethod("recordKey");
        Method value = Heartbeat.class.getDeclaredMethod("recordValue");
        key.setAccessible(true);
        value.setAccessible(true);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            if (f[0].equals("encode")) {
                Heartbeat beat = new Heartbeat(text(f[1]), text(f[2]), Long.parseLong(f[3]));
                System.out.println(HEX.formatHex((byte[]) key.invoke(beat)) + "\t"
                    + HEX.formatHex((byte[]) value.invoke(beat)));
            } else {
                System.out.println(decode(HEX.parseHex(f[1]), HEX.parseHex(f[2])));
            }
        }
    }

    private static String decode(byte[] key, byte[] value) {
        try {
            Heartbeat beat = Heartbeat.deserializeRecord(new ConsumerRecord<>("heartbeats", 0, 0L, key, value));
            return hex(beat.sourceClusterAlias()) + "\t" + hex(beat.targetClusterAlias()) + "\t" + beat.timestamp();
        } catch (RuntimeException error) {
            return "error " + error.getClass().getSimpleName();
        }
    }

    private static String text(String hex) {
        return new String(HEX.parseHex(hex), StandardCharsets.UTF_8);
    }

    private static String hex(String text) {
        return HEX.formatHex(text.getBytes(StandardCharsets.UTF_8));
    }
}
