package io.stasis.cli;

import io.stasis.sdk.BlobGcReport;
import io.stasis.sdk.StasisJson;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis blobs status|gc}: the blob store shared by instances, and its garbage collection (root key). */
@Command(name = "blobs", mixinStandardHelpOptions = true,
        description = {"The blob store that durable checkpoints and volume syncs go to (root key only)."},
        subcommands = {BlobsCommand.Status.class, BlobsCommand.Gc.class})
final class BlobsCommand extends CommandGroup {
    @ParentCommand
    StasisCommand root;

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = {"What the store holds (it is listed: a scan), the locks of the instances sharing it, the last collection here."})
    static final class Status implements Callable<Integer> {
        @ParentCommand
        BlobsCommand parent;

        @Override
        public Integer call() {
            var root = parent.root;
            var status = root.client().blobs().status();
            if (root.json()) {
                root.io().out().println(StasisJson.write(status));
                return ExitCodes.OK;
            }
            var out = root.io().out();
            out.println("holder:      " + status.holder());
            out.println("stored:      " + HumanFormat.size(status.usage().storedBytes()) + " in " + status.usage().chunks() + " chunks, "
                    + status.usage().manifests() + " streams");
            out.println("gc every:    " + (status.gcInterval() == null ? "never (on demand only)" : status.gcInterval()));
            out.println("last gc:     " + (status.lastGc() == null ? "none since the service started" : summary(status.lastGc())));
            if (!status.locks().isEmpty()) {
                var table = Table.withHeaders("HOLDER", "KIND", "WRITTEN", "STALE");
                for (var lock : status.locks())
                    table.row(lock.holder(), lock.kind(), HumanFormat.time(lock.lastModified()), lock.stale() ? "yes" : "no");
                out.print(table.render());
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "gc", mixinStandardHelpOptions = true,
            description = {"Collect the store's garbage now: the streams no durable checkpoint or volume sync names, and their chunks.",
                    "Refused (conflict, nothing deleted) while another instance uploads to or collects in the store."})
    static final class Gc implements Callable<Integer> {
        @ParentCommand
        BlobsCommand parent;

        @Override
        public Integer call() {
            var root = parent.root;
            var report = root.client().blobs().gc();
            root.io().out().println(root.json() ? StasisJson.write(report) : summary(report));
            return ExitCodes.OK;
        }
    }

    /** {@code freed 2.0 MiB: 2 streams, 9 chunks deleted; 6 streams, 48 chunks kept (1 spared) in 12ms}. */
    static String summary(BlobGcReport r) {
        return "freed " + HumanFormat.size(r.bytesFreed()) + ": " + r.manifestsDeleted() + " streams, " + r.chunksDeleted()
                + " chunks deleted; " + r.manifestsKept() + " streams, " + r.chunksKept() + " chunks kept (" + r.chunksSpared()
                + " spared) in " + HumanFormat.duration(Duration.ofMillis(r.tookMs()));
    }
}
