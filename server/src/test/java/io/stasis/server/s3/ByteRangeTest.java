package io.stasis.server.s3;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class ByteRangeTest {
    @Test
    void readsTheThreeFormsS3Supports() {
        assertThat(ByteRange.of("bytes=0-9", 100)).isEqualTo(new ByteRange.Slice(0, 9, 100));
        assertThat(ByteRange.of("bytes=90-", 100)).isEqualTo(new ByteRange.Slice(90, 99, 100));
        assertThat(ByteRange.of("bytes=-10", 100)).isEqualTo(new ByteRange.Slice(90, 99, 100));
        assertThat(ByteRange.of("bytes=-1000", 100)).isEqualTo(new ByteRange.Slice(0, 99, 100));
        assertThat(ByteRange.of("bytes=50-1000", 100)).isEqualTo(new ByteRange.Slice(50, 99, 100));
        assertThat(ByteRange.of("bytes=0-99999999999999999999999", 100)).isEqualTo(new ByteRange.Slice(0, 99, 100));
        assertThat(((ByteRange.Slice) ByteRange.of("bytes=10-19", 100)).contentRange()).isEqualTo("bytes 10-19/100");
    }

    @Test
    void aStartPastTheEndOrAnEmptySuffixIsUnsatisfiable() {
        assertThat(ByteRange.of("bytes=100-", 100)).isEqualTo(new ByteRange.Unsatisfiable(100));
        assertThat(ByteRange.of("bytes=-0", 100)).isEqualTo(new ByteRange.Unsatisfiable(100));
        assertThat(ByteRange.of("bytes=0-", 0)).isEqualTo(new ByteRange.Unsatisfiable(0));
        assertThat(ByteRange.of("bytes=99999999999999999999-", 100)).isEqualTo(new ByteRange.Unsatisfiable(100));
    }

    @Test
    void whatS3IgnoresAsksForTheWholeObject() {
        for (String header : new String[] {null, "", "bytes=", "bytes=-", "bytes=5-1", "bytes=0-1,5-6", "items=0-1", "bytes=a-b"})
            assertThat(ByteRange.of(header, 100)).as(String.valueOf(header)).isEqualTo(new ByteRange.Whole());
    }

    @Property
    void aSliceIsAlwaysInsideTheObject(@ForAll @LongRange(max = 1L << 40) long size, @ForAll @LongRange(max = 1L << 41) long first,
                                       @ForAll @LongRange(max = 1L << 41) long last) {
        for (String header : new String[] {"bytes=" + first + "-" + last, "bytes=" + first + "-", "bytes=-" + last}) {
            if (ByteRange.of(header, size) instanceof ByteRange.Slice slice) {
                assertThat(slice.first()).isBetween(0L, size - 1);
                assertThat(slice.last()).isBetween(slice.first(), size - 1);
                assertThat(slice.length()).isPositive();
            }
        }
    }
}
