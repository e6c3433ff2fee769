package io.stasis.cli;

import io.stasis.sdk.StasisApiException;
import io.stasis.sdk.StasisJson;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis rm-checkpoint CKPT...}: deletes each; one failure does not stop the others. */
@Command(name = "rm-checkpoint", mixinStandardHelpOptions = true,
        description = {"Delete checkpoints.",
                "Sandboxes forked from them keep their files. Prints each deleted id; goes on past failures "
                        + "and exits 1 if any."})
final class RmCheckpointCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(arity = "1..*", paramLabel = "CKPT", description = "Checkpoint ids (ckpt_...).")
    List<String> ids = new ArrayList<>();

    @Override
    public Integer call() {
        var results = new ArrayList<Map<String, Object>>();
        boolean failed = false;
        for (String id : ids) {
            var result = new LinkedHashMap<String, Object>();
            result.put("id", id);
            try {
                root.client().checkpoints().delete(id);
                result.put("deleted", true);
                if (!root.json()) root.io().out().println(id);
            } catch (StasisApiException e) {
                failed = true;
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
        return failed ? ExitCodes.ERROR : ExitCodes.OK;
    }
}
