// Group sync's reader of many consumer groups' committed offsets, through Kafka's Java Admin: it finds the groups'
// coordinators in one FindCoordinator request (v4, KIP-699) and asks each coordinator once for all of its groups
// (OffsetFetch v8, KIP-709). librdkafka, which the other readers use, sends one FindCoordinator and one OffsetFetch
// per group: 10,000 groups made 20,000 requests a pass.
//
// Run (compiled by secure_mirror/java_tools.py, or from the wheel's tools jar):
//   java -Djava.security.krb5.conf=KRB5 -cp CLASSPATH GroupOffsets TIMEOUT_MS < requests
// The first line on stdin is the client.properties text in Base64 (through the pipe, so no secret is on an argument
// list or in a file). Each line after it is one request: the group ids, each in Base64, tab-separated. Its answer
// says only the groups whose offsets changed since this JVM last said them (a sync pass asks every group of the
// estate, most of them idle: an unchanged one costs no line, and no parsing on the reader's side), then "end":
//   o GROUP TOPIC PARTITION OFFSET METADATA    (each offset of a changed group; GROUP, TOPIC, METADATA in Base64)
//   c GROUP                                    (a changed group with no offset committed now)
//   e GROUP ERROR MESSAGE                      (ERROR: Kafka's error name, else the exception's class)
// A group not named is as this JVM last said it (the reader keeps what it was told); one that failed is said in
// full at its next answer.
// A request the Admin could not ask at all answers "f ERROR MESSAGE" and "end". The JVM ends when stdin does.
// The groups are asked CHUNK at a time, every chunk before any answer is read.
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;

public class GroupOffsets {
    private static final Base64.Encoder ENCODE = Base64.getEncoder();
    private static final Base64.Decoder DECODE = Base64.getDecoder();
    // Groups per Admin call (each call still one OffsetFetch per coordinator): reading the answer of one call over
    // 10,000 groups took the Admin client seconds (its per-group look-ups in the batched answer), in chunks of 500
    // the same groups are 20 requests a coordinator and a fraction of that time.
    private static final int CHUNK = 500;
    // Each group's lines as this JVM last said them (its reader keeps them): a group whose lines are the same is not
    // said again. They follow the order of the Admin's answer; another order is said again, which costs a line, no more.
    private static final Map<String, String> SAID = new HashMap<>();

    public static void main(String[] args) throws Exception {
        int timeout = Integer.parseInt(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String settings = in.readLine();
        if (settings == null) return;
        Properties properties = new Properties();
        try (InputStream stream = new ByteArrayInputStream(DECODE.decode(settings))) {
            properties.load(stream);
        }
        properties.put("request.timeout.ms", String.valueOf(timeout));
        properties.put("default.api.timeout.ms", String.valueOf(timeout));
        try (Admin admin = Admin.create(properties)) {
            String line;
            while ((line = in.readLine()) != null) {
                answer(admin, line, timeout, out);
                out.println("end");
                out.flush();
            }
        }
    }

    private static void answer(Admin admin, String line, int timeout, PrintStream out) {
        List<Map<String, ListConsumerGroupOffsetsSpec>> chunks = new ArrayList<>();
        for (String group : line.split("\t")) {
            if (group.isEmpty()) continue;
            if (chunks.isEmpty() || chunks.get(chunks.size() - 1).size() == CHUNK) chunks.add(new LinkedHashMap<>());
            chunks.get(chunks.size() - 1).put(new String(DECODE.decode(group), StandardCharsets.UTF_8),
                new ListConsumerGroupOffsetsSpec());
        }
        List<ListConsumerGroupOffsetsResult> results = new ArrayList<>();
        try {  // every chunk asked before any answer is read
            for (Map<String, ListConsumerGroupOffsetsSpec> chunk : chunks) {
                results.add(admin.listConsumerGroupOffsets(chunk, new ListConsumerGroupOffsetsOptions().timeoutMs(timeout)));
            }
        } catch (RuntimeException e) {
            out.println("f\t" + failure(e));
            return;
        }
        for (int i = 0; i < chunks.size(); i++) answer(chunks.get(i), results.get(i), timeout, out);
    }

    private static void answer(
            Map<String, ListConsumerGroupOffsetsSpec> specs, ListConsumerGroupOffsetsResult result, int timeout,
            PrintStream out) {
        for (String group : specs.keySet()) {
            String named = encoded(group);
            try {
                Map<TopicPartition, OffsetAndMetadata> offsets =
                    result.partitionsToOffsetAndMetadata(group).get(timeout, TimeUnit.MILLISECONDS);
                StringBuilder lines = new StringBuilder();
                for (Map.Entry<TopicPartition, OffsetAndMetadata> entry : offsets.entrySet()) {
                    OffsetAndMetadata offset = entry.getValue();
                    if (offset == null) continue;  // no offset committed for that partition
                    TopicPartition tp = entry.getKey();
                    lines.append("o\t").append(named).append('\t').append(encoded(tp.topic())).append('\t')
                        .append(tp.partition()).append('\t').append(offset.offset()).append('\t')
                        .append(encoded(offset.metadata() == null ? "" : offset.metadata())).append('\n');
                }
                String said = lines.length() == 0 ? "c\t" + named + "\n" : lines.toString();
                if (!said.equals(SAID.put(group, said))) out.print(said);  // unchanged: not said again
            } catch (ExecutionException e) {
                failed(group, named, e.getCause() == null ? e : e.getCause(), out);
            } catch (Exception e) {
                failed(group, named, e, out);
            }
        }
    }

    private static void failed(String group, String named, Throwable e, PrintStream out) {
        SAID.remove(group);  // said in full at its next answer
        out.println("e\t" + named + "\t" + failure(e));
    }

    private static String encoded(String text) {
        return ENCODE.encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    /** Kafka's error name for its own exceptions (GROUP_AUTHORIZATION_FAILED), else the class; and the message. */
    private static String failure(Throwable e) {
        String name = e instanceof ApiException ? Errors.forException(e).name() : e.getClass().getSimpleName();
        String message = String.valueOf(e.getMessage()).replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
        return name + "\t" + message;
    }
}
