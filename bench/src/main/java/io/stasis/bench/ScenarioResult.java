package io.stasis.bench;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a scenario measured.
 *
 * @param figures its rows of the table
 * @param details raw readings worth keeping in the JSON (e.g. every MemAvailable reading)
 */
public record ScenarioResult(List<Figure> figures, Map<String, Object> details) {
    public ScenarioResult {
        figures = List.copyOf(figures);
        details = Collections.unmodifiableMap(new LinkedHashMap<>(details));
    }

    static ScenarioResult of(List<Figure> figures) {
        return new ScenarioResult(figures, Map.of());
    }
}
