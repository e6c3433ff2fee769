package io.stasis.templates;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.util.LinkedHashMap;
import java.util.Map;

/** The {@code runtime_failed} errors of this module's tools, each naming its step. */
final class Failures {
    private Failures() {
    }

    static StasisException tool(String step, String problem, Map<String, ?> extra, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", step);
        details.putAll(extra);
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed: " + problem, details, cause);
    }

    static StasisException tool(String step, String problem) {
        return tool(step, problem, Map.of(), null);
    }
}
