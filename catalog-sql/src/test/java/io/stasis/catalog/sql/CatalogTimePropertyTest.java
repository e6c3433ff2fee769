package io.stasis.catalog.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** The stored time text must be exact and must sort as the instants do, or list order breaks. */
class CatalogTimePropertyTest {
    private static final long MIN_SECOND = Instant.parse("0000-01-01T00:00:00Z").getEpochSecond();
    private static final long MAX_SECOND = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();

    @Property
    void roundTripsExactly(@ForAll("instants") Instant instant) {
        assertThat(CatalogTime.parse(CatalogTime.format(instant))).isEqualTo(instant);
    }

    @Property
    void textOrderIsTimeOrder(@ForAll("instants") Instant a, @ForAll("instants") Instant b) {
        assertThat(Integer.signum(CatalogTime.format(a).compareTo(CatalogTime.format(b))))
                .isEqualTo(Integer.signum(a.compareTo(b)));
    }

    @Example
    void hasAFixedWidthAndAllNineFractionDigits() {
        assertThat(CatalogTime.format(Instant.EPOCH)).isEqualTo("1970-01-01T00:00:00.000000000Z");
        assertThat(CatalogTime.format(Instant.parse("2026-05-06T07:08:09.1Z"))).isEqualTo("2026-05-06T07:08:09.100000000Z");
    }

    @Example
    void refusesYearsThatWouldBreakTheOrder() {
        assertThatThrownBy(() -> CatalogTime.format(Instant.parse("+10000-01-01T00:00:00Z"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CatalogTime.format(Instant.parse("-0001-12-31T23:59:59Z"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Provide
    Arbitrary<Instant> instants() {
        var near = Arbitraries.longs().between(1_700_000_000L, 1_700_000_010L); // ties on the second are common
        var anywhere = Arbitraries.longs().between(MIN_SECOND, MAX_SECOND);
        var seconds = Arbitraries.oneOf(near, anywhere);
        var nanos = Arbitraries.oneOf(Arbitraries.of(0, 1, 999_999_999), Arbitraries.integers().between(0, 999_999_999));
        return Combinators.combine(seconds, nanos).as(Instant::ofEpochSecond);
    }
}
