package io.stasis.network.linux.dns;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Builds a message front to back. Names are compressed: a name, or its tail, written before is
 * written again as a pointer, which keeps answers with many records to one name small.
 */
final class DnsWriter {
    private static final int MAX_POINTER = 0x3fff;

    private byte[] bytes = new byte[512];
    private int size;
    /** Where each name (and each tail of one) was first written, by its exact text: compression keeps case. */
    private final Map<String, Integer> written = new HashMap<>();

    void u8(int value) {
        ensure(1);
        bytes[size++] = (byte) value;
    }

    void u16(int value) {
        u8(value >> 8);
        u8(value);
    }

    void u32(long value) {
        u16((int) (value >> 16));
        u16((int) value);
    }

    void bytes(byte[] value) {
        ensure(value.length);
        System.arraycopy(value, 0, bytes, size, value.length);
        size += value.length;
    }

    void name(String name) {
        String rest = name;
        while (!rest.isEmpty()) {
            Integer earlier = written.get(rest);
            if (earlier != null) {
                u16(0xc000 | earlier);
                return;
            }
            if (size <= MAX_POINTER) written.put(rest, size);
            int dot = rest.indexOf('.');
            String label = dot < 0 ? rest : rest.substring(0, dot);
            u8(label.length());
            for (char c : label.toCharArray()) u8(c);
            rest = dot < 0 ? "" : rest.substring(dot + 1);
        }
        u8(0);
    }

    int position() {
        return size;
    }

    /** Fills in a 16-bit number written earlier as a placeholder (a record's data length). */
    void u16At(int at, int value) {
        bytes[at] = (byte) (value >> 8);
        bytes[at + 1] = (byte) value;
    }

    byte[] toByteArray() {
        return Arrays.copyOf(bytes, size);
    }

    private void ensure(int more) {
        if (size + more > bytes.length) bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + more));
    }
}
