package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.core.error.StasisException;
import io.stasis.core.template.BuildStep;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;

/**
 * The {@code steps} of {@code POST /v1/templates}: each an object with exactly one of {@code run}
 * (a shell command, with an optional {@code timeoutMs}), {@code env}, {@code workdir}, {@code user}
 * or {@code copy} ({@code {"src", "dest"}}).
 */
final class BuildSteps {
    private static final Set<String> KINDS = Set.of("run", "env", "workdir", "user", "copy");

    private BuildSteps() {
    }

    static List<BuildStep> read(JsonNode steps) {
        if (steps == null || steps.isNull()) return List.of();
        if (!steps.isArray()) throw StasisException.invalid("steps", "must be an array of steps");
        var out = new ArrayList<BuildStep>();
        for (int i = 0; i < steps.size(); i++) out.add(read(steps.get(i), "steps[" + i + "]"));
        return out;
    }

    private static BuildStep read(JsonNode step, String field) {
        if (step == null || !step.isObject()) throw StasisException.invalid(field, "must be an object such as {\"run\": \"apt-get install -y git\"}");
        var kinds = new ArrayList<String>();
        step.fieldNames().forEachRemaining(name -> {
            if (KINDS.contains(name)) kinds.add(name);
            else if (!name.equals("timeoutMs")) throw StasisException.invalid(field + "." + name, "is not a step field (one of " + KINDS + ")");
        });
        if (kinds.size() != 1) throw StasisException.invalid(field, "must have exactly one of " + KINDS + ", had " + kinds);
        String kind = kinds.getFirst();
        if (step.has("timeoutMs") && !kind.equals("run")) throw StasisException.invalid(field + ".timeoutMs", "applies to run steps only");
        JsonNode value = step.get(kind);
        return switch (kind) {
            case "run" -> step.has("timeoutMs")
                    ? new BuildStep.Run(text(value, field + ".run"), Duration.ofMillis(positiveLong(step.get("timeoutMs"), field + ".timeoutMs")))
                    : new BuildStep.Run(text(value, field + ".run"));
            case "env" -> {
                if (!value.isObject()) throw StasisException.invalid(field + ".env", "must be an object of strings");
                var vars = new LinkedHashMap<String, String>();
                value.fields().forEachRemaining(e -> vars.put(e.getKey(), text(e.getValue(), field + ".env." + e.getKey())));
                yield new BuildStep.Env(vars);
            }
            case "workdir" -> new BuildStep.Workdir(text(value, field + ".workdir"));
            case "user" -> new BuildStep.User(text(value, field + ".user"));
            default -> {
                if (!value.isObject()) throw StasisException.invalid(field + ".copy", "must be {\"src\": \"path in the context\", \"dest\": \"/path\"}");
                yield new BuildStep.Copy(text(value.get("src"), field + ".copy.src"), text(value.get("dest"), field + ".copy.dest"));
            }
        };
    }

    private static String text(JsonNode node, String field) {
        if (node == null || !node.isTextual()) throw StasisException.invalid(field, "must be a string");
        return node.asText();
    }

    private static long positiveLong(JsonNode node, String field) {
        if (node == null || !node.canConvertToLong() || node.asLong() <= 0) throw StasisException.invalid(field, "must be a positive integer");
        return node.asLong();
    }
}
