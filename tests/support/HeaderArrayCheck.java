package securemirror.source;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.TimestampType;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Compiled with jvm/sink's HeaderArray and run against pyspark's jars and the job's kafka-clients
 * (tests/unit/test_header_array.py). For records with random headers (seeded by the first argument; keys ASCII,
 * multi-byte UTF-8 and empty, of many lengths; values null, empty or random bytes; up to 70 headers, past one word of
 * null bits), the judge is Spark's own projection of the Kafka row's headers column: it turns the generic form (a
 * row per header, as Spark's Kafka source builds it) into Spark's binary form, and HeaderArray's array must equal
 * it byte for byte. Each array is also read back through Spark's UnsafeArrayData. The same headers are also written
 * into a record batch and parsed back by the Kafka client itself, the form its consumer hands them over in (each key
 * still the record's bytes until asked for), and HeaderArray must give the same bytes from those. Prints one line per
 * finding and a summary.
 */
public final class HeaderArrayCheck {
    private static final String[] KEYS = {"bench", "seq", "created-ms", "", "ключ", "キー", "k\u0000", "x".repeat(9)};

    public static void main(String[] args) {
        Random random = new Random(Long.parseLong(args[0]));
        int records = Integer.parseInt(args[1]);
        StructType header = new StructType().add("key", DataTypes.StringType).add("value", DataTypes.BinaryType);
        StructType schema = new StructType().add("headers", DataTypes.createArrayType(header));
        UnsafeProjection spark = UnsafeProjection.create(schema);
        HeaderArray ours = new HeaderArray();
        int equal = 0;
        int headers = 0;
        for (int r = 0; r < records; r++) {
            Header[] each = headers(random, r);
            headers += each.length;
            Object[] rows = new Object[each.length];
            for (int i = 0; i < each.length; i++) {
                rows[i] = new GenericInternalRow(new Object[] {UTF8String.fromString(each[i].key()), each[i].value()});
            }
            UnsafeRow projected = spark.apply(new GenericInternalRow(new Object[] {new GenericArrayData(rows)}));
            UnsafeArrayData expected = projected.getArray(0);
            UnsafeArrayData got = ours.of(each);
            if (!Arrays.equals(bytes(expected), bytes(got))) {
                System.out.println("differs at record " + r + " with " + each.length + " headers");
                continue;
            }
            String readBack = readBack(got, each);
            if (readBack != null) {
                System.out.println("reads back wrong at record " + r + ": " + readBack);
                continue;
            }
            if (!Arrays.equals(bytes(expected), bytes(ours.of(parsed(each))))) {
                System.out.println("differs at record " + r + " as the client parsed it");
                continue;
            }
            equal++;
        }
        System.out.println("records " + records + ", headers " + headers + ", equal " + equal);
    }

    private static Header[] headers(Random random, int record) {
        int count = record == 0 ? 0 : record == 1 ? 70 : random.nextInt(6);
        Header[] out = new Header[count];
        for (int i = 0; i < count; i++) {
            String key = random.nextInt(4) == 0
                ? "k" + "é".repeat(random.nextInt(12)) + i
                : KEYS[random.nextInt(KEYS.length)];
            int kind = random.nextInt(5);
            byte[] value = kind == 0 ? null : kind == 1 ? new byte[0] : new byte[random.nextInt(40)];
            if (value != null) {
                random.nextBytes(value);
            }
            out[i] = new RecordHeader(key, value);
        }
        return out;
    }

    /** The headers as Kafka's consumer gets them: written into a record batch and parsed back by the client. */
    private static Header[] parsed(Header[] headers) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024), Compression.NONE,
            TimestampType.CREATE_TIME, 0L);
        builder.append(0L, (byte[]) null, (byte[]) null, headers);
        Record record = builder.build().records().iterator().next();
        return record.headers();
    }

    private static byte[] bytes(UnsafeArrayData array) {
        byte[] out = new byte[array.getSizeInBytes()];
        Platform.copyMemory(array.getBaseObject(), array.getBaseOffset(), out, Platform.BYTE_ARRAY_OFFSET, out.length);
        return out;
    }

    /** null when every header reads back as it went in; else what differs. */
    private static String readBack(UnsafeArrayData array, Header[] headers) {
        if (array.numElements() != headers.length) {
            return array.numElements() + " elements for " + headers.length + " headers";
        }
        for (int i = 0; i < headers.length; i++) {
            InternalRow row = array.getStruct(i, 2);
            String key = row.getUTF8String(0).toString();
            byte[] value = row.isNullAt(1) ? null : row.getBinary(1);
            if (!key.equals(headers[i].key()) || !Arrays.equals(value, headers[i].value())) {
                return "header " + i + " reads " + Arrays.toString(key.getBytes(StandardCharsets.UTF_8));
            }
        }
        return null;
    }
}
