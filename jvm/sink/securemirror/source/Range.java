package securemirror.source;

import java.io.Serializable;

/** One topic-partition's records in a batch: offsets {@code from} (inclusive) to {@code until} (exclusive). */
record Range(String topic, int partition, long from, long until) implements Serializable {
}
