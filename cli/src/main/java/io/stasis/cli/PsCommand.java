package io.stasis.cli;

import io.stasis.sdk.BackgroundProcess;
import io.stasis.sdk.ProcessInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis ps ID [PID...]}: a sandbox's background processes, oldest first, or the ones named. */
@Command(name = "ps", mixinStandardHelpOptions = true,
        description = {"List a sandbox's background processes: the running ones and the last 100 ended, oldest first.",
                "EXIT is the exit code (128+N and the signal's name when signal N ended it). "
                        + "With PIDs, only those (one that is not there: exit 4)."})
final class PsCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1..*", arity = "0..*", paramLabel = "PID", description = "Only these processes.")
    List<Long> pids = new ArrayList<>();

    @Override
    public Integer call() {
        var calls = root.client().sandboxes().processes(id);
        List<BackgroundProcess> processes = pids.isEmpty() ? calls.list() : pids.stream().map(calls::get).toList();
        return root.printList(processes, list -> render(list.stream().map(BackgroundProcess::info).toList()));
    }

    static String render(List<ProcessInfo> processes) {
        var table = Table.withHeaders("PID", "STATUS", "EXIT", "TAG", "STARTED", "CMD");
        for (ProcessInfo p : processes) {
            table.row(p.pid(), p.status(), exit(p), p.tag(), HumanFormat.time(p.startedAt()), HumanFormat.command(p.cmd()));
        }
        return table.render();
    }

    /** {@code 0}, {@code 143 (TERM)}, or null while it runs. */
    private static String exit(ProcessInfo p) {
        if (p.exitCode() == null) return null;
        return p.signal() == null ? p.exitCode().toString() : p.exitCode() + " (" + p.signal() + ")";
    }
}
