package io.stasis.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis forget ID PID...}: drops ended processes and their output; one failure does not stop the others. */
@Command(name = "forget", mixinStandardHelpOptions = true,
        description = {"Forget ended background processes: they leave ps, and their output is freed.",
                "A running process cannot be forgotten (exit 5): kill it first. Prints each forgotten pid; "
                        + "goes on past failures and exits with the first failure's code."})
final class ForgetCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "PID", description = "The processes' pids (stasis ps).")
    List<Long> pids = new ArrayList<>();

    @Override
    public Integer call() {
        var processes = root.client().sandboxes().processes(id);
        return DeleteEach.run(root, pids.stream().map(String::valueOf).toList(),
                pid -> processes.get(Long.parseLong(pid)).forget());
    }
}
