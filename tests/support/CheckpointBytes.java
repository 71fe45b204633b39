import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.Checkpoint;
import org.apache.kafka.connect.mirror.formatters.CheckpointFormatter;

/**
 * Kafka's own MirrorMaker 2 checkpoint records, for tests/unit/run/groups/test_checkpoints.py. Reads tab-separated
 * lines on stdin, strings hex-encoded (UTF-8), and answers one line each:
 * {@code encode <group> <topic> <partition> <upstream> <downstream> <metadata>} -> {@code <key hex> <value hex>} from
 * {@code Checkpoint.recordKey()/recordValue()} (package-private: reached by reflection);
 * {@code decode <key hex> <value hex>} -> {@code <group hex> <topic hex> <partition> <upstream> <downstream>
 * <metadata hex> <CheckpointFormatter's line, hex>} from {@code Checkpoint.deserializeRecord} and
 * {@code CheckpointFormatter.writeTo}, or {@code error <message>}.
 */
public class CheckpointBytes {
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        Method key = Checkpoint.class.getDeclaredMethod("recordKey");
        Method value = Checkpoint.class.getDeclaredMethod("recordValue");
        key.setAccessible(true);
        value.setAccessible(true);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            if (f[0].equals("encode")) {
                Checkpoint c = new Checkpoint(text(f[1]), new TopicPartition(text(f[2]), Integer.parseInt(f[3])),
                    Long.parseLong(f[4]), Long.parseLong(f[5]), text(f[6]));
                System.out.println(HEX.formatHex((byte[]) key.invoke(c)) + "\t" + HEX.formatHex((byte[]) value.invoke(c)));
            } else {
                System.out.println(decode(HEX.parseHex(f[1]), HEX.parseHex(f[2])));
            }
        }
    }

    private static String decode(byte[] key, byte[] value) {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("src.checkpoints.internal", 0, 0L, key, value);
        try {
            Checkpoint c = Checkpoint.deserializeRecord(record);
            ByteArrayOutputStream printed = new ByteArrayOutputStream();
            try (PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
                new CheckpointFormatter().writeTo(record, out);
            }
            return String.join("\t", hex(c.consumerGroupId()), hex(c.topicPartition().topic()),
                Integer.toString(c.topicPartition().partition()), Long.toString(c.upstreamOffset()),
                Long.toString(c.downstreamOffset()), hex(c.metadata()), HEX.formatHex(printed.toByteArray()));
        } catch (RuntimeException e) {
            return "error\t" + e.getClass().getSimpleName();
        }
    }

    private static String text(String hex) {
        return new String(HEX.parseHex(hex), StandardCharsets.UTF_8);
    }

    private static String hex(String text) {
        return HEX.formatHex(text.getBytes(StandardCharsets.UTF_8));
    }
}
