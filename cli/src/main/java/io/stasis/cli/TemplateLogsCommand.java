package io.stasis.cli;

import io.stasis.sdk.StasisJson;
import io.stasis.sdk.TemplateBuildException;
import io.stasis.sdk.TemplateLog;
import io.stasis.sdk.Templates;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis template logs [-f] NAME}: a template build's output. */
@Command(name = "logs", mixinStandardHelpOptions = true,
        description = {"Print the output of a template's latest build on stdout: each step's header (# step 2/5: RUN make) "
                + "and what its command wrote. The server keeps the last 4 MiB of it, for builds since it started.",
                "With --follow, keep printing as the build goes on, then exit 0 when the template is ready and 1 when the build "
                        + "failed. --json prints what was read as one object {start, output, next, done}; with --follow, one such "
                        + "object per line as it comes."})
final class TemplateLogsCommand implements Callable<Integer> {
    @ParentCommand
    TemplateCommand parent;

    @Option(names = {"-f", "--follow"}, description = "Keep printing until the build ends; exit 1 if it failed.")
    boolean follow;

    @Option(names = "--offset", paramLabel = "BYTES", description = "Start here (the next of an earlier --json) instead of at the beginning.")
    long offset;

    @Parameters(index = "0", paramLabel = "NAME", description = "Template name.")
    String name;

    @Override
    public Integer call() {
        if (offset < 0) throw new UsageException("--offset must not be negative, was " + offset);
        var root = parent.root;
        Templates templates = root.client().templates();
        if (!follow) {
            TemplateLog all = readAll(templates);
            if (root.json()) {
                root.printJson(all);
            } else {
                root.io().out().print(all.output());
            }
            return ExitCodes.OK;
        }
        long[] at = {offset};
        templates.followLogs(name, offset, log -> {
            if (root.json()) {
                root.io().out().println(StasisJson.writeLine(log));
            } else {
                printDropped(root.io(), at[0], log);
                root.io().out().print(log.output());
            }
            root.io().out().flush();
            at[0] = log.next();
        });
        try {
            templates.awaitBuild(name, null); // it has ended: this says how
            return ExitCodes.OK;
        } catch (TemplateBuildException failed) {
            root.io().err().println("error: " + failed.getMessage().lines().findFirst().orElse(""));
            return ExitCodes.ERROR;
        }
    }

    /** The output there is now from {@code offset}, read in the server's pieces and joined. */
    private TemplateLog readAll(Templates templates) {
        var output = new StringBuilder();
        TemplateLog first = null;
        long at = offset;
        while (true) {
            TemplateLog log = templates.logs(name, at);
            if (first == null) first = log;
            printDropped(parent.root.io(), at, log);
            output.append(log.output());
            boolean caughtUp = log.output().isEmpty() && log.next() == at;
            at = log.next();
            if (log.done() || caughtUp) return new TemplateLog(first.start(), output.toString(), at, log.done());
        }
    }

    /** Says on stderr that the server no longer had the bytes between where we asked and where it started. */
    static void printDropped(CliIo io, long asked, TemplateLog log) {
        long dropped = log.droppedAfter(asked);
        if (dropped == 0) return;
        io.out().flush();
        io.err().println("stasis: " + HumanFormat.size(dropped) + " of the build's output (bytes " + asked + " to " + log.start()
                + ") were dropped by the server, which keeps the last part of it");
    }
}
