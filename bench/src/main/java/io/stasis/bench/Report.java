package io.stasis.bench;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything one run produced.
 *
 * @param machine  where and when it ran
 * @param options  how it was asked to run
 * @param counts   the iteration counts it used (scaled)
 * @param figures  every figure, floors linked
 * @param details  raw readings per scenario
 * @param errors   scenarios that failed, with why; empty on a clean run
 * @param duration how long the whole run took
 */
public record Report(MachineFacts machine, Options options, Options.Counts counts, List<Figure> figures,
                     Map<String, Map<String, Object>> details, Map<String, String> errors, Duration duration) {
    public Report {
        figures = List.copyOf(figures);
        // Insertion order is scenario order, which the JSON keeps.
        details = Collections.unmodifiableMap(new LinkedHashMap<>(details));
        errors = Collections.unmodifiableMap(new LinkedHashMap<>(errors));
    }

    public boolean failed() {
        return !errors.isEmpty();
    }
}
