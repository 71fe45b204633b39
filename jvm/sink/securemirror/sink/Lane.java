package securemirror.sink;

import java.io.IOException;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One source topic-partition in a task: its target topic and partition rule, its figures, its offset map segments
 * (with an offset map topic, {@link SinkSettings#offsetMapTopic}, when its partition is kept: {@link OffsetMap}), and
 * the producer and starting position its {@link Delivery} gave it when it opened the lane. It is the callback of every
 * record it sends: the first failure is kept, and acknowledged offsets go to its map.
 */
final class Lane implements Callback {
    final UTF8String topicText;
    final String topic;
    final int partition;
    final String target;
    final boolean kept;
    final Figures figures;
    final OffsetMap map;  // null unless the partition is kept and the sink keeps an offset map
    private final String mapTopic;
    /** Where the lane's records go: set by {@link Delivery#open}. */
    KafkaProducer<byte[], byte[]> producer;
    /** The next source offset the target already holds (exactly_once), or -1: rows before it are skipped. */
    long committed = -1;
    volatile Exception failure;

    Lane(SinkSettings settings, UTF8String topicText, int partition) {
        this.topicText = topicText.clone();
        this.topic = topicText.toString();
        this.partition = partition;
        this.target = settings.targetTopic(topic);
        this.kept = settings.kept.contains(topic);
        this.figures = new Figures(topic, partition, target, kept);
        this.mapTopic = settings.offsetMapTopic;
        this.map = kept && mapTopic != null ? new OffsetMap() : null;
    }

    /** A lane's key among the task's lanes (and in {@link TaskTransaction}'s positions). */
    static String key(String topic, int partition) {
        return topic + "\0" + partition;
    }

    /** The next source offset after what the lane wrote in this task, or -1 when it wrote nothing. */
    long next() {
        return figures.records > 0 ? figures.lastOffset + 1 : -1;
    }

    @Override
    public void onCompletion(RecordMetadata metadata, Exception exception) {
        if (exception != null) {
            if (failure == null) {
                failure = exception;
            }
        } else if (map != null) {
            map.acknowledged(metadata.hasOffset() ? metadata.offset() : -1);
        }
    }

    /** Sends the lane's offset map segments (after its records are acknowledged); how many. */
    int sendMap(KafkaProducer<byte[], byte[]> to, Callback callback) {
        return map == null ? 0 : map.send(to, mapTopic, topic, partition, target, callback);
    }

    /** Fails with the lane's first failed send, if any. */
    void check() throws IOException {
        if (failure != null) {
            throw new IOException("writing " + topic + "-" + partition + " to " + target + " failed: " + failure,
                                  failure);
        }
    }
}
