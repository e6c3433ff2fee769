package io.stasis.cli;

import io.stasis.sdk.StasisApiException;
import io.stasis.sdk.StasisJson;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Deletes several things one by one, going on past failures: prints each deleted id (or, with
 * {@code --json}, one {@code {"items": [{"id", "deleted", "error"?}]}}), and exits with the code of the
 * first failure ({@link ExitCodes#of}), e.g. 4 when it was not found.
 */
final class DeleteEach {
    private DeleteEach() {
    }

    static int run(StasisCommand root, List<String> ids, Consumer<String> delete) {
        var results = new ArrayList<Map<String, Object>>();
        int code = ExitCodes.OK;
        for (String id : ids) {
            var result = new LinkedHashMap<String, Object>();
            result.put("id", id);
            try {
                delete.accept(id);
                result.put("deleted", true);
                if (!root.json()) root.io().out().println(id);
            } catch (StasisApiException e) {
                if (code == ExitCodes.OK) code = ExitCodes.of(e);
                result.put("deleted", false);
                result.put("error", Map.of("code", e.code(), "message", e.errorMessage()));
                if (!root.json()) {
                    root.io().out().flush();
                    root.io().err().println("error: " + e.code() + ": " + e.errorMessage());
                }
            }
            results.add(result);
        }
        if (root.json()) root.io().out().println(StasisJson.write(Map.of("items", results)));
        return code;
    }
}
