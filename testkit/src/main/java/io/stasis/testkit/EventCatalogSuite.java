package io.stasis.testkit;

import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.events.Event;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.Catalog;
import io.stasis.core.tenant.TenantId;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * What every {@link Catalog} must do with events, as the SQLite catalog does it: increasing ids,
 * data as JSON gives it back, and who sees which. A backend's test extends this and supplies a
 * fresh, empty catalog per test.
 */
public abstract class EventCatalogSuite extends CatalogSuiteBase<Catalog> {

    // --- events ---

    @Test
    void appendGivesIncreasingIdsAndReturnsWhatReadsBack() {
        var s = SandboxId.random();
        var first = catalog().appendEvent(new Event(0, T0, "lifecycle", Optional.of(s),
                Map.of("sandboxId", s.value(), "from", "running", "to", "paused", "reason", "idle"), Optional.of(TenantId.DEFAULT)));
        var second = catalog().appendEvent(new Event(999, T0.plusNanos(1), "checkpoint", Optional.empty(), Map.of(), Optional.empty()));

        assertThat(first.id()).isPositive();
        assertThat(second.id()).isGreaterThan(first.id()); // the id passed in is ignored
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.empty(), 10)).containsExactly(first, second);
        assertThat(catalog().eventsAfter(first.id(), Optional.empty(), Optional.empty(), 10)).containsExactly(second);
        assertThat(catalog().eventsAfter(second.id(), Optional.empty(), Optional.empty(), 10)).isEmpty();
        assertThat(catalog().lastEventId()).isEqualTo(second.id());
    }

    @Test
    void eventDataRoundTripsAsPlainJsonValues() {
        var nested = new LinkedHashMap<String, Object>();
        nested.put("null inside", null);
        nested.put("list", Arrays.asList(1L, "two", null, true, List.of(), Map.of("deep", -0.5)));
        var data = Map.<String, Object>of(
                "string", "héllo ✓ \"quoted\"\n",
                "long", Long.MAX_VALUE,
                "negative", Long.MIN_VALUE,
                "double", 0.1,
                "big double", 1.0e300,
                "whole double", 2.0,
                "true", true,
                "false", false,
                "nested", nested,
                "empty", Map.of());

        var appended = catalog().appendEvent(new Event(0, T0, "fork", Optional.empty(), data, Optional.empty()));

        assertThat(appended.data()).isEqualTo(data);
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.empty(), 1)).containsExactly(appended);
    }

    @Test
    void smallerIntegersAndFloatsInEventDataComeBackAsLongsAndDoubles() {
        var appended = catalog().appendEvent(new Event(0, T0, "error", Optional.empty(),
                Map.of("int", 5, "short", (short) 6, "byte", (byte) 7, "float", 0.5f, "list", List.of(8), "map", Map.of("n", 9)),
                Optional.empty()));

        var expected = Map.<String, Object>of("int", 5L, "short", 6L, "byte", 7L, "float", 0.5, "list", List.of(8L), "map", Map.of("n", 9L));
        assertThat(appended.data()).isEqualTo(expected);
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.empty(), 1).getFirst().data()).isEqualTo(expected);
    }

    @Test
    void eventDataJsonCannotHoldExactlyIsRefusedAndNothingIsStored() {
        var bad = new LinkedHashMap<Object, Object>();
        bad.put(1, "non-string key");
        for (Map<String, Object> data : List.<Map<String, Object>>of(
                Map.of("at", Instant.EPOCH),
                Map.of("nan", Double.NaN),
                Map.of("inf", Float.POSITIVE_INFINITY),
                Map.of("nested", Map.of("id", SandboxId.random())),
                Map.of("list", List.of(new BigDecimal("1.5"))),
                Map.of("map", bad))) {
            assertThatThrownBy(() -> catalog().appendEvent(new Event(0, T0, "error", Optional.empty(), data, Optional.empty())))
                    .as(data.toString()).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.empty(), 100)).isEmpty();
    }

    @Test
    void eventsFilterBySandboxAndStopAtTheLimit() {
        var a = SandboxId.random();
        var b = SandboxId.random();
        var ofA = new ArrayList<Event>();
        var everything = new ArrayList<Event>();
        for (int i = 0; i < 30; i++) {
            var sandbox = switch (i % 3) {
                case 0 -> Optional.of(a);
                case 1 -> Optional.of(b);
                default -> Optional.<SandboxId>empty();
            };
            var e = catalog().appendEvent(new Event(0, T0.plusSeconds(i), "lifecycle", sandbox, Map.of("i", (long) i),
                    sandbox.map(x -> TenantId.DEFAULT)));
            everything.add(e);
            if (sandbox.equals(Optional.of(a))) ofA.add(e);
        }

        assertThat(catalog().eventsAfter(0, Optional.of(a), Optional.empty(), 100)).containsExactlyElementsOf(ofA);
        assertThat(catalog().eventsAfter(0, Optional.of(a), Optional.empty(), 4)).containsExactlyElementsOf(ofA.subList(0, 4));
        assertThat(catalog().eventsAfter(ofA.get(3).id(), Optional.of(a), Optional.empty(), 4)).containsExactlyElementsOf(ofA.subList(4, 8));
        // A resume point need not be one of this sandbox's events.
        assertThat(catalog().eventsAfter(everything.get(10).id(), Optional.of(a), Optional.empty(), 100))
                .containsExactlyElementsOf(ofA.subList(4, 10));
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.empty(), 7)).containsExactlyElementsOf(everything.subList(0, 7));
        assertThat(catalog().eventsAfter(0, Optional.of(SandboxId.random()), Optional.empty(), 100)).isEmpty();
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.empty(), 0)).isEmpty();
        assertThatThrownBy(() -> catalog().eventsAfter(0, Optional.empty(), Optional.empty(), -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aTenantSeesItsOwnEventsAndThoseOfNoSandboxInIdOrder() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var sandboxOfA = SandboxId.random();
        var sandboxOfB = SandboxId.random();
        var seenByA = new ArrayList<Event>();
        var everything = new ArrayList<Event>();
        for (int i = 0; i < 15; i++) {
            var event = switch (i % 3) {
                case 0 -> new Event(0, T0, "lifecycle", Optional.of(sandboxOfA), Map.of("i", (long) i), Optional.of(a));
                case 1 -> new Event(0, T0, "lifecycle", Optional.of(sandboxOfB), Map.of("i", (long) i), Optional.of(b));
                default -> new Event(0, T0, "error", Optional.empty(), Map.of("i", (long) i), Optional.empty());
            };
            var appended = catalog().appendEvent(event);
            everything.add(appended);
            if (appended.visibleTo(a)) seenByA.add(appended);
        }
        // About a sandbox whose tenant was unknown when it was recorded (its record already gone): nobody's.
        var orphan = catalog().appendEvent(new Event(0, T0, "network.denied", Optional.of(SandboxId.random()), Map.of(), Optional.empty()));
        assertThat(orphan.visibleTo(a)).isFalse();

        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.of(a), 100)).containsExactlyElementsOf(seenByA);
        assertThat(seenByA).extracting(Event::tenant).containsOnly(Optional.of(a), Optional.empty()).hasSize(10);
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.of(a), 3)).containsExactlyElementsOf(seenByA.subList(0, 3));
        assertThat(catalog().eventsAfter(seenByA.get(3).id(), Optional.empty(), Optional.of(a), 100))
                .containsExactlyElementsOf(seenByA.subList(4, seenByA.size()));
        // A tenant with no events still sees those of no sandbox, and not the orphan.
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.of(TenantId.random()), 100))
                .containsExactlyElementsOf(everything.stream().filter(e -> e.sandbox().isEmpty()).toList());
        // With a sandbox too: another tenant's sandbox shows nothing.
        assertThat(catalog().eventsAfter(0, Optional.of(sandboxOfA), Optional.of(a), 100))
                .containsExactlyElementsOf(seenByA.stream().filter(e -> e.sandbox().isPresent()).toList());
        assertThat(catalog().eventsAfter(0, Optional.of(sandboxOfB), Optional.of(a), 100)).isEmpty();
        everything.add(orphan);
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.empty(), 100)).containsExactlyElementsOf(everything);
    }

    @Test
    void concurrentAppendsGetDistinctIdsInCommitOrder() throws Exception {
        var appended = runConcurrently(IntStream.range(0, 50).<Callable<Object>>mapToObj(i -> () ->
                catalog().appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of("i", (long) i), Optional.empty()))).toList());

        var byId = appended.stream().map(Event.class::cast).sorted(Comparator.comparingLong(Event::id)).toList();
        assertThat(byId).extracting(Event::id).doesNotHaveDuplicates();
        assertThat(catalog().eventsAfter(0, Optional.empty(), Optional.empty(), 100)).containsExactlyElementsOf(byId);
    }
}
