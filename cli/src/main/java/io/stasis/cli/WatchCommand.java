package io.stasis.cli;

import io.stasis.sdk.FileChange;
import io.stasis.sdk.FileWatch;
import io.stasis.sdk.StasisJson;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis watch ID PATH [-r]}: one line per change under a path, until interrupted. */
@Command(name = "watch", mixinStandardHelpOptions = true,
        description = {"Print changes to files under a path in a sandbox as they happen, until interrupted.",
                "One line per change: TYPE PATH, and for a move within the tree TYPE PATH <- FROM; "
                        + "TYPE is create, modify, delete or move (with --json: one JSON object per line).",
                "'watching PATH' on stderr says the watch is in place. When the kernel drops events (too many "
                        + "too fast) it prints 'overflow PATH' and exits with 1: rescan the tree."})
final class WatchCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Option(names = {"-r", "--recursive"}, description = "Also watch every directory below, including new ones.")
    boolean recursive;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "PATH", description = "A directory or file, as the sandbox sees it.")
    String path;

    @Override
    public Integer call() {
        PrintStream out = root.io().out();
        try (FileWatch watch = root.client().sandboxes().files(id).watch(path, recursive, change -> {
            out.println(root.json() ? StasisJson.writeLine(change) : line(change));
            out.flush();
        })) {
            // As inotifywait does: once this shows, every later change is reported.
            root.io().err().println("watching " + path + (recursive ? " and below" : ""));
            watch.await(null);
            if (watch.overflowed()) {
                root.io().err().println("error: events were lost under " + path + " (the kernel's queue overflowed); rescan it");
                return ExitCodes.ERROR;
            }
            return ExitCodes.OK;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ExitCodes.OK;
        }
    }

    /** {@code create /root/a.txt}, {@code move /root/b.txt <- /root/a.txt}. */
    static String line(FileChange change) {
        return change.kind().wireName() + " " + change.path() + (change.from() == null ? "" : " <- " + change.from());
    }
}
