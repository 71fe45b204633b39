package securemirror.source;

import java.util.HashMap;
import java.util.Map;

/**
 * Compiled with jvm/sink's SourceSettings (tests/unit/test_source_fetch_size.py). Each argument is a case,
 * {@code partitions[:setting=value,...]}: the source's options are {@code subscribePattern} and the settings as
 * {@code kafka.*} options; prints, one line a case, the {@code max.partition.fetch.bytes} a task of that many
 * partitions gets, then whether the consumer's other settings are the options' own.
 */
public final class FetchSizeCheck {
    public static void main(String[] args) {
        for (String arg : args) {
            String[] parts = arg.split(":", 2);
            Map<String, String> options = new HashMap<>();
            options.put("subscribePattern", "t.*");
            options.put("kafka.bootstrap.servers", "localhost:1");
            if (parts.length > 1) {
                for (String pair : parts[1].split(",")) {
                    String[] kv = pair.split("=", 2);
                    options.put("kafka." + kv[0], kv[1]);
                }
            }
            SourceSettings settings = SourceSettings.of(options);
            Map<String, Object> consumer = settings.consumerSettings(Integer.parseInt(parts[0]));
            Map<String, Object> others = new HashMap<>(consumer);
            others.remove(SourceSettings.PER_PARTITION);
            Map<String, Object> expected = new HashMap<>(settings.consumer);
            expected.remove(SourceSettings.PER_PARTITION);
            System.out.println(consumer.get(SourceSettings.PER_PARTITION) + " " + others.equals(expected));
        }
    }
}
