package securemirror.source;

import java.util.HashMap;
import java.util.Map;

/**
 * Compiled with jvm/sink's SourceSettings (tests/unit/test_source_fetch_size.py). Each argument is a case,
 * {@code partitions[:setting=value,...]}: the source's options are {@code subscribePattern} and the settings as
 * {@code kafka.*} options ({@code mirror.*} as they are); prints, one line a case, the
 * {@code max.partition.fetch.bytes} a task of that many partitions gets, whether the consumer's other settings are the
 * options' own, and its {@code fetch.max.bytes} ({@code -} when unset).
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
                    options.put(kv[0].startsWith("mirror.") ? kv[0] : "kafka." + kv[0], kv[1]);
                }
            }
            SourceSettings settings = SourceSettings.of(options);
            Map<String, Object> consumer = settings.consumerSettings(Integer.parseInt(parts[0]));
            Map<String, Object> others = new HashMap<>(consumer);
            others.remove(SourceSettings.PER_PARTITION);
            Map<String, Object> expected = new HashMap<>(settings.consumer);
            expected.remove(SourceSettings.PER_PARTITION);
            if (!settings.consumer.containsKey(SourceSettings.FETCH_MAX)) {
                others.remove(SourceSettings.FETCH_MAX);  // sized for a declared link, printed below
            }
            System.out.println(consumer.get(SourceSettings.PER_PARTITION) + " " + others.equals(expected) + " "
                               + consumer.getOrDefault(SourceSettings.FETCH_MAX, "-"));
        }
    }
}
