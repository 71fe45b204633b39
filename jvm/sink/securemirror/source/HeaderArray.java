package securemirror.source;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.header.Header;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.unsafe.Platform;

/**
 * A record's headers as the Kafka row's {@code headers} column, {@code array<struct<key: string, value: binary>>},
 * in the binary form Spark's own projection gives that type (an {@link UnsafeArrayData} whose elements are
 * two-field UnsafeRows), written in one pass into one array. Spark's projection copies an array in that form whole,
 * where it would walk a generic array's rows field by field; and the row holds one object for its headers instead of
 * a list, a row, a string and two arrays per header.
 * <p>
 * The layout, as Spark's {@code UnsafeArrayData} and {@code UnsafeRow} document it (in 8-byte words, each part
 * padded with zeros to a whole word): the element count; the elements' null bits; one word per element, its offset
 * from the array's start (high 32 bits) and its size; then each element. An element: its two fields' null bits, one
 * word per field (offset from the element's start and size, or 0 with the null bit set for a null value), then the
 * key's bytes and the value's bytes. tests/support/HeaderArrayCheck.java holds this against Spark's projection byte for byte.
 * <p>
 * A topic's records carry the same few header keys over and over, so each key's UTF-8 is kept ({@value #KEYS_KEPT}
 * keys at most, then new keys are encoded each time) rather than encoded for every record.
 */
final class HeaderArray {
    static final int KEYS_KEPT = 1024;
    private static final int WORD = 8;
    private static final int ELEMENT_FIXED = 3 * WORD;  // an element's null bits and its two fields' words
    private final Map<String, byte[]> keys = new HashMap<>();

    UnsafeArrayData of(Header[] headers) {
        int count = headers.length;
        byte[][] parts = new byte[2 * count][];
        long size = headerWords(count) + (long) WORD * count;
        for (int i = 0; i < count; i++) {
            byte[] key = utf8(headers[i].key());
            byte[] value = headers[i].value();
            parts[2 * i] = key;
            parts[2 * i + 1] = value;
            size += ELEMENT_FIXED + padded(key.length) + (value == null ? 0 : padded(value.length));
        }
        if (size > Integer.MAX_VALUE) {
            throw new IllegalStateException("a record's headers take " + size + " bytes, more than a Spark row holds");
        }
        byte[] out = new byte[(int) size];
        long base = Platform.BYTE_ARRAY_OFFSET;
        Platform.putLong(out, base, count);
        long slots = base + headerWords(count);
        int cursor = headerWords(count) + WORD * count;  // from the array's start
        for (int i = 0; i < count; i++) {
            int element = cursor;
            byte[] key = parts[2 * i];
            byte[] value = parts[2 * i + 1];
            int offset = ELEMENT_FIXED;  // from the element's start
            Platform.putLong(out, base + element + WORD, field(offset, key.length));
            Platform.copyMemory(key, base, out, base + element + offset, key.length);
            offset += padded(key.length);
            if (value == null) {
                Platform.putLong(out, base + element, 1L << 1);  // the value's null bit; its word stays 0
            } else {
                Platform.putLong(out, base + element + 2 * WORD, field(offset, value.length));
                Platform.copyMemory(value, base, out, base + element + offset, value.length);
                offset += padded(value.length);
            }
            Platform.putLong(out, slots + (long) WORD * i, field(element, offset));
            cursor = element + offset;
        }
        UnsafeArrayData array = new UnsafeArrayData();
        array.pointTo(out, base, out.length);
        return array;
    }

    private byte[] utf8(String key) {
        byte[] known = keys.get(key);
        if (known == null) {
            known = key.getBytes(StandardCharsets.UTF_8);
            if (keys.size() < KEYS_KEPT) {
                keys.put(key, known);
            }
        }
        return known;
    }

    /** The count word and the null bits of {@code count} elements. */
    private static int headerWords(int count) {
        return WORD + (count + 63) / 64 * WORD;
    }

    private static int padded(int length) {
        return (length + WORD - 1) / WORD * WORD;
    }

    private static long field(int offset, int length) {
        return ((long) offset << 32) | length;
    }
}
