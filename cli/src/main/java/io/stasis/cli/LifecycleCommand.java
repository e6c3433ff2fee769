package io.stasis.cli;

import io.stasis.sdk.LifecyclePolicy;
import io.stasis.sdk.LifecycleUpdate;
import io.stasis.sdk.Sandbox;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis lifecycle ID [options]}: changes the named fields of the idle policy, then shows it. */
@Command(name = "lifecycle", mixinStandardHelpOptions = true,
        description = {"Show or change a sandbox's idle policy.",
                "Each option changes one setting and leaves the others as they are; with none, shows the policy. "
                        + "Durations: 500ms, 30s, 10m, 2h, 7d, or never."})
final class LifecycleCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Mixin
    LifecycleOptions options;

    @Override
    public Integer call() {
        LifecycleUpdate update = options.toUpdate();
        Sandbox sandbox = update.isEmpty()
                ? root.client().sandboxes().get(id)
                : root.client().sandboxes().updateLifecycle(id, update);
        if (root.json()) {
            root.printJson(sandbox);
            return ExitCodes.OK;
        }
        if (sandbox.lifecycle() == null) throw new CommandFailure("the server reports no idle policy for " + id);
        root.io().out().print(render(sandbox.lifecycle()));
        return ExitCodes.OK;
    }

    static String render(LifecyclePolicy p) {
        return Table.withoutHeaders()
                .row("PAUSE AFTER IDLE", HumanFormat.duration(p.pauseAfterIdle()))
                .row("STANDBY AFTER IDLE", HumanFormat.duration(p.standbyAfterIdle()))
                .row("HIBERNATE AFTER IDLE", HumanFormat.duration(p.hibernateAfterIdle()))
                .row("STOP AFTER IDLE", HumanFormat.duration(p.stopAfterIdle()))
                .row("DELETE AFTER IDLE", HumanFormat.duration(p.deleteAfterIdle()))
                .row("MAX AGE", HumanFormat.maxAge(p))
                .row("AUTO RESUME", p.autoResume())
                .render();
    }
}
