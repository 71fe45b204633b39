package securemirror;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Gives each mirrored record its source record's timestamp. Spark's Kafka sink has no timestamp column, so
 * the mirror job carries the source timestamp (epoch milliseconds, decimal) in the header
 * {@value #HEADER}; this interceptor, set on the target producer with interceptor.classes, moves it into
 * the record's timestamp and drops the header. Records without the header pass unchanged.
 */
public class SourceTimestampInterceptor implements ProducerInterceptor<byte[], byte[]> {
    public static final String HEADER = "secure-mirror.source-timestamp";

    @Override
    public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
        Header carried = record.headers().lastHeader(HEADER);
        if (carried == null || carried.value() == null) {
            return record;
        }
        RecordHeaders rest = new RecordHeaders();
        for (Header header : record.headers()) {
            if (!HEADER.equals(header.key())) {
                rest.add(header);
            }
        }
        long timestamp = Long.parseLong(new String(carried.value(), StandardCharsets.US_ASCII));
        return new ProducerRecord<>(record.topic(), record.partition(), timestamp, record.key(), record.value(), rest);
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
    }

    @Override
    public void close() {
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }
}
