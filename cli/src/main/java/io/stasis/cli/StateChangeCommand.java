package io.stasis.cli;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.Sandboxes;
import java.util.concurrent.Callable;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * What {@code pause}, {@code resume}, {@code hibernate}, {@code stop} and {@code start} share:
 * one call, then the new state on stdout ({@code --json}: the sandbox); slow ones draw a
 * {@link Progress} line meanwhile.
 */
abstract class StateChangeCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    /** The call this verb makes. */
    abstract Sandbox change(Sandboxes sandboxes, String idOrName);

    /** What the progress line says while a slow call runs ({@code hibernating}), or null for a quick one. */
    String progress() {
        return null;
    }

    @Override
    public Integer call() {
        Sandbox sandbox;
        try (var progress = progress() == null ? Progress.start(root) : Progress.ticking(root, progress() + " " + id)) {
            sandbox = change(root.client().sandboxes(), id);
        }
        if (root.json()) {
            root.printJson(sandbox);
        } else {
            root.io().out().println(sandbox.state());
        }
        return ExitCodes.OK;
    }
}
