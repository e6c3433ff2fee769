package io.stasis.core.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * A client that leaves at random points and comes back from the last offsets it saw gets every
 * byte exactly once, in order, per stream; output dropped meanwhile (to bound its size) is
 * reported as a range, never passed on as the zeros it reads as.
 */
class OutputResumePropertyTest {

    sealed interface Step permits Write, Drop, Visit {
    }

    /** The process writes {@code bytes} (never 0, so that a leaked hole shows) to a stream. */
    record Write(OutputKind kind, int bytes) implements Step {
    }

    /** The output limiter keeps only the last {@code keep} bytes of a stream. */
    record Drop(OutputKind kind, int keep) implements Step {
    }

    /** A client connects from its offsets, takes at most {@code events} chunks, and leaves. */
    record Visit(int events) implements Step {
    }

    @Property(tries = 300)
    void everyByteOnceAcrossReconnectsAndDrops(@ForAll("scenarios") List<Step> steps) {
        var process = new FakeOutputFiles();
        var client = new Client();
        for (var step : steps) {
            switch (step) {
                case Write w -> process.write(w.kind(), w.bytes());
                case Drop d -> process.keepLast(d.kind(), d.keep());
                case Visit v -> client.visit(process, v.events());
            }
        }
        client.visit(process, Integer.MAX_VALUE);
        for (var kind : OutputKind.values()) {
            byte[] written = process.written(kind);
            byte[] seen = client.seen.get(kind).toByteArray();
            assertThat(seen.length).as("every offset seen or reported dropped, once").isEqualTo(written.length);
            for (int i = 0; i < written.length; i++) {
                if (seen[i] == 0) assertThat(client.wasDropped(kind, i)).as("offset %d of %s", i, kind).isTrue();
                else assertThat(seen[i]).as("offset %d of %s", i, kind).isEqualTo(written[i]);
            }
        }
    }

    @Provide
    Arbitrary<List<Step>> scenarios() {
        Arbitrary<OutputKind> kinds = Arbitraries.of(OutputKind.class);
        Arbitrary<Step> write = kinds.flatMap(k -> Arbitraries.integers().between(1, 9000).map(n -> new Write(k, n)));
        Arbitrary<Step> drop = kinds.flatMap(k -> Arbitraries.integers().between(0, 12000).map(n -> new Drop(k, n)));
        Arbitrary<Step> visit = Arbitraries.integers().between(0, 4).map(Visit::new);
        return Arbitraries.frequencyOf(
                Tuple.of(5, write), Tuple.of(1, drop), Tuple.of(3, visit))
                .list().ofMaxSize(60);
    }

    /** What the client holds: per stream, its bytes by offset (zeros where it was told of a drop). */
    static final class Client {
        final Map<OutputKind, ByteArrayOutputStream> seen = new EnumMap<>(Map.of(
                OutputKind.STDOUT, new ByteArrayOutputStream(), OutputKind.STDERR, new ByteArrayOutputStream()));
        final Map<OutputKind, List<long[]>> dropped = new EnumMap<>(Map.of(
                OutputKind.STDOUT, new ArrayList<>(), OutputKind.STDERR, new ArrayList<>()));

        void visit(FakeOutputFiles process, int maxEvents) {
            var listener = new ExecListener() {
                int events;

                @Override
                public void output(OutputKind stream, byte[] data, long offsetAfter) {
                    if (events >= maxEvents) return; // gone: the pump's later calls reach nobody
                    events++;
                    var out = seen.get(stream);
                    assertThat(offsetAfter).as("offsets exact").isEqualTo(out.size() + data.length);
                    out.writeBytes(data);
                }

                @Override
                public void dropped(OutputKind stream, long from, long to) {
                    if (events >= maxEvents) return;
                    events++;
                    var out = seen.get(stream);
                    assertThat(from).isEqualTo(out.size());
                    dropped.get(stream).add(new long[]{from, to});
                    out.writeBytes(new byte[(int) (to - from)]);
                }
            };
            // a client that leaves mid-way resumes from what it kept, as with Last-Event-ID
            var pump = new OutputPump(process.handle(), listener, 0, seen.get(OutputKind.STDOUT).size(), seen.get(OutputKind.STDERR).size());
            pump.drainAll();
        }

        boolean wasDropped(OutputKind kind, long offset) {
            return dropped.get(kind).stream().anyMatch(r -> offset >= r[0] && offset < r[1]);
        }
    }
}
