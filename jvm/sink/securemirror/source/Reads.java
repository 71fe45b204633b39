package securemirror.source;

import java.time.Duration;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.unsafe.types.UTF8String;

/** What the micro-batch and the continuous readers share: a record as a row, and a poll that judges lost records. */
final class Reads {
    /** How a read that lacks records it needs fails (the job's exit sentence looks for these words). */
    static final String LOST = "source records the checkpoint expects are gone, data may have been lost "
        + "(failOnDataLoss): ";

    private Reads() {
    }

    /** A record in the row form of Spark's Kafka source. */
    static InternalRow row(ConsumerRecord<byte[], byte[]> record, UTF8String topic, SourceSettings settings,
                           HeaderArray headers) {
        return new GenericInternalRow(new Object[] {
            record.key(), record.value(), topic, record.partition(), record.offset(), record.timestamp() * 1000L,
            record.timestampType().id, settings.includeHeaders ? headers.of(record.headers().toArray()) : null});
    }

    /**
     * One poll. Records the reader needs that the source no longer has fail the query (failOnDataLoss, with the words
     * the job's exit sentence looks for), or are stepped over to the earliest the source has.
     */
    static ConsumerRecords<byte[], byte[]> poll(KafkaConsumer<byte[], byte[]> consumer, Duration wait,
                                                SourceSettings settings) {
        try {
            return consumer.poll(wait);
        } catch (OffsetOutOfRangeException gone) {
            if (settings.failOnDataLoss) {
                throw new IllegalStateException(LOST + gone.offsetOutOfRangePartitions() + " are before the earliest "
                    + "offsets the source still has", gone);
            }
            consumer.seekToBeginning(gone.partitions());
            return ConsumerRecords.empty();
        }
    }
}
